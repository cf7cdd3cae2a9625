"""Signatures and PER sets: every table consistent with a released generalization (paper 002
section 2: ``docs/theory/disclosure-sets.md#per``; our implementation: ``#signature``,
``#per-enumeration``).

A **possible instance** is one SA code per row (the ID/QI skeleton is public). The
**signature** of an instance under generalization ``i`` is what the release shows: each
group's SA multiset, here as a count matrix ``int64 [groups, n_sa]`` (row ``g`` = group ``g``'s
value counts), canonical because group ids and value codes are fixed. ``PER(G_i)`` is the set of
all distinct instances with that signature: the Cartesian product, over groups, of the
distinct arrangements of the group's multiset over its rows. Its size is a product of
multinomials, computed exactly as a Python int without enumerating.

Enumeration is bounded (``docs/theory/disclosure-sets.md#per-enumeration``, ``#edge-cases``): past
``limit`` instances it raises :class:`TooManyInstances` *before* building anything (fail closed).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from kerckhoffs.disclosure.sequence import GeneralizationSequence
from kerckhoffs.errors import ParameterError

DEFAULT_LIMIT = 1_000_000
"""Largest instance set enumerated by default (10^6; our bound:
``docs/theory/disclosure-sets.md#per-enumeration``)."""


def decimal_exponent(n: int) -> int:
    """``floor(log10(n))`` for ``n >= 1``, exact, without writing ``n`` in decimal (Python
    refuses to turn an int of more than 4,300 digits into a string, and a PER size on a real
    table has tens of thousands). An estimate from ``n.bit_length()``, corrected by comparing
    with powers of ten.

    >>> decimal_exponent(999), decimal_exponent(1000), decimal_exponent(2**20000)
    (2, 3, 6020)
    """
    if n < 1:
        raise ValueError(f"decimal_exponent needs n >= 1, got {n}")
    e = max(0, int((n.bit_length() - 1) * math.log10(2)))
    p = 10**e
    while p > n:
        e, p = e - 1, p // 10
    while p * 10 <= n:
        e, p = e + 1, p * 10
    return e


def magnitude(n: int) -> str:
    """An exact count for display: in full below 10^12 (``1,234,567``), else ``about 10^e``
    with ``e = floor(log10(n))`` (:func:`decimal_exponent`; a PER size can have tens of
    thousands of digits, which no message should print).

    >>> magnitude(144), magnitude(10**12), magnitude(2**20000)
    ('144', 'about 10^12', 'about 10^6020')
    """
    return f"{n:,}" if n < 10**12 else f"about 10^{decimal_exponent(n)}"


class TooManyInstances(ParameterError):
    """A set of possible instances is larger than the enumeration bound (an edge case of
    ``docs/theory/disclosure-sets.md#edge-cases``); the
    engine refuses instead of running out of memory or time."""

    def __init__(self, size: int, limit: int, what: str = "PER set") -> None:
        self.size = size
        self.limit = limit
        hint = " (raise limit= to allow it)" if size <= 10**9 else ""
        super().__init__(
            f"the {what} has {magnitude(size)} instances, more than the bound "
            f"{magnitude(limit)}: refusing to enumerate{hint}"
        )


def n_values(sa: np.ndarray) -> int:
    """The SA domain size the engine uses for ``sa``: its largest code + 1 (our choice,
    ``docs/theory/disclosure-sets.md#edge-cases``: values
    that do not occur never appear in any PER set, so the domain is not padded)."""
    return int(sa.max()) + 1 if sa.size else 0


def signature(
    seq: GeneralizationSequence, i: int, sa: np.ndarray | Sequence[int], n_sa: int | None = None
) -> np.ndarray:
    """The signature of the table ``sa`` under generalization ``i``: ``int64 [groups, n_sa]``
    (``sig(i, X)``: ``docs/theory/disclosure-sets.md#signature``). ``n_sa`` defaults to
    ``max(sa) + 1``.

    >>> seq = GeneralizationSequence.from_labels([[0, 0, 1, 1]])
    >>> signature(seq, 0, [1, 0, 1, 1]).tolist()
    [[1, 1], [0, 2]]
    """
    x = seq.check_sa(sa)
    k = n_values(x) if n_sa is None else int(n_sa)
    return signatures(seq, i, x[None, :], k)[0]


def signatures(seq: GeneralizationSequence, i: int, tables: np.ndarray, n_sa: int) -> np.ndarray:
    """The signatures of many tables at once: ``tables`` int ``[m, n]`` -> ``int64 [m, groups,
    n_sa]``, one bincount (no loop over tables)."""
    tables = np.asarray(tables)
    m = tables.shape[0]
    g = seq.groups(i)
    if m == 0:
        return np.zeros((0, g, n_sa), dtype=np.int64)
    cell = (seq[i][None, :] * n_sa + tables).astype(np.int64)
    cell += (np.arange(m, dtype=np.int64) * (g * n_sa))[:, None]
    return np.bincount(cell.ravel(), minlength=m * g * n_sa).reshape(m, g, n_sa)


def multinomial(counts: np.ndarray | Sequence[int]) -> int:
    """``(sum counts)! / prod(counts!)``, exact: the number of distinct arrangements of a
    multiset with these value counts."""
    return _multinomial(tuple(int(v) for v in np.asarray(counts).ravel()))


@lru_cache(maxsize=4096)
def _multinomial(counts: tuple[int, ...]) -> int:
    out, total = 1, 0
    for c in counts:
        total += c
        out *= math.comb(total, c)
    return out


def per_size(seq: GeneralizationSequence, i: int, sig: np.ndarray) -> int:
    """``|PER(G_i)|`` for the signature ``sig`` (``docs/theory/disclosure-sets.md#per``): the
    product over groups of ``|g|! / prod_v n_{g,v}!``, an exact Python int. The ``seq``/``i``
    arguments name the generalization the signature belongs to (its group sizes are checked against
    it).

    Running example (``docs/theory/disclosure-sets.md#worked-examples``): 16, 144 and 432 under g1,
    g2, g3.
    """
    return _per_size(_check_signature(seq, i, sig))


def _per_size(sig: np.ndarray) -> int:
    """The product of the rows' multinomials, each computed once per distinct multiset of
    counts: a multinomial does not depend on which value has which count, so the rows are
    sorted, cut to their nonzero counts and deduplicated first (one Python call per distinct
    group shape, not one per group and value: a 1,600-value table has 1,600 x 1,599 cells)."""
    if not sig.size:
        return 1
    r = -np.sort(-sig, axis=1)
    width = max(int((r > 0).sum(axis=1).max()), 1)
    rows, mult = np.unique(r[:, :width], axis=0, return_counts=True)
    return math.prod(
        _multinomial(tuple(row)) ** m for row, m in zip(rows.tolist(), mult.tolist(), strict=True)
    )


def multiset_permutations(counts: np.ndarray | Sequence[int]) -> np.ndarray:
    """Every distinct arrangement of the multiset with value counts ``counts`` (value ``v``
    repeated ``counts[v]`` times), in lexicographic order: ``int64 [arrangements, size]``
    (read-only; cached per count vector, since the same group multisets recur across the
    disclosure-set computations).
    """
    return _arrangements(tuple(int(c) for c in np.asarray(counts).ravel()))


@lru_cache(maxsize=4096)
def _arrangements(counts: tuple[int, ...]) -> np.ndarray:
    return arrangements(np.array(counts, dtype=np.int64))


def arrangements(counts: np.ndarray, dtype: type = np.int64) -> np.ndarray:
    """:func:`multiset_permutations` uncached, built in ``dtype`` (the class-wide engine builds
    hundreds of thousands of tables in int8).

    Built position by position, vectorized over the partial arrangements (the loop runs over
    positions and values, never over arrangements).
    """
    c = np.asarray(counts, dtype=np.int64)
    size = int(c.sum())
    prefix: np.ndarray = np.zeros((1, 0), dtype=dtype)
    left = c[None, :].copy()
    for _ in range(size):
        rows, vals = np.nonzero(left > 0)  # row-major: lexicographic order preserved
        prefix = np.concatenate([prefix[rows], vals[:, None].astype(dtype)], axis=1)
        left = left[rows]
        left[np.arange(rows.size), vals] -= 1
    prefix.setflags(write=False)
    return prefix


def enumerate_per(
    seq: GeneralizationSequence, i: int, sig: np.ndarray, limit: int = DEFAULT_LIMIT
) -> np.ndarray:
    """Every distinct table with signature ``sig`` under generalization ``i`` (``PER(i, sig)``:
    ``docs/theory/disclosure-sets.md#per-enumeration``): ``int64 [instances, n]``, one row per
    instance, each SA code in its row position. Raises :class:`TooManyInstances` when ``|PER|``
    exceeds ``limit``, before any enumeration (fail closed).

    The instances are the Cartesian product of each group's arrangements, assembled with
    ``repeat``/``tile`` (no loop over instances).
    """
    return enumerate_checked(seq, i, _check_signature(seq, i, sig), limit)


def enumerate_checked(
    seq: GeneralizationSequence, i: int, sig: np.ndarray, limit: int = DEFAULT_LIMIT
) -> np.ndarray:
    """:func:`enumerate_per` for a signature known to be valid (the engine's own signatures:
    no re-validation on the recursion's hot path)."""
    size = _per_size(sig)
    if size > limit:
        raise TooManyInstances(size, limit)
    out = np.empty((size, seq.n), dtype=np.int64)
    inner = size
    for rows, counts in zip(seq.members(i), sig.tolist(), strict=True):
        arr = _arrangements(tuple(counts))
        k = arr.shape[0]
        inner //= k
        # the first group varies slowest: block j of the product uses arrangement j // inner
        block = np.repeat(arr, inner, axis=0)
        out[:, rows] = np.tile(block, (size // (k * inner), 1))
    return out


def _check_signature(seq: GeneralizationSequence, i: int, sig: np.ndarray) -> np.ndarray:
    if not 0 <= i < len(seq):
        raise ParameterError(f"generalization index {i} outside 0..{len(seq) - 1}")
    s = np.asarray(sig)
    if s.ndim != 2 or s.shape[0] != seq.groups(i) or s.dtype.kind not in "iu":
        raise ParameterError(
            f"a signature of {seq.names[i]} is an int count matrix with {seq.groups(i)} rows "
            f"(one per group), got shape {s.shape}"
        )
    sizes = np.bincount(seq[i], minlength=seq.groups(i))
    if (s < 0).any() or not np.array_equal(s.sum(axis=1), sizes):
        raise ParameterError(
            f"the signature's group totals {s.sum(axis=1).tolist()} are not {seq.names[i]}'s "
            f"group sizes {sizes.tolist()}"
        )
    return s.astype(np.int64, copy=False)
