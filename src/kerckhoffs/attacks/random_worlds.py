"""The random-worlds auditor: does knowing the algorithm change what a release reveals?

Paper 000 (Jin, Zhang, Das; spec ``asap.md`` 1.6, 1.7, 1.10 item 1) calls a release
*algorithm-safe* (ASAP, Definition 5) when every row's SA posterior is the same for an
adversary who does not know the algorithm (the *naive* world) and one who does (the *smart*
world). This module decides it exactly, with :class:`fractions.Fraction`, on small tables
(up to about 10 rows):

1. **Release.** Run the algorithm once on the table: the observed release ``T*``.
2. **Naive world** (spec 1.6, ambiguity A2: a world is an assignment row -> SA value, every
   row's QI known). ``support="groups"`` (default): every distinct arrangement of each
   published group's published SA multiset over the group's rows; the worlds are the product
   over groups. ``support="frame"``: every arrangement of the table's published SA multiset
   over all rows that some bijection rows <-> published records explains (each record's QI
   cells cover its row's QI, same SA): for generalizations where the adversary cannot tell
   which rows sit in which group (spec 6 item 12, Tables 1 and 5). The worlds are then
   filtered by the external knowledge, a predicate ``world -> bool`` over the candidate's SA
   codes (spec 1.5; the default, "every original QI known", keeps them all). The naive
   posterior of row ``r`` is the share of surviving worlds giving ``r`` each value.
3. **Smart world.** Re-run the algorithm on each surviving candidate (the table with its SA
   column replaced) and weight the candidate by ``Pr[A(candidate) = T*]``: 0 or 1 for a
   deterministic algorithm, the exact output probability for a randomized one (below).
4. **Verdict.** The rows whose posteriors differ; ASAP iff none; l-diversity in the smart
   view iff no row's smart posterior of a bounded value exceeds ``1/l``.

**When two releases are the same** (spec 1.10 item 1): ``compare="partition"`` (default) --
the same rows grouped together and, per group, the same multiset of *published* SA values
(so MASK-style perturbed counts count) and the same published cells when the algorithm
chooses its cells (``Release.cells``); with fixed QIs this is exactly the published frames
(generalized cells are a function of the rows of the group; the files are written sorted by
group and SA, so nothing else is visible). ``compare="frame"``: the multiset of published
records (group cells, published SA), for ``support="frame"``.

**Randomized algorithms: exact enumeration of the random choices** (spec 1.10 item 1,
footnote 3 of the paper). Every algorithm of the project draws its randomness from
``kerckhoffs.randomness.generator(seed)``, which passes through any object with a Generator's
``integers`` and ``random`` methods. For each candidate the auditor passes an
:class:`EnumeratingRNG` in as the algorithm's ``seed``: a stand-in for
:class:`numpy.random.Generator` that decomposes every draw (``integers``, ``choice``,
``permutation``, ``shuffle``, ``random``) into elementary uniform choices among ``k`` outcomes
and explores every branch depth-first, each leaf with its exact probability (the product of
``1/k``). Nothing process-wide is replaced to see the draws (STYLE.md). An algorithm that
calls ``generator(seed)`` more than once gets the same enumerating object each time, so its
draws are enumerated as independent: the distribution of a run with fresh OS randomness
(``seed=None``), the only one that matters for publishing (DESIGN.md section 5). Seeds are
not enumerated: no finite set of seeds is provably exhaustive for numpy's generators.
``random(size)`` is enumerated as a uniformly random *ranking* of the ``size`` values
(returned as distinct floats in ``(0, 1)``), exact for the way the project uses it (random
sort keys and tie breaks); a scalar ``random()`` compared with a threshold cannot be
enumerated and raises.

**A known seed undoes the randomness** (paper 000 section 7; DESIGN.md section 5). With
``known_seed`` the adversary knows the algorithm's seed: the observed release is the
algorithm's output with that seed, and every candidate is re-run with it, a deterministic
function again (weights 0 or 1, nothing enumerated). A randomized algorithm that is
algorithm-safe because of its random choice (the ++ variants' stratified pick-up) then leaks
like a deterministic one.

Branch counts grow with ``n!`` for a permutation of ``n`` rows, so known random primitives
are replaced during the audit by *distribution-identical* versions of minimal support:
Anatomy's row choice (:func:`kerckhoffs.algorithms.anatomy.anatomy_groups` with
``pick="random"`` permutes all rows and then keeps only each SA bucket's internal order) is
replaced by an independent uniform order inside each bucket, ``prod(b_i!)`` branches instead
of ``n!``; the residue placement is the original code with the enumerating generator. These
two swaps are module attributes of :mod:`kerckhoffs.algorithms` replaced for the duration of
:func:`enumerate_outcomes` only (the algorithms expose no hook to choose a minimal-support
primitive). Any other use of randomness is enumerated as is, within ``max_branches`` leaves
per candidate (:class:`AuditTooLarge` beyond).

Speed: candidates share the table's encoded QIs (only ``sa`` changes), the release of each
distinct candidate is computed once, and for deterministic algorithms no enumeration
machinery runs. An 8-row table with groups of at most 4 rows (at most 576 worlds) is decided
well under a second by the classic algorithms.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import math
from collections import Counter
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from kerckhoffs.data.schema import Kind
from kerckhoffs.data.table import Table
from kerckhoffs.errors import ArgumentError, KerckhoffsError, ParameterError
from kerckhoffs.models.base import PrivacyModel
from kerckhoffs.randomness import check_seed
from kerckhoffs.release import Release, Scheme

__all__ = [
    "MAX_FUZZ_ROWS",
    "MAX_SA_VALUES",
    "AuditTooLarge",
    "EnumeratingRNG",
    "Knowledge",
    "Trial",
    "WorldsAudit",
    "all_of",
    "at_least",
    "audit_worlds",
    "check_seed",
    "diversity_bound",
    "enumerate_outcomes",
    "fuzz",
    "naive_worlds",
    "random_table",
    "random_worlds",
    "release_key",
    "row_not",
    "with_sa",
]

Knowledge = Callable[[np.ndarray], bool]
"""External knowledge: True when a candidate world (SA code per row) is consistent with it."""

RunFn = Callable[..., Release]


class AuditTooLarge(KerckhoffsError):
    """The table has too many candidate worlds or random branches to enumerate."""


# -- external knowledge helpers (spec 1.5) ---------------------------------------------------------
def row_not(row: int, value: int) -> Knowledge:
    """ "Row ``row`` does not have SA code ``value``" (the set ``S_0`` of unlikely values)."""
    return lambda world: int(world[row]) != value


def at_least(rows: Sequence[int], value: int, count: int) -> Knowledge:
    """ "At least ``count`` of ``rows`` have SA code ``value``" (a COUNT constraint)."""
    idx = np.asarray(rows, dtype=np.int64)
    return lambda world: int(np.count_nonzero(world[idx] == value)) >= count


def all_of(*preds: Knowledge) -> Knowledge:
    """The conjunction of several pieces of knowledge."""
    return lambda world: all(p(world) for p in preds)


# -- the enumerating generator ---------------------------------------------------------------------
class EnumeratingRNG:
    """A :class:`numpy.random.Generator` stand-in that replays one branch of a choice script.

    Each elementary draw is a uniform choice among ``k`` outcomes. The script fixes the
    outcome of the first draws; later draws take outcome 0 and extend the script.
    :func:`enumerate_outcomes` walks every script depth-first. Unsupported methods raise
    ``AttributeError`` (loud: unenumerated randomness would make the weights wrong).
    """

    def __init__(self, script: list[int] | None = None) -> None:
        self.script: list[int] = list(script or [])
        self.arity: list[int] = []
        self.pos = 0
        self.prob = Fraction(1)

    # elementary draw
    def _draw(self, k: int) -> int:
        k = int(k)
        if k <= 0:
            raise ValueError("EnumeratingRNG: a choice among no outcomes")
        if k == 1:
            return 0
        if self.pos < len(self.script):
            v = self.script[self.pos]
        else:
            v = 0
            self.script.append(0)
        self.arity.append(k)
        self.pos += 1
        self.prob /= k
        return v

    def _ranking(self, n: int) -> np.ndarray:
        """A uniformly random permutation of ``range(n)`` (Fisher-Yates, n - 1 draws)."""
        perm = list(range(n))
        for i in range(n - 1, 0, -1):
            j = self._draw(i + 1)
            perm[i], perm[j] = perm[j], perm[i]
        return np.asarray(perm, dtype=np.int64)

    # the Generator API the project uses
    def integers(
        self,
        low: int,
        high: int | None = None,
        size: int | tuple[int, ...] | None = None,
        dtype: Any = np.int64,
        endpoint: bool = False,
    ) -> Any:
        if high is None:
            low, high = 0, low
        lo = np.asarray(low, dtype=np.int64)
        hi = np.asarray(high, dtype=np.int64) + (1 if endpoint else 0)
        if size is None and lo.ndim == 0 and hi.ndim == 0:
            return np.dtype(dtype).type(int(lo) + self._draw(int(hi - lo)))
        shape = np.broadcast_shapes(
            lo.shape, hi.shape, () if size is None else np.shape(np.empty(size))
        )
        lo_b = np.broadcast_to(lo, shape).ravel()
        hi_b = np.broadcast_to(hi, shape).ravel()
        out = [int(a) + self._draw(int(b - a)) for a, b in zip(lo_b, hi_b, strict=True)]
        return np.asarray(out, dtype=dtype).reshape(shape)

    def random(self, size: int | tuple[int, ...] | None = None, dtype: Any = np.float64) -> Any:
        if size is None:
            raise AttributeError(
                "EnumeratingRNG: a scalar random() cannot be enumerated exactly (only random "
                "sort keys, random(size), can)"
            )
        return RandomKeys.fresh(self, size)

    def permutation(self, x: int | np.ndarray) -> np.ndarray:
        if isinstance(x, (int, np.integer)):
            return self._ranking(int(x))
        arr = np.asarray(x)
        return arr[self._ranking(arr.shape[0])]

    def shuffle(self, x: Any) -> None:
        perm = self._ranking(len(x))
        x[...] = np.asarray(x)[perm]

    def choice(
        self,
        a: int | np.ndarray,
        size: int | tuple[int, ...] | None = None,
        replace: bool = True,
        p: np.ndarray | None = None,
        axis: int = 0,
        shuffle: bool = True,
    ) -> Any:
        if p is not None:
            raise AttributeError("EnumeratingRNG: choice with probabilities p is not supported")
        pool = np.arange(a) if isinstance(a, (int, np.integer)) else np.asarray(a)
        m = pool.shape[0]
        if size is None:
            return pool[self._draw(m)]
        count = int(np.prod(size))
        if replace:
            idx = [self._draw(m) for _ in range(count)]
        else:
            left = list(range(m))
            idx = [left.pop(self._draw(len(left))) for _ in range(count)]
        return pool[np.asarray(idx, dtype=np.int64)].reshape(size)

    def next_script(self) -> list[int] | None:
        """The next script in depth-first order after the branch just replayed (None: done)."""
        for p in range(len(self.arity) - 1, -1, -1):
            if self.script[p] + 1 < self.arity[p]:
                return [*self.script[:p], self.script[p] + 1]
        return None


class RandomKeys(np.ndarray):
    """Uniform random floats from :meth:`EnumeratingRNG.random`, drawn lazily at first use.

    The project uses ``random(size)`` as sort keys. Their values matter only through their
    ranking, which is uniform; how much of it matters depends on the use, so the ranking is
    drawn when the keys are first used:

    - ``np.lexsort(..., keys, more significant keys...)``: only the order inside each class of
      equal more-significant keys matters (the keys are distinct almost surely, so less
      significant keys never do): one uniform ranking per class, ``prod(c_i!)`` branches;
    - ``np.argsort(keys, axis=-1)`` on a 2-D array: one ranking per row;
    - anything else: one uniform ranking of all values (``size!`` branches).

    After a partial draw (the first two), any further use raises: the full ranking would
    have to be drawn conditionally, which the project never needs.
    """

    _rng: EnumeratingRNG
    _state: str

    @classmethod
    def fresh(cls, rng: EnumeratingRNG, size: int | tuple[int, ...]) -> RandomKeys:
        out = np.zeros(size, dtype=np.float64).view(cls)
        out._rng = rng
        out._state = "fresh"
        return out

    def _plain(self) -> np.ndarray:
        return self.view(np.ndarray)

    def _materialize(self) -> np.ndarray:
        state = getattr(self, "_state", "full")
        if state == "partial":
            raise AttributeError(
                "EnumeratingRNG: random keys used again after a partial draw (lexsort/argsort)"
            )
        if state == "fresh":
            count = int(self.size)
            rank = self._rng._ranking(count)
            self._plain().reshape(-1)[:] = (rank + 0.5) / max(count, 1)
            self._state = "full"
        return self._plain()

    def __array_finalize__(self, obj: Any) -> None:
        # views and results of numpy operations on the keys are plain, concrete values
        self._state = "full"

    def __getitem__(self, item: Any) -> Any:
        return self._materialize()[item]

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        args = [x._materialize() if isinstance(x, RandomKeys) else x for x in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(
                x._materialize() if isinstance(x, RandomKeys) else x for x in kwargs["out"]
            )
        return getattr(ufunc, method)(*args, **kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        if func is np.lexsort and kwargs.get("axis", -1) in (-1, 0):
            keys = args[0] if args else kwargs["keys"]
            if isinstance(keys, tuple | list) and self._lexsort_ready(keys):
                return self._lexsort(list(keys))
        if func is np.argsort and isinstance(args[0], RandomKeys):
            axis = kwargs.get("axis", args[1] if len(args) > 1 else -1)
            a = args[0]
            if a._state == "fresh" and a.ndim == 2 and axis in (-1, 1):
                a._state = "partial"
                rows = [a._rng._ranking(a.shape[1]) for _ in range(a.shape[0])]
                ranks = np.asarray(rows, dtype=np.int64).reshape(a.shape)
                return np.argsort(ranks, axis=1, kind="stable")

        def plain(x: Any) -> Any:
            if isinstance(x, RandomKeys):
                return x._materialize()
            if isinstance(x, tuple | list):
                return type(x)(plain(y) for y in x)
            return x

        return func(*plain(list(args)), **{k: plain(v) for k, v in kwargs.items()})

    @staticmethod
    def _lexsort_ready(keys: Sequence[Any]) -> bool:
        return all((k.ndim if isinstance(k, np.ndarray) else np.ndim(k)) == 1 for k in keys)

    @staticmethod
    def _lexsort(keys: list[Any]) -> np.ndarray:
        pos = max(i for i, k in enumerate(keys) if isinstance(k, RandomKeys))
        rk: RandomKeys = keys[pos]
        major = [
            k._materialize() if isinstance(k, RandomKeys) else np.asarray(k)
            for k in keys[pos + 1 :]
        ]
        if rk._state != "fresh":
            return np.lexsort([rk._materialize(), *major])
        n = int(rk.shape[0])
        if major:
            _, cls_id = np.unique(np.stack(major, axis=1), axis=0, return_inverse=True)
            cls_id = np.asarray(cls_id).reshape(-1)
        else:
            cls_id = np.zeros(n, dtype=np.int64)
        value = np.empty(n, dtype=np.int64)
        for c in np.unique(cls_id).tolist():
            members = np.flatnonzero(cls_id == c)
            value[members] = rk._rng._ranking(members.size)
        rk._state = "partial"
        return np.lexsort([value, *major])


def _anatomy_groups_minimal(
    bucket: np.ndarray,
    l: int,  # noqa: E741
    *,
    rng: Any = None,
    pick: str = "random",
) -> np.ndarray:
    """:func:`~kerckhoffs.algorithms.anatomy.anatomy_groups` with its random row choice drawn
    as an independent uniform order inside each bucket (the original draws one permutation
    of all rows and keeps only the order inside each bucket: the same distribution)."""
    from kerckhoffs.algorithms import anatomy as an

    if pick != "random":
        return _ORIGINALS["anatomy_groups"](bucket, l, rng=rng, pick=pick)
    bucket = np.asarray(bucket, dtype=np.int64)
    n = bucket.shape[0]
    counts = np.bincount(bucket) if n else np.zeros(0, dtype=np.int64)
    sched = an.anatomy_schedule(counts, l)
    steps = an._place_residues(sched, rng)
    rank_of = np.zeros(counts.shape[0], dtype=np.int64)
    rank_of[sched.buckets] = np.arange(sched.buckets.shape[0])
    rows = np.argsort(rank_of[bucket], kind="stable")
    start = 0
    for c in sched.counts.tolist():
        seg = rows[start : start + c]
        rows[start : start + c] = seg[rng.permutation(c)]
        start += c
    group = np.empty(n, dtype=np.int32)
    group[rows] = steps
    return group


def _relabel_minimal(
    table: Table,
    group: np.ndarray,
    value_of_code: np.ndarray,
    first_code: np.ndarray,
    counts: np.ndarray,
    targets: np.ndarray,
    rng: Any,
) -> np.ndarray:
    """:func:`kerckhoffs.algorithms.mask._relabel` with the rows it frees and the order it
    refills them in fixed (lowest row first) instead of uniformly random. Which row of a group
    carries which published value is not part of a release (its key compares each group's
    multiset of published values), so the key's distribution is unchanged; the one draw that
    does change published values (the code given to a freed slot of a merged sensitive set)
    is still drawn from ``rng``."""
    fixed = _FixedOrder(rng)
    return _ORIGINALS["relabel"](table, group, value_of_code, first_code, counts, targets, fixed)


class _FixedOrder:
    """An rng whose ``random`` returns zeros (stable sorts keep row order) and whose
    ``integers`` is the wrapped enumerating generator's."""

    def __init__(self, rng: Any) -> None:
        self._rng = rng

    def random(self, size: int | tuple[int, ...] | None = None) -> Any:
        return 0.0 if size is None else np.zeros(size)

    def integers(self, *args: Any, **kwargs: Any) -> Any:
        return self._rng.integers(*args, **kwargs)


