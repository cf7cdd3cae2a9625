"""The random-worlds auditor: does knowing the algorithm change what a release reveals?

Paper 000 (Jin, Zhang, Das; ``docs/theory/asap.md#random-worlds``,
``docs/theory/asap.md#asap-definition`` and the random-worlds audit of
``docs/theory/asap.md#audits``) calls a release *algorithm-safe* (ASAP, Definition 5) when every
row's SA posterior is the same for an adversary who does not know the algorithm (the *naive* world)
and one who does (the *smart* world). This module decides it exactly, with
:class:`fractions.Fraction`, on small tables (up to about 10 rows):

1. **Release.** Run the algorithm once on the table: the observed release ``T*``.
2. **Naive world** (Definition 3, ``docs/theory/asap.md#random-worlds``; the paper defines a world
   as a table of (QI, SA) pairs but its examples reason about named individuals, resolved as: a
   world is an assignment row -> SA value, every row's QI known, ``docs/theory/asap.md#err-world``).
   ``support="groups"`` (default): every distinct arrangement of each published group's published SA
   multiset over the group's rows; the worlds are the product over groups. ``support="frame"``:
   every arrangement of the table's published SA multiset over all rows that some bijection rows <->
   published records explains (each record's QI cells cover its row's QI, same SA): for
   generalizations where the adversary cannot tell which rows sit in which group (the paper's Tables
   1 and 5, whose worlds the tests reproduce: ``docs/theory/asap.md#worked-examples``). The worlds
   are then filtered by the external knowledge, a predicate ``world -> bool`` over the candidate's
   SA codes (``docs/theory/asap.md#external-knowledge``; the default, "every original QI known",
   keeps them all). The naive posterior of row ``r`` is the share of surviving worlds giving ``r``
   each value.
3. **Smart world.** Re-run the algorithm on each surviving candidate (the table with its SA
   column replaced) and weight the candidate by ``Pr[A(candidate) = T*]``: 0 or 1 for a
   deterministic algorithm, the exact output probability for a randomized one, found by
   passing an :class:`~kerckhoffs.audits.enumerating_rng.EnumeratingRNG` in as the
   algorithm's ``seed`` (:func:`~kerckhoffs.audits.enumerating_rng.enumerate_outcomes`: every
   random choice the algorithm draws through its generator, each branch a real run; nothing
   swapped or replaced, except that the pure steps a branch computes before its first draw,
   the same in every branch, are computed once per candidate:
   :class:`~kerckhoffs.randomness.SharedPrefix`).
4. **Verdict.** The rows whose posteriors differ; ASAP iff none; l-diversity in the smart
   view iff no row's smart posterior of a bounded value exceeds ``1/l``.

**When two releases are the same** (our choice for the random-worlds audit,
``docs/theory/asap.md#audits``): ``compare="partition"`` (default) --
the same rows grouped together and, per group, the same multiset of *published* SA values
(so MASK-style perturbed counts count) and the same published cells when the algorithm
chooses its cells (``Release.cells``); with fixed QIs this is exactly the published frames
(generalized cells are a function of the rows of the group; the files are written sorted by
group and SA, so nothing else is visible). ``compare="frame"``: the multiset of published
records (group cells, published SA), for ``support="frame"``.

**A known seed undoes the randomness** (paper 000 section 7; DESIGN.md section 5). With
``known_seed`` the adversary knows the algorithm's seed: the observed release is the
algorithm's output with that seed, and every candidate is re-run with it, a deterministic
function again (weights 0 or 1, nothing enumerated). A randomized algorithm that is
algorithm-safe because of its random choice (the ++ variants' stratified pick-up) then leaks
like a deterministic one.

Speed: candidates share the table's encoded QIs (only ``sa`` changes), the release of each
distinct candidate is computed once, and for deterministic algorithms no enumeration
machinery runs. An 8-row table with groups of at most 4 rows (at most 576 worlds) is decided
well under a second by the classic algorithms. Random small tables and the fuzzing driver over
them are in :mod:`kerckhoffs.audits.random_tables`.
"""

from __future__ import annotations

import copy
import itertools
import math
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from kerckhoffs.audits.enumerating_rng import AuditTooLarge, EnumeratingRNG, enumerate_outcomes
from kerckhoffs.data.cells import group_code_cover
from kerckhoffs.data.table import Table
from kerckhoffs.errors import ParameterError
from kerckhoffs.models.base import PrivacyModel
from kerckhoffs.randomness import check_seed
from kerckhoffs.release import Release, Scheme

__all__ = [
    "AuditTooLarge",
    "EnumeratingRNG",
    "WorldPredicate",
    "WorldsAudit",
    "all_of",
    "at_least",
    "audit_worlds",
    "check_seed",
    "diversity_bound",
    "enumerate_outcomes",
    "naive_worlds",
    "random_worlds",
    "release_key",
    "row_not",
    "with_sa",
]

WorldPredicate = Callable[[np.ndarray], bool]
"""External knowledge as a predicate: True when a candidate world (SA code per row) is
consistent with it. (The adversary's knowledge as data, read from files, is
:class:`kerckhoffs.attacks.knowledge.Knowledge`.)"""

RunFn = Callable[..., Release]


# -- external knowledge helpers (docs/theory/asap.md#external-knowledge) ---------------------------
def row_not(row: int, value: int) -> WorldPredicate:
    """ "Row ``row`` does not have SA code ``value``" (the set ``S_0`` of unlikely values)."""
    return lambda world: int(world[row]) != value


def at_least(rows: Sequence[int], value: int, count: int) -> WorldPredicate:
    """ "At least ``count`` of ``rows`` have SA code ``value``" (a COUNT constraint)."""
    idx = np.asarray(rows, dtype=np.int64)
    return lambda world: int(np.count_nonzero(world[idx] == value)) >= count


def all_of(*preds: WorldPredicate) -> WorldPredicate:
    """The conjunction of several pieces of knowledge."""
    return lambda world: all(p(world) for p in preds)


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
    for g, held in members.items():
        multiset = tuple(sorted(sa[r] for r in held))
        extra = cells_rows[g] if cells_rows is not None else ()
        parts.append((tuple(held), multiset, extra))
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
    """``cover[g, r]``: the published cells of group ``g`` cover row ``r``'s QI (read by
    :func:`kerckhoffs.data.cells.group_code_cover`, the reader every attack shares, so a
    release's own cells, such as a lattice level's nodes, are honoured)."""
    table = release.table
    lo, hi = group_code_cover(table.qi_columns, *release.group_bounds(), release.cells)
    codes = table.qi.astype(np.int64)
    inside = (lo[:, None, :] <= codes[None]) & (codes[None] <= hi[:, None, :])
    return np.asarray(inside.all(axis=2), dtype=bool)


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
    knowledge: WorldPredicate | None = None,
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
    knowledge: WorldPredicate | None = None,
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
    >>> from kerckhoffs.audits.random_tables import random_table
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
