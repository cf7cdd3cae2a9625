"""The class-wide engine: the three publishers' outcomes for **every** table of a multiset class at
once (our addition, so that the reproduction of paper 002's examples fits its time budget,
``docs/theory/choices.md#reproduction-budget``; ``docs/theory/disclosure-sets.md#algorithms``; the
strategies: ``#naive``, ``#inclusive``, ``#exclusive``; the outcomes: ``#worked-examples``).

Every disclosure set of paper 002 is a subset of a PER set, and every PER set of a table lies
in the table's **multiset class**: all distinct arrangements of its SA multiset over the n
rows (permuting values inside groups never changes the multiset). So after enumerating the
class once (453,600 tables for the running example), ``PER(g_j, s)`` is just "the tables whose
signature under ``g_j`` is ``s``", and every disclosure set is a mask over the class grouped by
signature. The engine then works level by level, with numpy over the whole class:

1. per level ``j``: each table's signature id (an exact int64 key per table, ``np.unique``),
   and the closed-form CHK on PER of each distinct signature;
2. **naive**: the first level whose PER passes;
3. **exclusive**: ``DS_excl(j, s)`` = the tables of signature ``s`` whose naive index is ``j`` (the
   key observation of ``docs/theory/disclosure-sets.md#exclusive``); per-person value counts of
   every such set by one bincount, CHK per signature; a table's exclusive outcome is its naive index
   if that set passes, else φ. The naive release is **unsafe** exactly when that set fails;
4. **inclusive**: ``alive_j`` = tables for which no earlier level released (``G_incl(X;
   g_1..g_{j-1}) = φ``); ``DS_incl(j, s)`` = alive tables of signature ``s``; CHK per signature;
   tables whose set passes are released at ``j`` and leave ``alive``.

No recursion and no loop over tables: this is the fast path and the oracle for the recursive
code of :mod:`.publishers` (they must agree, tested with hypothesis).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kerckhoffs.disclosure.chk import Chk
from kerckhoffs.disclosure.per import (
    DEFAULT_LIMIT,
    TooManyInstances,
    arrangements,
    multinomial,
    signatures,
)
from kerckhoffs.disclosure.sequence import GeneralizationSequence
from kerckhoffs.errors import ParameterError

NOTHING = -1
"""Released index meaning "release nothing" (φ) in :class:`ClassOutcomes` arrays."""

_KEY_BITS = 62


@dataclass(frozen=True, eq=False)
class Level:
    """One generalization over the class: ``signature`` (``int64 [M]``: each table's
    signature id), and per signature id: ``per_size``, ``per_passes`` (closed-form CHK on PER),
    ``inclusive_size`` / ``inclusive_passes`` (``DS_incl``) and ``exclusive_size`` /
    ``exclusive_passes`` (``DS_excl``, the naive adversary's knowledge)."""

    signature: np.ndarray
    per_size: np.ndarray
    per_passes: np.ndarray
    inclusive_size: np.ndarray
    inclusive_passes: np.ndarray
    exclusive_size: np.ndarray
    exclusive_passes: np.ndarray


@dataclass(frozen=True, eq=False)
class ClassOutcomes:
    """Outcomes over every distinct table with the given SA multiset.

    ``tables``: ``int8/int16 [M, n]`` (lexicographic order); ``inclusive``, ``exclusive``,
    ``naive``: ``int8 [M]`` released index (0-based) or :data:`NOTHING` (-1);
    ``naive_unsafe``: ``bool [M]``, the naive release fails CHK on the adversary's true
    knowledge; ``levels``: the per-generalization detail (:class:`Level`).
    """

    tables: np.ndarray
    inclusive: np.ndarray
    exclusive: np.ndarray
    naive: np.ndarray
    naive_unsafe: np.ndarray
    levels: tuple[Level, ...]

    def joint_counts(self) -> dict[tuple[int, int, int], int]:
        """``{(inclusive, exclusive, naive): number of tables}`` (the exhaustive outcome table of
        ``docs/theory/disclosure-sets.md#worked-examples``;
        -1 = nothing)."""
        r = len(self.levels) + 1  # values -1..len-1, shifted to 0..len
        key = (self.inclusive.astype(np.int64) + 1) * r * r
        key += (self.exclusive.astype(np.int64) + 1) * r + self.naive.astype(np.int64) + 1
        counts = np.bincount(key, minlength=r**3)
        return {
            (k // (r * r) - 1, k // r % r - 1, k % r - 1): int(counts[k])
            for k in np.flatnonzero(counts).tolist()
        }

    def find(self, table: np.ndarray | Sequence[int]) -> int:
        """The position of ``table`` in :attr:`tables` (one-line ParameterError if absent)."""
        t = np.asarray(table)
        hit = np.flatnonzero((self.tables == t[None, :]).all(axis=1))
        if not hit.size:
            raise ParameterError("the table is not in this multiset class")
        return int(hit[0])


def class_tables(
    multiset_counts: np.ndarray | Sequence[int], limit: int = DEFAULT_LIMIT
) -> np.ndarray:
    """Every distinct arrangement of the SA multiset (value ``v`` ``counts[v]`` times) over the
    rows, lexicographic: ``[M, n]``, M the multinomial; :class:`TooManyInstances` past
    ``limit``, before enumerating."""
    counts = np.asarray(multiset_counts)
    if counts.ndim != 1 or counts.dtype.kind not in "iu" or (counts < 0).any():
        raise ParameterError("the multiset is one non-negative count per SA value")
    size = multinomial(counts)
    if size > limit:
        raise TooManyInstances(size, limit, "multiset class")
    small = np.int8 if counts.size <= 127 else np.int16
    return arrangements(counts, small)


def class_outcomes(
    seq: GeneralizationSequence,
    multiset_counts: np.ndarray | Sequence[int],
    chk: Chk,
    limit: int = DEFAULT_LIMIT,
) -> ClassOutcomes:
    """Enumerate the class of the multiset ``multiset_counts`` (value ``v`` occurring
    ``counts[v]`` times; ``sum = seq.n``) once and derive every table's naive, inclusive and
    exclusive outcome level by level (module docstring).

    >>> from kerckhoffs.disclosure.chk import PAPER_CHK
    >>> seq = GeneralizationSequence.from_labels([[0, 0, 1, 1], [0, 0, 0, 0]])
    >>> out = class_outcomes(seq, [2, 1, 1], PAPER_CHK)
    >>> out.tables.shape, sorted(out.joint_counts().items())
    ((12, 4), [((0, 0, 0), 8), ((1, 1, 1), 4)])
    """
    counts = np.asarray(multiset_counts)
    if counts.ndim == 1 and int(counts.sum()) != seq.n:
        raise ParameterError(f"the multiset has {int(counts.sum())} values for {seq.n} rows")
    tables = class_tables(counts, limit)
    m, n_sa = tables.shape[0], int(counts.size)
    big = tables.astype(np.int64)
    sig_ids: list[np.ndarray] = []
    per_pass: list[np.ndarray] = []
    per_sizes: list[np.ndarray] = []
    naive = np.full(m, NOTHING, dtype=np.int8)
    for j in range(len(seq)):
        ids, first = _signature_ids(seq, j, big, n_sa)
        sigs = signatures(seq, j, big[first], n_sa)
        sig_ids.append(ids)
        passes = np.asarray(chk.groups_pass(sigs), dtype=bool)
        per_pass.append(passes)
        per_sizes.append(np.bincount(ids, minlength=first.size))
        naive[(naive == NOTHING) & passes[ids]] = j
    exclusive = np.full(m, NOTHING, dtype=np.int8)
    inclusive = np.full(m, NOTHING, dtype=np.int8)
    unsafe = np.zeros(m, dtype=bool)
    alive = np.ones(m, dtype=bool)
    levels = []
    for j, ids in enumerate(sig_ids):
        u = per_pass[j].size
        at = naive == j
        # DS_excl(j, s): tables of signature s that no earlier PER check stopped (= naive == j
        # where PER(j, s) passes; defined for every s, as the paper's worked examples tabulate
        # it: docs/theory/disclosure-sets.md#worked-examples)
        before = (naive == NOTHING) | (naive >= j)
        ex_size, ex_counts = _grouped_counts(big, ids, before, u, n_sa)
        ex_ok = np.asarray(chk.people_pass(ex_counts), dtype=bool) & (ex_size > 0)
        released = at & ex_ok[ids]
        exclusive[released] = j
        unsafe |= at & ~ex_ok[ids]
        in_size, in_counts = _grouped_counts(big, ids, alive, u, n_sa)
        in_ok = np.asarray(chk.people_pass(in_counts), dtype=bool) & (in_size > 0)
        newly = alive & in_ok[ids]
        inclusive[newly] = j
        alive &= ~newly
        levels.append(Level(ids, per_sizes[j], per_pass[j], in_size, in_ok, ex_size, ex_ok))
    return ClassOutcomes(tables, inclusive, exclusive, naive, unsafe, tuple(levels))


def _grouped_counts(
    tables: np.ndarray, ids: np.ndarray, mask: np.ndarray, u: int, n_sa: int
) -> tuple[np.ndarray, np.ndarray]:
    """For the tables in ``mask`` grouped by signature id: the set sizes ``[u]`` and the
    per-person value counts ``[u, n, n_sa]`` (one bincount)."""
    n = tables.shape[1]
    sel = ids[mask]
    sizes = np.bincount(sel, minlength=u)
    cell = (sel[:, None] * n + np.arange(n, dtype=np.int64)[None, :]) * n_sa + tables[mask]
    counts = np.bincount(cell.ravel(), minlength=u * n * n_sa).reshape(u, n, n_sa)
    return sizes, counts


def _signature_ids(
    seq: GeneralizationSequence, j: int, tables: np.ndarray, n_sa: int
) -> tuple[np.ndarray, np.ndarray]:
    """Each table's signature id under ``g_j`` (``0..U-1``) and one table index per id.

    A group's multiset is its count vector, read as a base-``(|g|+1)`` number; the groups side
    by side in mixed radix give one exact int64 key per table while it fits 62 bits. Beyond
    that, ``np.unique`` over each group's sorted values does the same, slower.
    """
    groups = seq.members(j)
    bits = sum(n_sa * math.log2(rows.size + 1) for rows in groups)
    if bits <= _KEY_BITS:
        # group g's count vector in base |g|+1 is sum over its rows of (|g|+1)**value: exact
        # (every digit <= |g|), no sort; the groups side by side in mixed radix
        key = np.zeros(tables.shape[0], dtype=np.int64)
        for rows in groups:
            base = rows.size + 1
            powers = np.int64(base) ** np.arange(n_sa, dtype=np.int64)
            key = key * np.int64(base) ** n_sa + powers[tables[:, rows]].sum(axis=1)
        _, first, ids = np.unique(key, return_index=True, return_inverse=True)
    else:
        codes = [
            np.unique(np.sort(tables[:, rows], axis=1), axis=0, return_inverse=True)[1].ravel()
            for rows in groups
        ]
        _, first, ids = np.unique(
            np.stack(codes, axis=1), axis=0, return_index=True, return_inverse=True
        )
    return ids.ravel().astype(np.int64), first