_ORIGINALS: dict[str, Callable[..., np.ndarray]] = {}


@contextlib.contextmanager
def _minimal_primitives() -> Iterator[None]:
    """Swap in the minimal-support primitives (module docstring) for the duration."""
    import sys

    from kerckhoffs.algorithms import anatomy as an
    from kerckhoffs.algorithms import mask as mk

    _ORIGINALS.setdefault("anatomy_groups", an.anatomy_groups)
    _ORIGINALS.setdefault("relabel", mk._relabel)
    swaps = {
        "anatomy_groups": _anatomy_groups_minimal,
        "_relabel": _relabel_minimal,
    }
    originals = {"anatomy_groups": _ORIGINALS["anatomy_groups"], "_relabel": _ORIGINALS["relabel"]}
    patched: list[tuple[Any, str, Any]] = []
    for name, mod in list(sys.modules.items()):
        if not name.startswith("kerckhoffs."):
            continue
        for attr, original in originals.items():
            if getattr(mod, attr, None) is original:
                patched.append((mod, attr, original))
                setattr(mod, attr, swaps[attr])
    try:
        yield
    finally:
        for mod, attr, value in patched:
            setattr(mod, attr, value)


def enumerate_outcomes(
    run: Callable[[EnumeratingRNG], Hashable], *, max_branches: int = 200_000
) -> dict[Hashable, Fraction]:
    """Every outcome of ``run(rng)`` with its exact probability, enumerating all random choices
    it draws from ``rng`` (an :class:`EnumeratingRNG`; pass it on as an algorithm's ``seed``).

    >>> enumerate_outcomes(lambda rng: int(rng.integers(2)) + int(rng.integers(2)))
    {0: Fraction(1, 4), 1: Fraction(1, 2), 2: Fraction(1, 4)}
    """
    out: dict[Hashable, Fraction] = {}
    script: list[int] | None = []
    branches = 0
    with _minimal_primitives():
        while script is not None:
            rng = EnumeratingRNG(script)
            key = run(rng)
            out[key] = out.get(key, Fraction(0)) + rng.prob
            branches += 1
            if branches > max_branches:
                raise AuditTooLarge(
                    f"more than {max_branches} random branches for one candidate world"
                )
            script = rng.next_script()
    return out


