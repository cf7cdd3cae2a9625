"""Anatomy: l-diverse bucketization (Xiao & Tao, VLDB 2006), the algorithm-safe baseline.

Paper 000 uses it as the black box of stratified pick-up (``docs/theory/asap.md#anatomy``). Anatomy
publishes the exact QIs with a group id (QI table) and each group's SA counts (SA table), so only
the link row -> SA is hidden inside a group. It reads nothing but the SA values (and randomness),
which makes it simulatable (paper 000, Theorem 5.3).

1. **Buckets.** The rows are hashed into one bucket per SA value.
2. **Group creation.** While at least ``l`` buckets are non-empty, a new group takes one row
   from each of the ``l`` buckets with the most remaining rows.
3. **Residue assignment.** At most ``l - 1`` rows remain, one per bucket (Xiao & Tao,
   Property 1). Each joins a group that does not hold its SA value (and, whenever the
   residues can be spread so, no other residue).

Every group holds pairwise distinct SA values, so it is l-diverse, and between ``l`` and
``2l - 1`` rows (paper 000, Theorem 7.1). It holds ``l`` or ``l + 1`` rows whenever the created
groups let the residues go to distinct groups, which the residue step then always finds (an
augmenting-path matching); that is the usual case (every Census run, more than 99% of random
bucket profiles). It is not always possible after the greedy creation: with bucket sizes
4, 4, 2, 4, 4, 4, 2 at l = 5 the groups are {0, 1, 3, 4, 5} three times and {0, 1, 2, 3, 6},
and the residues of buckets 4 and 5 both fit only the last group (7 rows). And with fewer
groups than residues (``n // l < n % l``) no algorithm can avoid a group above ``l + 1``.

**Choices the papers leave open** (Xiao & Tao take an "arbitrary" row from a bucket, and an
arbitrary choice can leak; we choose rows uniformly at random:
``docs/theory/asap.md#err-anatomy-choice``):

- *Which row leaves a bucket.* ``pick="random"`` (default): uniformly at random (seeded), the choice
  the ASAP analysis needs. ``pick="lowest-row"``: the lowest row id still in the bucket,
  deterministic; it leaks through the QI order (one of our edge-case vectors,
  ``docs/theory/asap.md#worked-examples``) and exists for the auditors that demonstrate that leak.
- *Which group a residue joins.* Random mode: uniformly at random among the eligible groups
  (those holding neither its value nor a residue); ``lowest-row`` mode: the first eligible
  group in creation order. Residues are placed most-constrained first (fewest eligible
  groups, ties by bucket rank), with an augmenting-path repair if a choice would strand a
  later residue.
- *Ties among equally full buckets* are broken by a fixed order of the SA domain derived from the SA
  histogram alone: the buckets' **initial** size, largest first, then SA code. Our first design used
  SA-code order; that order can strand residues: buckets with codes 0..4 and sizes 2, 1, 1, 2, 2 at
  l = 3 give groups {0, 3, 4} and {0, 1, 2} under code order, and both residues (codes 3 and 4) can
  only join the second group, five rows. Under initial-size order the groups are {0, 3, 4} twice and
  the residues 1 and 2 go to different groups; on random profiles code order strands residues about
  three times as often. The order depends only on the published SA multiset, so it is as safe as any
  fixed order.

**Speed.** Which buckets each group draws from is computed from the bucket sizes alone, in
O(number of buckets) numpy passes, without simulating the groups one by one: group creation is
"longest remaining first" scheduling of the buckets on ``l`` slots. The ``a`` largest buckets
are taken by every group until, one after another from the smallest of them, each meets the
rest; the rest (the *pool*) is consumed as one sequence of cells ``(bucket, level)`` ordered
by level (remaining size) descending, then bucket rank, in chunks of ``l - a`` per group (the
greedy's own order, since a bucket's first cell in that sequence is its current size). When a
large bucket joins the pool is found by one vectorized search over the group index, at most
``l`` times. This equals the step-by-step greedy exactly (checked against it in the tests; a
cheap consistency check falls back to the step-by-step greedy if it ever did not). Rows are
then matched to their bucket's picks with two sorts, so nothing loops over rows or groups.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kerckhoffs.algorithms.registry import pick as pick_model
from kerckhoffs.algorithms.registry import refuse_others, register
from kerckhoffs.data.schema import SensitiveMode
from kerckhoffs.data.table import Table
from kerckhoffs.errors import ParameterError
from kerckhoffs.models.base import PrivacyModel, format_number
from kerckhoffs.models.l_diversity import LDiversity
from kerckhoffs.randomness import Seed, generator, order_within
from kerckhoffs.release import Partition, Provenance, Release, Scheme

__all__ = [
    "PICKS",
    "AnatomySchedule",
    "anatomy",
    "anatomy_groups",
    "anatomy_schedule",
    "l_eligible_buckets",
    "sa_buckets",
]

PICKS = ("random", "lowest-row")
"""How a row leaves its bucket: uniformly at random (default) or lowest row id first."""

SMALL = 256
"""Bucket profiles with at most this many rows are scheduled step by step (cheaper there)."""


# -- buckets and the precondition ------------------------------------------------------------------
def sa_buckets(table: Table) -> tuple[np.ndarray, list[str]]:
    """Bucket id of every row and each bucket's label (for messages).

    One bucket per SA code (paper 000's setting: every SA value is bounded). When the schema
    names a sensitive subset in ``set`` mode, the subset is bounded as one value, so its codes
    share one bucket: a group then holds at most one row of the subset.
    """
    labels = [str(v) for v in table.sa_column.labels.tolist()]
    sens = np.asarray(table.sensitive, dtype=bool)
    if sens.all() or table.schema.sensitive_mode != SensitiveMode.SET:
        return table.sa.astype(np.int64), labels
    merged = int(np.flatnonzero(sens)[0]) if sens.any() else 0
    mapping = np.arange(table.n_sa, dtype=np.int64)
    mapping[sens] = merged
    names = ", ".join(repr(labels[i]) for i in np.flatnonzero(sens))
    labels[merged] = f"the sensitive values {{{names}}}"
    return mapping[table.sa], labels


def l_eligible_buckets(
    table: Table, models: list[PrivacyModel], algorithm: str
) -> tuple[int, np.ndarray]:
    """``l`` from the models and the rows' buckets, refusing what the algorithm cannot do.

    Accepts exactly one :class:`~kerckhoffs.models.LDiversity` with a whole-number ``l`` and an
    l-eligible table, ``|T| >= l * S_max(T)`` (paper 000 Definition 2,
    ``docs/theory/asap.md#l-diversity``), S_max over the buckets of :func:`sa_buckets`. Anything
    else raises a one-line :class:`~kerckhoffs.errors.ParameterError`.
    """
    refuse_others(models, (LDiversity,), algorithm)
    model = pick_model(models, LDiversity, algorithm)
    if model is None:
        raise ParameterError(f"{algorithm} needs an l-diversity model (l=L)")
    if not float(model.l).is_integer():
        raise ParameterError(
            f"{algorithm}: l must be a whole number (groups are built from l distinct SA "
            f"values), got l={format_number(model.l)}"
        )
    l = int(model.l)  # noqa: E741
    bucket, labels = sa_buckets(table)
    counts = np.bincount(bucket, minlength=len(labels))
    top = int(np.argmax(counts))
    smax = int(counts[top])
    if table.n < l * smax:
        raise ParameterError(
            f"{algorithm}: the table is not l-eligible for l={l}: {table.n} rows < l * S_max "
            f"= {l} * {smax} = {l * smax} ({table.sa_name} {labels[top]!r} occurs {smax} "
            f"times)"
        )
    return l, bucket


# -- group creation: which buckets each group draws from -------------------------------------------
@dataclass(frozen=True, eq=False)
class AnatomySchedule:
    """Anatomy's group-creation step on a bucket profile, in bucket-rank order.

    ``buckets[r]`` is the bucket id of rank ``r`` (ranks: initial size descending, then id);
    ``counts[r]`` its size. ``steps`` is flat, one entry per row: the segment
    ``offsets[r] .. offsets[r] + counts[r]`` lists the groups bucket ``r`` gives a row to, in
    creation order, and ``-1`` for its residue (always last). ``n_groups`` groups are created.
    """

    buckets: np.ndarray
    counts: np.ndarray
    steps: np.ndarray
    n_groups: int

    @property
    def offsets(self) -> np.ndarray:
        """Start of each rank's segment in :attr:`steps`."""
        return np.concatenate([[0], np.cumsum(self.counts)[:-1]]).astype(np.int64)

    def members(self) -> list[list[int]]:
        """Bucket ids of every group in creation order (for tests and small profiles)."""
        out: list[list[int]] = [[] for _ in range(self.n_groups)]
        rank = np.repeat(np.arange(len(self.counts)), self.counts)
        for r, s in zip(rank.tolist(), self.steps.tolist(), strict=True):
            if s >= 0:
                out[s].append(int(self.buckets[r]))
        return out

    def residues(self) -> np.ndarray:
        """Bucket ids of the residue rows (at most ``l - 1``, one per bucket)."""
        rank = np.repeat(np.arange(len(self.counts)), self.counts)
        return self.buckets[rank[self.steps < 0]]


def anatomy_schedule(counts: np.ndarray, l: int) -> AnatomySchedule:  # noqa: E741
    """Anatomy's group creation (``docs/theory/asap.md#anatomy``) on bucket sizes ``counts``
    (indexed by bucket id).

    Repeatedly takes one row from each of the ``l`` fullest buckets (ties: larger initial size,
    then lower id) while ``l`` buckets are non-empty. Requires ``sum >= l * max`` (l-eligible).
    """
    counts = np.asarray(counts, dtype=np.int64)
    ids = np.flatnonzero(counts > 0)
    order = np.lexsort((ids, -counts[ids]))
    buckets = ids[order]
    c = counts[buckets]
    n = int(c.sum())
    if l < 1:
        raise ParameterError(f"anatomy: l must be at least 1, got {l}")
    if n and n < l * int(c[0]):
        raise ParameterError(f"anatomy: the bucket sizes are not l-eligible for l={l}")
    if n <= SMALL:
        steps, t = _schedule_stepwise(c, l)
    else:
        fast = _schedule_pool(c, l)
        steps, t = fast if fast is not None else _schedule_stepwise(c, l)
    return AnatomySchedule(buckets, c, steps, t)


def _schedule_stepwise(c: np.ndarray, l: int) -> tuple[np.ndarray, int]:  # noqa: E741
    """The greedy one group at a time (reference; used for small profiles and as fallback)."""
    m = len(c)
    left = c.tolist()
    picks: list[list[int]] = [[] for _ in range(m)]
    t = 0
    while True:
        live = [r for r in range(m) if left[r]]
        if len(live) < l:
            break
        live.sort(key=lambda r: (-left[r], r))
        for r in live[:l]:
            left[r] -= 1
            picks[r].append(t)
        t += 1
    for r in range(m):
        picks[r].extend([-1] * left[r])
    flat = [s for p in picks for s in p]
    return np.asarray(flat, dtype=np.int64), t


def _schedule_pool(c: np.ndarray, l: int) -> tuple[np.ndarray, int] | None:  # noqa: E741
    """The greedy computed from the profile (module docstring); None if the check fails.

    ``c`` is sorted by rank (descending). Ranks ``0..a-1`` start *active* (taken by every
    group); the rest form the pool. Active rank ``j`` (the smallest active one goes first) is
    skipped at the first group ``t`` where more than ``l - a`` pool buckets hold more rows than
    it does (``c[j] - t``), or where it is empty; from then on it is a pool bucket of size
    ``c[j] - t``. Its cells then sit ahead of every unconsumed pool cell of their level, and
    every level at or below its size is still untouched, so the consumed prefix is unchanged.
    """
    m = len(c)
    n = int(c.sum())
    total = n // l  # groups created (Property 1: each bucket ends with at most one row)
    a = min(l, m)
    top = int(c[0])
    size = c.copy()  # pool size of each rank (an active rank's is set when it joins)
    joined = np.zeros(m, dtype=np.int64)  # group at which an initially active rank joins
    in_pool = np.zeros(m, dtype=bool)
    in_pool[a:] = True

    def columns() -> tuple[np.ndarray, np.ndarray]:
        # width[h] = pool buckets with size >= h; before[h] = pool cells above level h
        width = np.cumsum(np.bincount(np.where(in_pool, size, 0), minlength=top + 2)[::-1])[::-1]
        above = np.cumsum(width[::-1])[::-1]
        return width, np.concatenate([above[1:], [0]])

    seg_t = [0]
    seg_pos = [0]
    seg_size = [l - a]
    t0, pos0, chunk = 0, 0, l - a
    width, before = columns()
    for j in range(a - 1, -1, -1):
        t = np.arange(t0, min(int(c[j]), total) + 1, dtype=np.int64)
        mine = c[j] - t  # rank j's size at group t
        level = np.minimum(mine + 1, top + 1)
        pos = pos0 + (t - t0) * chunk
        w = np.where(mine + 1 <= top, width[level], 0)
        fuller = w - np.clip(pos - before[level], 0, w)  # pool buckets with size > mine
        hit = (mine == 0) | (fuller > chunk)
        tj = int(t[np.argmax(hit)]) if hit.any() else total
        joined[j] = tj
        size[j] = c[j] - tj
        in_pool[j] = True
        pos0 += (tj - t0) * chunk
        t0 = tj
        chunk += 1
        seg_t.append(tj)
        seg_pos.append(pos0)
        seg_size.append(chunk)
        width, before = columns()

    # the pool's cells, bucket-major (each bucket's cells by level descending = time order)
    pool_size = np.where(in_pool, size, 0)
    rank = np.repeat(np.arange(m, dtype=np.int64), pool_size)
    start = np.concatenate([[0], np.cumsum(pool_size)[:-1]])
    level = pool_size[rank] - (np.arange(rank.shape[0]) - start[rank])
    # position of every cell in the pool sequence (level descending, then rank)
    seq = np.argsort((top - level) * m + rank, kind="stable")
    where = np.empty_like(seq)
    where[seq] = np.arange(seq.shape[0])
    st = np.asarray(seg_t, dtype=np.int64)
    sp = np.asarray(seg_pos, dtype=np.int64)
    sz = np.asarray(seg_size, dtype=np.int64)
    consumed = int(sp[-1] + (total - st[-1]) * sz[-1])
    seg = np.searchsorted(sp, where, side="right") - 1
    pool_step = st[seg] + (where - sp[seg]) // np.maximum(sz[seg], 1)
    pool_step[where >= consumed] = -1

    # every rank's picks in time order: active groups first, then its pool cells
    active = np.where(np.arange(m) < a, joined, 0)
    out = np.empty(n, dtype=np.int64)
    offs = np.concatenate([[0], np.cumsum(c)[:-1]])
    act_rank = np.repeat(np.arange(m, dtype=np.int64), active)
    act_start = np.concatenate([[0], np.cumsum(active)[:-1]])
    k = np.arange(act_rank.shape[0]) - act_start[act_rank]
    out[offs[act_rank] + k] = k
    cell_k = np.arange(rank.shape[0]) - start[rank]
    out[offs[rank] + active[rank] + cell_k] = pool_step
    # consistency: a bucket gives at most one row per group, in creation order, and keeps at
    # most one (last) residue; n - l * total residues in all
    same = np.repeat(np.arange(m), c)
    same = same[1:] == same[:-1]
    now, nxt = out[:-1], out[1:]
    if np.any(same & ((now < 0) | ((nxt <= now) & (nxt >= 0)))):
        return None
    if int(np.count_nonzero(out < 0)) != n - total * l:
        return None
    return out, total


# -- rows into groups ------------------------------------------------------------------------------
def anatomy_groups(
    bucket: np.ndarray,
    l: int,  # noqa: E741
    *,
    seed: Seed = None,
    pick: str = "random",
) -> np.ndarray:
    """Anatomy on rows with the given bucket ids; the group id of every row.

    Group ids are ``0..n_groups-1`` in creation order. ``pick`` is ``"random"`` or
    ``"lowest-row"`` (module docstring). Requires l-eligibility. ``seed`` (an int, a
    :class:`numpy.random.Generator` to share a stream, or None for fresh OS randomness) drives
    the random picks and residue placement; unused with ``pick="lowest-row"``.

    **The row choice.** Group creation takes rows out of each bucket one at a time; with
    ``pick="random"`` the row is uniform among those left in the bucket, independently of the
    other buckets. That is the same as fixing, per bucket, a uniformly random order of its rows
    in advance and taking them in that order, so the rows are matched to their bucket's picks
    by :func:`kerckhoffs.randomness.order_within` over the buckets: ``prod(b_i!)`` equally likely
    outcomes for buckets of sizes ``b_i`` (the random-worlds auditor enumerates exactly those;
    ``docs/theory/asap.md#audits``). Only which rows of a bucket go to which of its groups
    matters for the output, and Theorem 7.2 (paper 000) needs exactly this uniform choice.

    >>> anatomy_groups(np.array([0, 0, 1, 1]), 2, pick="lowest-row").tolist()
    [0, 1, 0, 1]
    """
    if pick not in PICKS:
        raise ParameterError(f"anatomy: pick must be one of {', '.join(PICKS)}, got {pick!r}")
    rng = generator(seed) if pick == "random" else None
    bucket = np.asarray(bucket, dtype=np.int64)
    n = bucket.shape[0]
    counts = np.bincount(bucket) if n else np.zeros(0, dtype=np.int64)
    sched = anatomy_schedule(counts, l)
    steps = _place_residues(sched, rng)
    # the rows of each bucket in pick order, buckets in rank order
    rank_of = np.zeros(counts.shape[0], dtype=np.int64)
    rank_of[sched.buckets] = np.arange(sched.buckets.shape[0])
    row_rank = rank_of[bucket]
    if rng is not None:
        rows = order_within(row_rank, rng)
    else:
        small = np.int16 if sched.buckets.shape[0] < 2**15 else np.int64
        rows = np.argsort(row_rank.astype(small), kind="stable")
    group = np.empty(n, dtype=np.int32)
    group[rows] = steps
    return group


def _place_residues(sched: AnatomySchedule, rng: np.random.Generator | None) -> np.ndarray:
    """:attr:`AnatomySchedule.steps` with every residue replaced by the group it joins."""
    steps = sched.steps.copy()
    cells = np.flatnonzero(steps < 0)
    if cells.shape[0] == 0:
        return steps
    total = sched.n_groups
    if total == 0:
        raise ParameterError("anatomy: no group could be formed")
    rank = np.repeat(np.arange(sched.counts.shape[0]), sched.counts)
    offs = sched.offsets
    eligible = []
    for cell in cells.tolist():
        r = int(rank[cell])
        ok = np.ones(total, dtype=bool)
        ok[steps[offs[r] : offs[r] + sched.counts[r] - 1]] = False  # groups holding its value
        eligible.append(ok)
    # most constrained first (fewest eligible groups), ties by bucket rank
    todo = sorted(range(len(cells)), key=lambda i: (int(eligible[i].sum()), int(rank[cells[i]])))
    owner: dict[int, int] = {}  # group -> residue holding it

    def choose(options: np.ndarray) -> int:
        return int(options[rng.integers(options.shape[0])] if rng is not None else options[0])

    def free_for(i: int) -> np.ndarray:
        mask = eligible[i].copy()
        if owner:
            mask[list(owner)] = False
        return np.flatnonzero(mask)

    def place(i: int, visited: set[int]) -> bool:
        options = free_for(i)
        if options.shape[0]:
            owner[choose(options)] = i
            return True
        # every eligible group holds a residue (so there are fewer than l of them): try to
        # move one of those residues elsewhere (augmenting path)
        for g in np.flatnonzero(eligible[i]).tolist():
            k = owner[g]
            if k in visited:
                continue
            visited.add(k)
            if place(k, visited):  # k found another group; g is i's now
                owner[g] = i
                return True
        return False

    shared = [i for i in todo if not place(i, {i})]
    placed = {i: g for g, i in owner.items()}
    if shared:
        # more residues than groups can take one each (fewer groups than residues): share
        # the least loaded eligible groups, never one holding the residue's own value
        load = np.bincount(np.asarray(list(placed.values()), dtype=np.int64), minlength=total)
        for i in shared:
            options = np.flatnonzero(eligible[i])
            options = options[load[options] == load[options].min()]
            placed[i] = choose(options)
            load[placed[i]] += 1
    for i, cell in enumerate(cells.tolist()):
        steps[cell] = placed[i]
    return steps


@register(
    "anatomy",
    algorithm_safe=True,
    summary="Anatomy: l-diverse bucketization, QI table + SA table (Xiao & Tao 2006)",
    models=("LDiversity",),
    schemes=(Scheme.BUCKETIZATION,),
    randomized=True,
    options={
        "pick": "random (default) | lowest-row: which row leaves a bucket (lowest-row leaks "
        "through the row order; for auditors)",
    },
)
def anatomy(
    table: Table,
    models: list[PrivacyModel],
    *,
    seed: Seed = None,
    pick: str = "random",
) -> Release:
    """Anatomy for frequency l-diversity (``docs/theory/asap.md#anatomy``), published by
    bucketization.

    Reads ``l`` (a whole number) from :class:`~kerckhoffs.models.LDiversity`, the only model it
    accepts. Raises :class:`~kerckhoffs.errors.ParameterError` for other models or a table that
    is not l-eligible (``|T| < l * S_max(T)``), naming l and the most frequent SA value.
    ``seed`` (an int, a :class:`numpy.random.Generator`, or None for fresh randomness from the
    operating system, the default and the only safe choice for publishing) drives the random
    picks: same seed, same release. Unused with ``pick="lowest-row"``.
    """
    l, bucket = l_eligible_buckets(table, models, "anatomy")  # noqa: E741
    if pick not in PICKS:
        raise ParameterError(f"anatomy: pick must be one of {', '.join(PICKS)}, got {pick!r}")
    group = anatomy_groups(bucket, l, seed=seed, pick=pick)
    return Release(
        table,
        Partition.from_labels(group),
        Scheme.BUCKETIZATION,
        table.sa,
        Provenance("anatomy", {"l": l, "pick": pick}),
    )