# -- releases and their keys -----------------------------------------------------------------------
def with_sa(table: Table, sa: np.ndarray) -> Table:
    """The table with its SA column replaced (QIs and their encoding shared)."""
    t = copy.copy(table)
    t.sa = np.asarray(sa, dtype=np.int32)
    return t


def release_key(release: Release, compare: str = "partition") -> Hashable:
    """What an adversary sees of a release, as a hashable value (module docstring)."""
    sa = np.asarray(release.sa_published).tolist()
    group = release.partition.group.tolist()
    if compare == "frame":
        if release.scheme != Scheme.GENERALIZATION:
            raise ParameterError("compare='frame' needs a generalization release")
        cells = release.generalized_cells()
        rows = [tuple(str(v) for v in r) for r in cells.itertuples(index=False)]
        return tuple(sorted((rows[g], s) for g, s in zip(group, sa, strict=True)))
    members: dict[int, list[int]] = {}
    for r, g in enumerate(group):
        members.setdefault(g, []).append(r)
    cells_rows: list[tuple[str, ...]] | None = None
    if release.cells is not None:
        cells_rows = [tuple(str(v) for v in r) for r in release.cells.itertuples(index=False)]
    parts = []
    for g, rows in members.items():
        multiset = tuple(sorted(sa[r] for r in rows))
        extra = cells_rows[g] if cells_rows is not None else ()
        parts.append((tuple(rows), multiset, extra))
    return (str(release.scheme), frozenset(parts))


# -- naive worlds ----------------------------------------------------------------------------------
def _arrangements(values: list[int]) -> list[tuple[int, ...]]:
    """Distinct orderings of a multiset (lexicographic)."""
    vals = sorted(values)
    out: list[tuple[int, ...]] = []
    counts = Counter(vals)
    keys = sorted(counts)
    cur: list[int] = []

    def rec() -> None:
        if len(cur) == len(vals):
            out.append(tuple(cur))
            return
        for k in keys:
            if counts[k]:
                counts[k] -= 1
                cur.append(k)
                rec()
                cur.pop()
                counts[k] += 1

    rec()
    return out


def _n_arrangements(values: list[int]) -> int:
    c = Counter(values)
    return math.factorial(len(values)) // math.prod(math.factorial(v) for v in c.values())


def _covers(release: Release) -> np.ndarray:
    """``cover[g, r]``: the published cells of group ``g`` cover row ``r``'s QI."""
    table = release.table
    lo, hi = release.group_bounds()
    n_g = lo.shape[0]
    ok = np.ones((n_g, table.n), dtype=bool)
    for j, col in enumerate(table.qi_columns):
        codes = table.qi[:, j].astype(np.int64)
        if col.kind == Kind.NUMERIC or col.hierarchy is None:
            ok &= (lo[:, j, None] <= codes[None, :]) & (codes[None, :] <= hi[:, j, None])
            continue
        h = col.hierarchy
        llo, lhi = col.leaves(lo[:, j]), col.leaves(hi[:, j])
        level = h.lca_level(llo, lhi)
        leaves = col.leaves(codes)
        for g in range(n_g):
            nodes = h.node_ids[int(level[g])]
            ok[g] &= nodes[leaves] == nodes[llo[g]]
    return ok


def _has_matching(world: np.ndarray, slots: list[tuple[int, int]], cover: np.ndarray) -> bool:
    """A bijection rows <-> slots (group, SA) with cover[group, row] and equal SA."""
    n = world.shape[0]
    owner = [-1] * len(slots)

    def try_row(r: int, seen: list[bool]) -> bool:
        for s, (g, v) in enumerate(slots):
            if seen[s] or v != world[r] or not cover[g, r]:
                continue
            seen[s] = True
            if owner[s] < 0 or try_row(owner[s], seen):
                owner[s] = r
                return True
        return False

    return all(try_row(r, [False] * len(slots)) for r in range(n))


def naive_worlds(
    release: Release,
    *,
    support: str = "groups",
    knowledge: Knowledge | None = None,
    max_worlds: int = 100_000,
) -> np.ndarray:
    """The naive world of ``release``: candidate SA codes per row, one world per row of the
    returned int array ``[W, n]``, filtered by ``knowledge`` (module docstring)."""
    sa = np.asarray(release.sa_published).astype(np.int64)
    n = sa.shape[0]
    if support == "groups":
        groups = release.partition.groups()
        total = math.prod(_n_arrangements(sa[g].tolist()) for g in groups)
        if total > max_worlds:
            raise AuditTooLarge(f"{total} naive worlds (more than {max_worlds})")
        per_group = [_arrangements(sa[g].tolist()) for g in groups]
        worlds = np.empty((total, n), dtype=np.int64)
        for w, combo in enumerate(itertools.product(*per_group)):
            for rows, values in zip(groups, combo, strict=True):
                worlds[w, rows] = values
    elif support == "frame":
        total = _n_arrangements(sa.tolist())
        if total > max_worlds:
            raise AuditTooLarge(f"{total} naive worlds (more than {max_worlds})")
        cover = _covers(release)
        group = release.partition.group.tolist()
        slots = [(g, int(v)) for g, v in zip(group, sa.tolist(), strict=True)]
        cands = [np.asarray(a, dtype=np.int64) for a in _arrangements(sa.tolist())]
        kept = [c for c in cands if _has_matching(c, slots, cover)]
        worlds = np.asarray(kept, dtype=np.int64).reshape(len(kept), n)
    else:
        raise ParameterError(f"support must be 'groups' or 'frame', got {support!r}")
    if knowledge is not None and worlds.shape[0]:
        keep = np.fromiter((bool(knowledge(w)) for w in worlds), dtype=bool, count=len(worlds))
        worlds = worlds[keep]
    return worlds


# -- posteriors and the verdict -------------------------------------------------------------------
Posterior = list[dict[int, Fraction]]


def _posteriors(worlds: np.ndarray, weights: list[int]) -> Posterior:
    """Per row, value -> exact probability under integer weights (zero weights dropped)."""
    n = worlds.shape[1]
    total = sum(weights)
    out: Posterior = [dict() for _ in range(n)]
    if total == 0:
        return out
    idx = [i for i, w in enumerate(weights) if w]
    for r in range(n):
        acc: dict[int, int] = {}
        col = worlds[idx, r].tolist()
        for i, v in zip(idx, col, strict=True):
            acc[v] = acc.get(v, 0) + weights[i]
        out[r] = {v: Fraction(c, total) for v, c in sorted(acc.items())}
    return out


@dataclass
class WorldsAudit:
    """The auditor's verdict on one release (all probabilities exact).

    ``naive[r]`` / ``smart[r]``: SA code -> posterior of row ``r``. ``worlds``: the naive
    support (one SA code per row each); ``weights[i]``: ``Pr[A(worlds[i]) = T*]``.
    ``differing``: rows whose posteriors differ. ``asap``: none differs (Definition 5).
    ``l``: the diversity bound checked (None: not checked); ``smart_l_diverse``: no bounded
    value has smart posterior above ``1/l``; ``smart_max``: the largest such posterior.
    """

    release: Release
    worlds: np.ndarray
    weights: list[Fraction]
    naive: Posterior
    smart: Posterior
    differing: list[int]
    l: float | None = None  # noqa: E741
    smart_max: Fraction = Fraction(0)
    smart_l_diverse: bool = True
    runs: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def asap(self) -> bool:
        """No row's posterior changes when the algorithm is known (Definition 5)."""
        return not self.differing

    @property
    def naive_count(self) -> int:
        """Number of naive worlds."""
        return int(self.worlds.shape[0])

    @property
    def smart_count(self) -> int:
        """Number of naive worlds the algorithm can turn into the release."""
        return sum(1 for w in self.weights if w)

    @property
    def violates(self) -> bool:
        """Not ASAP, or no longer l-diverse in the smart view."""
        return not self.asap or not self.smart_l_diverse

    def describe(self, labels: Sequence[str] | None = None) -> str:
        """A few lines for people: worlds, the differing rows and their posteriors."""

        def name(v: int) -> str:
            return labels[v] if labels is not None else str(v)

        def fmt(p: dict[int, Fraction]) -> str:
            return ", ".join(f"{name(v)} {q}" for v, q in p.items())

        lines = [
            f"naive worlds {self.naive_count}, smart support {self.smart_count}; "
            f"ASAP: {'yes' if self.asap else 'no'}"
            + (
                f"; smart max posterior {self.smart_max} "
                f"({'<=' if self.smart_l_diverse else '>'} 1/{self.l:g})"
                if self.l
                else ""
            )
        ]
        for r in self.differing:
            lines.append(f"  row {r + 1}: naive {fmt(self.naive[r])} | smart {fmt(self.smart[r])}")
        return "\n".join(lines)


def diversity_bound(models: Sequence[PrivacyModel]) -> float | None:
    """The ``l`` (or MASK's ``m``) a release promises, from the models (None if neither)."""
    for m in models:
        for attr in ("l", "m"):
            v = getattr(m, attr, None)
            if type(m).__name__ in {"LDiversity", "MConfidentiality"} and v is not None:
                return float(v)
    return None


def audit_worlds(
    release: Release,
    worlds: np.ndarray,
    weights: Sequence[Fraction | int],
    *,
    l: float | None = None,  # noqa: E741
    runs: int = 0,
) -> WorldsAudit:
    """The verdict from a naive support and smart weights (uniform prior over the support).

    The lower-level entry point: :func:`random_worlds` computes the weights by re-running an
    algorithm; a test can pass worlds and weights of its own (e.g. a toy algorithm).
    """
    w = [Fraction(x) for x in weights]
    den = math.lcm(*(x.denominator for x in w)) if w else 1
    ints = [int(x * den) for x in w]
    naive = _posteriors(worlds, [1] * worlds.shape[0])
    smart = _posteriors(worlds, ints)
    differing = [r for r in range(worlds.shape[1]) if naive[r] != smart[r]]
    sens = np.asarray(release.table.sensitive, dtype=bool)
    smart_max = Fraction(0)
    for post in smart:
        for v, q in post.items():
            if v < sens.shape[0] and sens[v]:
                smart_max = max(smart_max, q)
    ok = True if l is None else smart_max * Fraction(l).limit_denominator(10**6) <= 1
    return WorldsAudit(release, worlds, w, naive, smart, differing, l, smart_max, ok, runs)


def _key_or_refusal(
    fn: RunFn,
    table: Table,
    models: list[PrivacyModel],
    seed: int | EnumeratingRNG | None,
    opts: dict[str, Any],
    compare: str,
) -> Hashable:
    """The release key of one run, or a marker when the algorithm refuses the candidate
    (a refusal is an output that is not ``T*``)."""
    try:
        return release_key(fn(table, models, seed=seed, **opts), compare)
    except ParameterError as exc:
        return ("refused", str(exc))


def random_worlds(
    algorithm: str | RunFn,
    table: Table,
    models: list[PrivacyModel],
    *,
    seed: int | None = 0,
    known_seed: int | None = None,
    options: dict[str, Any] | None = None,
    knowledge: Knowledge | None = None,
    support: str = "groups",
    compare: str | None = None,
    release: Release | None = None,
    max_worlds: int = 100_000,
    max_branches: int = 200_000,
) -> WorldsAudit:
    """Audit ``algorithm`` (a registered name or a function with the algorithm signature) on
    ``table`` by random worlds (module docstring).

    ``release`` is the observed release (default: the algorithm's output on ``table`` with
    ``seed``). ``options`` are passed to every run. Randomized algorithms (registered with
    ``randomized=True``, or any function given directly) have their random choices
    enumerated exactly, the enumerating generator passed in as their ``seed``; deterministic
    ones are run once per candidate.

    ``known_seed``: the adversary knows the seed (DESIGN.md section 5 says why it must not).
    The observed release (unless given) is then the output with ``known_seed`` (``seed`` is
    not used) and every candidate is re-run with it: the algorithm is audited as the
    deterministic function it becomes, and a randomized algorithm-safe algorithm (paper 000
    section 7, the ++ variants) can then violate like its deterministic counterpart.

    >>> from kerckhoffs.models import LDiversity
    >>> table = random_table(np.random.default_rng(3), 6, n_sa=3)
    >>> random_worlds("mondrian++", table, [LDiversity(2)], seed=0).violates
    False
    """
    opts = dict(options or {})
    randomized = True
    if isinstance(algorithm, str):
        from kerckhoffs.algorithms.registry import get

        info = get(algorithm)
        fn: RunFn = info.run
        randomized = info.randomized
    else:
        fn = algorithm
    if known_seed is not None:
        seed = check_seed(known_seed, "known_seed")
        randomized = False  # the seed fixes every random choice: a deterministic function
    compare = compare or ("frame" if support == "frame" else "partition")
    if release is None:
        release = fn(table, models, seed=seed, **opts)
    target = release_key(release, compare)
    worlds = naive_worlds(release, support=support, knowledge=knowledge, max_worlds=max_worlds)
    weights: list[Fraction] = []
    runs = 0
    cache: dict[bytes, Fraction] = {}
    for world in worlds:
        key = world.tobytes()
        if key in cache:
            weights.append(cache[key])
            continue
        cand = with_sa(table, world)
        if randomized:

            def run(rng: EnumeratingRNG, cand: Table = cand) -> Hashable:
                return _key_or_refusal(fn, cand, models, rng, opts, compare)

            dist = enumerate_outcomes(run, max_branches=max_branches)
            runs += 1
            wgt = dist.get(target, Fraction(0))
        else:
            runs += 1
            wgt = Fraction(int(_key_or_refusal(fn, cand, models, seed, opts, compare) == target))
        cache[key] = wgt
        weights.append(wgt)
    res = audit_worlds(release, worlds, weights, l=diversity_bound(models), runs=runs)
    if known_seed is not None:
        res.notes.append(f"seed {known_seed} known to the adversary: random choices replayed")
    return res


# -- random small tables (the CLI's and the tests' fuzzing) ----------------------------------------
MAX_SA_VALUES = 26
"""SA values of a random table are the letters ``A..Z``."""

MAX_FUZZ_ROWS = 12
"""Largest table :func:`fuzz` audits: the worlds and random branches grow with ``rows!``."""


def _l_eligible(rows: int, n_sa: int, l: int) -> bool:  # noqa: E741
    """Some SA column of ``rows`` values over ``n_sa`` has no value more than ``rows / l``
    times (the most frequent value occurs at least ``ceil(rows / n_sa)`` times)."""
    return rows >= l * math.ceil(rows / n_sa)


def random_table(
    rng: np.random.Generator,
    rows: int = 8,
    *,
    n_sa: int = 4,
    l: int = 2,  # noqa: E741
    qi_size: int = 8,
    redraw: bool = True,
) -> Table:
    """A random table: two QIs with values in ``0..qi_size-1`` and an SA over ``n_sa`` values
    ``A, B, ...``, l-eligible (``rows >= l * S_max``, so an l-diverse release exists).

    The SA column is drawn uniformly; ``redraw`` (small tables, the default) draws it again
    until it is l-eligible; otherwise (large tables, where a redraw may almost never succeed,
    e.g. ``l == n_sa``) rows of over-represented values, chosen at random, are given the
    rarest value until it is. Both QI columns declare the full domain ``0..qi_size-1`` (a flat
    hierarchy in code order), so normalized ranges and Hilbert indices do not depend on which
    values were drawn.
    """
    import pandas as pd

    from kerckhoffs.data.hierarchy import Hierarchy
    from kerckhoffs.data.schema import Schema

    if rows < 1:
        raise ParameterError(f"rows {rows}: a table needs at least one row")
    if not 1 <= n_sa <= MAX_SA_VALUES:
        raise ParameterError(
            f"sa_values {n_sa}: the SA values are the letters A..Z, so 1..{MAX_SA_VALUES}"
        )
    if qi_size < 1:
        raise ParameterError(f"qi_size {qi_size}: a QI needs at least one value")
    if not _l_eligible(rows, n_sa, l):
        raise ParameterError(
            f"rows {rows} over sa_values {n_sa} cannot be {l}-eligible (the most frequent "
            f"value occurs at least {math.ceil(rows / n_sa)} times)"
        )
    letters = [chr(ord("A") + i) for i in range(n_sa)]
    while True:
        sa = rng.integers(0, n_sa, size=rows)
        if rows >= l * int(np.bincount(sa).max()) or not redraw:
            break
    if not redraw:
        counts = np.bincount(sa, minlength=n_sa)
        cap = rows // l
        for v in np.flatnonzero(counts > cap).tolist():
            excess = int(counts[v] - cap)
            for r in rng.permutation(np.flatnonzero(sa == v))[:excess].tolist():
                w = int(np.argmin(counts))
                sa[r] = w
                counts[w] += 1
                counts[v] -= 1
    axis = Hierarchy.flat(range(qi_size), name=f"0..{qi_size - 1}", keep_order=True)
    df = pd.DataFrame(
        {
            "x": rng.integers(0, qi_size, size=rows),
            "y": rng.integers(0, qi_size, size=rows),
            "s": [letters[v] for v in sa.tolist()],
        }
    )
    quasi = {
        "x": {"kind": "categorical", "hierarchy": axis},
        "y": {"kind": "categorical", "hierarchy": axis},
    }
    return Table.encode(df, Schema.build(quasi, "s"))


@dataclass
class Trial:
    """One audited random table (:func:`fuzz`). ``skipped``: why it has no audit (None: it
    has one); ``outcome``: ``"audited"``, ``"refused"`` (by the algorithm) or ``"too large"``
    (to enumerate); ``seed``: the seed of the observed release (the trial's index, or the
    adversary's known seed)."""

    table: Table
    audit: WorldsAudit | None
    skipped: str | None = None
    seed: int = 0
    outcome: str = "audited"


def _check_range(name: str, value: int | tuple[int, int], lo: int, hi: int) -> None:
    """``value`` (an int or an inclusive ``(low, high)`` range) lies within ``lo..hi``."""
    low, high = (value, value) if isinstance(value, int) else value
    if not lo <= low <= high <= hi:
        raise ArgumentError(name, value, f"use {lo}..{hi}")


def fuzz(
    algorithm: str,
    models: list[PrivacyModel],
    *,
    trials: int = 200,
    rows: int | tuple[int, int] = 8,
    n_sa: int | tuple[int, int] = (2, 4),
    seed: int = 0,
    known_seed: int | None = None,
    options: dict[str, Any] | None = None,
    progress: Callable[[int], None] | None = None,
    max_worlds: int = 20_000,
    max_branches: int = 20_000,
    workers: int = 1,
) -> list[Trial]:
    """Audit ``algorithm`` on ``trials`` random tables (:func:`random_table`; ``rows`` and
    ``n_sa`` fixed or drawn from an inclusive range; when the drawn ``n_sa`` is too small for
    an l-eligible table of the drawn size, the fewest values that allow one), seeded. Tables
    too large to enumerate are kept as skipped trials (``Trial.skipped`` says why), never
    silently dropped. Trial ``i``'s release is drawn with seed ``i``, or with ``known_seed``,
    which the adversary then knows (:func:`random_worlds`).

    ``workers > 1`` audits in that many processes; the tables are drawn here first, so the
    trials (and their order) do not depend on ``workers``.
    """
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise ArgumentError("trials", trials, "use at least 1")
    _check_range("rows", rows, 1, MAX_FUZZ_ROWS)
    _check_range("sa_values", n_sa, 1, MAX_SA_VALUES)
    seed = check_seed(seed)
    if known_seed is not None:
        known_seed = check_seed(known_seed, "known_seed")
    rng = np.random.default_rng(seed)
    l = int(diversity_bound(models) or 1)  # noqa: E741
    if isinstance(rows, int) and isinstance(n_sa, int) and not _l_eligible(rows, n_sa, l):
        raise ParameterError(
            f"rows {rows} over sa_values {n_sa} cannot be {l}-eligible (the most frequent "
            f"value occurs at least {math.ceil(rows / n_sa)} times)"
        )
    tables: list[Table] = []
    for _ in range(trials):
        n = rows if isinstance(rows, int) else int(rng.integers(rows[0], rows[1] + 1))
        a = n_sa if isinstance(n_sa, int) else int(rng.integers(n_sa[0], n_sa[1] + 1))
        if n < l * math.ceil(n / a) and not isinstance(n_sa, int):
            a = next((b for b in range(a, n + 1) if n >= l * math.ceil(n / b)), n)
        tables.append(random_table(rng, n, n_sa=a, l=l))
    job = _FuzzJob(algorithm, models, dict(options or {}), max_worlds, max_branches, known_seed)
    if workers <= 1 or trials < 2:
        out = []
        for i, table in enumerate(tables):
            out.append(job((i, table)))
            if progress is not None:
                progress(i + 1)
        return out
    import concurrent.futures as cf
    import multiprocessing as mp

    chunk = max(1, trials // (4 * workers))
    with cf.ProcessPoolExecutor(workers, mp_context=mp.get_context("forkserver")) as pool:
        out = []
        for i, trial in enumerate(pool.map(job, enumerate(tables), chunksize=chunk)):
            out.append(trial)
            if progress is not None:
                progress(i + 1)
    return out


@dataclass(frozen=True)
class _FuzzJob:
    """One trial of :func:`fuzz` (a picklable callable, for worker processes)."""

    algorithm: str
    models: list[PrivacyModel]
    options: dict[str, Any]
    max_worlds: int
    max_branches: int
    known_seed: int | None = None

    def __call__(self, item: tuple[int, Table]) -> Trial:
        i, table = item
        seed = i if self.known_seed is None else self.known_seed
        try:
            res = random_worlds(
                self.algorithm,
                table,
                self.models,
                seed=seed,
                known_seed=self.known_seed,
                options=self.options,
                max_worlds=self.max_worlds,
                max_branches=self.max_branches,
            )
            return Trial(table, res, seed=seed)
        except AuditTooLarge as exc:
            return Trial(table, None, f"too large: {exc}", seed, "too large")
        except ParameterError as exc:  # the algorithm refuses the table itself
            return Trial(table, None, f"refused: {exc}", seed, "refused")
