"""MASK: Minimality Attack Safe K-anonymity (Wong, Fu, Wang, Pei; paper 001 Algorithm 1).

A minimal anonymizer leaks through its choices: it only generalizes where a group would otherwise
violate l-diversity, so an adversary who knows that can undo the generalization (the minimality
attack, paper 001 sections 4-5: ``docs/theory/minimality.md#attack-global``,
``docs/theory/minimality.md#attack-local`` and ``docs/theory/minimality.md#attack-driver``). MASK
removes the signal at its source (paper 001 Algorithm 1, ``docs/theory/minimality.md#mask``; paper
000's reading of it, ``docs/theory/asap.md#mask``):

1. **Blind grouping.** k-anonymize on the QIs only (Mondrian by default; any registered
   algorithm that enforces k-anonymity, or a given partition), so the groups say nothing
   about the sensitive attribute.
2. **Violations and look-alikes.** ``V`` = the groups holding more than ``floor(|E| / m)`` rows of a
   sensitive set (``|E(s)| / |E| > 1/m``). ``L`` = the ``u = (m - 1) |V|`` satisfying groups with
   the highest proportion of that set (ties: larger groups first, then at random; paper 001 step
   2(a) leaves ties among equal proportions open: ``docs/theory/minimality.md#err-mask-ties``).
   Fewer than ``u`` satisfying groups: the table cannot be published
   (:class:`~kerckhoffs.errors.ParameterError`). ``V`` empty: the k-anonymous table is the release
   (checked first; paper 001 lists this exit after the refusal of step 2(a):
   ``docs/theory/minimality.md#err-mask-exit``).
3. **Distribution.** ``D`` = the empirical distribution of the proportions of ``L`` (each
   group weight ``1/u``).
4. **Distortion.** For each ``E`` in ``V`` draw ``p_E`` from ``D``; keep
   ``target = min(round_half_down(p_E |E|), floor(|E| / m))`` sensitive rows (``p_E |E|`` need not
   be an integer and paper 001 step 4 does not say how to round:
   ``docs/theory/minimality.md#err-mask-rounding``; computed in exact integer arithmetic) and change
   the others, chosen uniformly at random among the group's sensitive rows, to other values. Each
   distorted group then shows a frequency that ``m - 1`` genuine groups also show, so a given
   occurrence of that frequency is a distorted group with probability about ``1/m`` (paper 001
   section 6.1.2).

Only the release's ``sa_published`` changes (``Release.frames`` publishes it); the table's
``sa`` is never written over, and the QI partition is exactly the base partition.

Sensitive sets (paper 001 defines MASK for one sensitive set only:
``docs/theory/minimality.md#err-mask-several-sets``):

- a named subset in ``set`` mode (the schema default; paper 001's setting, e.g. Adult's
  education below high school) is one set;
- a named subset in ``each`` mode: every sensitive value is its own set, each with its own
  ``V``, ``L`` and ``D``;
- no subset (every value sensitive, paper 000 Figure 4b): every value present is its own set.

Replacement values. With a subset, distorted rows get a non-sensitive value. ``replacement =
"nearest"`` (default; paper 001 step 4 says neither which rows change nor to which value:
``docs/theory/minimality.md#err-mask-replacement``) picks the non-sensitive value closest in the SA
hierarchy (the lowest common ancestor with the smallest coverage, i.e. least Definition-7
distortion), ties broken by that value's frequency in the group (most frequent first, so the group's
non-sensitive profile is kept) and then at random; ``"uniform"`` picks uniformly among the
non-sensitive values of the table (paper 000's reading of MASK in section 2.2, which does not give
the replacement distribution or the rounding; we read uniform replacement and ``ceil`` rounding,
``docs/theory/asap.md#err-mask-replacement``; its PhD-25 attack exploits the uniform choice). With
every value sensitive no value is free: each value is capped at ``floor(|E| / m)`` and the removed
rows go to uniformly random free slots below the caps (our proposal, ``docs/theory/asap.md#mask``);
should the drawn targets leave less room than the rows to move, the targets of that group's
violating values are raised (in random order, never above the cap) until the rows fit, and a group
whose values cannot all fit under the cap is refused.

Rounding: ``rounding = "half-down"`` (default, the nearest integer, our resolution for paper 001
above) or ``"ceil"`` (``ceil(p |E|)``, paper 000's reading above); both are capped
at ``floor(|E| / m)``.

MASK reads every group's original counts before deciding to distort it, which the release then no
longer shows; that is its algorithm-based leak (paper 000 section 2.2, S*-independence). The
algorithm-safe variants live beside it, in :mod:`kerckhoffs.algorithms.mask_plus`:
:func:`~kerckhoffs.algorithms.mask_plus.mask_plus` (MASK+, local look-ahead, paper 000 Algorithm 3,
``docs/theory/asap.md#mask-plus``) and :func:`~kerckhoffs.algorithms.mask_plus.mask_plus_plus`
(MASK++, MASK+ then stratified pick-up, paper 000 Algorithms 5 and 6,
``docs/theory/asap.md#plus-plus``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from kerckhoffs.algorithms.mondrian import mondrian
from kerckhoffs.algorithms.registry import get, parse_scheme, pick, refuse_others, register
from kerckhoffs.algorithms.sa_reads import SAReadLog
from kerckhoffs.data.schema import SensitiveMode
from kerckhoffs.data.table import Table
from kerckhoffs.errors import CannotPublish, InternalError, ParameterError
from kerckhoffs.models.base import PrivacyModel
from kerckhoffs.models.histogram import GroupHistogram
from kerckhoffs.models.k_anonymity import KAnonymity
from kerckhoffs.models.m_confidentiality import MConfidentiality
from kerckhoffs.randomness import Seed, generator
from kerckhoffs.release import Partition, Provenance, Release, Scheme
from kerckhoffs.segments import rank_within

REPLACEMENTS = ("nearest", "uniform")
ROUNDINGS = ("half-down", "ceil")


@dataclass(frozen=True, eq=False)
class MaskPlan:
    """What steps 2-4 decided, before any row changes (for tests and diagnostics).

    ``sets[s]`` is a bool mask over SA codes (one sensitive set); ``set_counts[g, s]`` the
    rows of group ``g`` in set ``s``; ``violating[g, s]`` whether ``g`` is in ``V`` for ``s``;
    ``lookalikes[s]`` the group ids of ``L`` for ``s`` (best first); ``drawn[g, s]`` the group of
    ``L`` whose proportion was drawn for ``(g, s)`` (-1 if none); ``targets[g, s]`` the count of
    set ``s`` that group ``g`` publishes.
    """

    sets: list[np.ndarray]
    set_counts: np.ndarray
    violating: np.ndarray
    lookalikes: list[np.ndarray]
    drawn: np.ndarray
    targets: np.ndarray
    all_values: bool

    @property
    def distorted_groups(self) -> np.ndarray:
        """Ids of the groups in ``V`` (violating some set)."""
        return np.flatnonzero(self.violating.any(axis=1))


def sensitive_sets(table: Table) -> tuple[list[np.ndarray], bool]:
    """The sensitive sets MASK protects and whether every value is sensitive (see module doc)."""
    present = np.bincount(table.sa, minlength=table.n_sa) > 0
    codes = np.arange(table.n_sa)
    all_values = bool(table.sensitive.all())
    if all_values:
        return [codes == c for c in codes[present]], True
    sens = table.sensitive & present
    if not sens.any():
        return [], False
    if table.schema.sensitive_mode == SensitiveMode.SET:
        return [table.sensitive.copy()], False
    return [codes == c for c in np.flatnonzero(sens)], False


def _round_half_down(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """Nearest integer to ``num / den`` with halves rounded down: ``ceil(num/den - 1/2)``."""
    return -((den - 2 * num) // (2 * den))


def _ceil_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    return -((-num) // den)


def mask_plan(
    table: Table,
    partition: Partition,
    m: int,
    seed: Seed = None,
    *,
    rounding: str = "half-down",
) -> MaskPlan:
    """Steps 2-3 and the draws of step 4: which groups are distorted and to what counts.

    ``seed``: an int, a :class:`numpy.random.Generator` (a caller's stream: :func:`mask`
    passes the one it then perturbs with), or None for fresh randomness from the operating
    system. It draws the tie order of ``L`` and the proportions drawn from ``D``.
    """
    rng = generator(seed)
    if rounding not in ROUNDINGS:
        raise ParameterError(f"mask: rounding must be one of {', '.join(ROUNDINGS)}")
    sets, all_values = sensitive_sets(table)
    n_groups = partition.n_groups
    counts = GroupHistogram.from_codes(partition.group, table.sa, n_groups, table.n_sa).counts
    sizes = counts.sum(axis=1)
    cap = sizes // m
    n_sets = len(sets)
    onehot = np.zeros((table.n_sa, n_sets), dtype=np.int64)
    for s, mask in enumerate(sets):
        onehot[mask, s] = 1
    set_counts = counts @ onehot
    violating = set_counts > cap[:, None]
    targets = set_counts.copy()
    drawn = np.full((n_groups, n_sets), -1, dtype=np.int64)
    lookalikes: list[np.ndarray] = [np.empty(0, dtype=np.int64) for _ in range(n_sets)]
    in_v = violating.any(axis=1)
    if not in_v.any():  # step 2(b) first (paper 001 lists it after step 2(a)): nothing to distort
        return MaskPlan(sets, set_counts, violating, lookalikes, drawn, targets, all_values)
    good = np.flatnonzero(~in_v)
    for s in range(n_sets):
        vs = np.flatnonzero(violating[:, s])
        if vs.size == 0:
            continue
        u = (m - 1) * vs.size
        if good.size < u:
            what = (
                "the sensitive set"
                if len(sets) == 1 and not all_values
                else (f"value {table.sa_column.labels[int(np.flatnonzero(sets[s])[0])]!r}")
            )
            raise CannotPublish(
                f"mask: {vs.size} group(s) violate m={m} for {what} and MASK needs (m-1)*|V| = "
                f"{u} groups satisfying m, but only {good.size} do (paper 001 Algorithm 1, "
                "step 2a): the table cannot be published with these k and m"
            )
        prop = set_counts[good, s] / sizes[good]
        tie = rng.random(good.size)
        order = np.lexsort((tie, -sizes[good], -prop))
        chosen = good[order[:u]]
        lookalikes[s] = chosen
        pick_ = chosen[rng.integers(u, size=vs.size)]
        drawn[vs, s] = pick_
        num = set_counts[pick_, s] * sizes[vs]
        den = sizes[pick_]
        t = _round_half_down(num, den) if rounding == "half-down" else _ceil_div(num, den)
        targets[vs, s] = np.minimum(t, cap[vs])
    if all_values:
        _fit_all_values(counts, cap, sets, violating, targets, rng, m)
    return MaskPlan(sets, set_counts, violating, lookalikes, drawn, targets, all_values)


def _fit_all_values(
    counts: np.ndarray,
    cap: np.ndarray,
    sets: list[np.ndarray],
    violating: np.ndarray,
    targets: np.ndarray,
    rng: np.random.Generator,
    m: int,
) -> None:
    """Raise targets of groups whose free room cannot take the removed rows (in place)."""
    set_codes = np.array([int(np.flatnonzero(mask)[0]) for mask in sets])
    vgroups = np.flatnonzero(violating.any(axis=1))
    sub = counts[vgroups][:, set_codes]
    room = np.where(violating[vgroups], 0, cap[vgroups, None] - sub).sum(axis=1)
    excess = (violating[vgroups] * (sub - targets[vgroups])).sum(axis=1)
    for i in np.flatnonzero(excess > room):
        g = vgroups[i]
        need = int(excess[i] - room[i])
        for s in rng.permutation(np.flatnonzero(violating[g])):
            add = min(int(cap[g] - targets[g, s]), need)
            targets[g, s] += add
            need -= add
            if need == 0:
                break
        if need > 0:
            raise ParameterError(
                f"mask: a group of {int(counts[g].sum())} rows cannot hold its "
                f"{len(sets)} distinct values at most floor(|G|/m) = {int(cap[g])} times each "
                f"(m={m} is too large for this group size)"
            )


def _sa_distance(table: Table) -> np.ndarray:
    """Coverage of the lowest common SA-hierarchy ancestor of every pair of SA codes.

    Without an SA hierarchy every pair of distinct values is equally far (the flat taxonomy).
    """
    n_sa = table.n_sa
    col = table.sa_column
    h = col.hierarchy
    if h is None:
        dist = np.full((n_sa, n_sa), 2, dtype=np.int64)
        np.fill_diagonal(dist, 1)
        return dist
    leaves = col.leaves(np.arange(n_sa))
    li = np.repeat(leaves, n_sa)
    lj = np.tile(leaves, n_sa)
    level = h.lca_level(np.minimum(li, lj), np.maximum(li, lj))
    cov = np.stack([h.coverage(lv)[h.node_ids[lv][leaves]] for lv in range(h.height + 1)])
    pos = np.repeat(np.arange(n_sa), n_sa)
    return cov[level, pos].reshape(n_sa, n_sa)


def mask_perturb(
    table: Table,
    partition: Partition,
    m: int,
    seed: Seed = None,
    *,
    replacement: str = "nearest",
    rounding: str = "half-down",
    plan: MaskPlan | None = None,
) -> np.ndarray:
    """Steps 2-4 of MASK on a given (k-anonymous) partition: the published SA codes.

    Returns a new array; ``table.sa`` is not modified. Rows outside the groups of ``V`` keep
    their value, and inside a distorted group only rows of a violating set change. ``seed``
    (an int, a :class:`numpy.random.Generator`, or None for fresh OS randomness) draws the
    plan when none is given (:func:`mask_plan`, from the same generator), the rows changed and
    their new values.
    """
    if replacement not in REPLACEMENTS:
        raise ParameterError(f"mask: replacement must be one of {', '.join(REPLACEMENTS)}")
    rng = generator(seed)
    if plan is None:
        plan = mask_plan(table, partition, m, rng, rounding=rounding)
    sa = table.sa
    out = sa.copy()
    n_sets = len(plan.sets)
    if n_sets == 0 or not plan.violating.any():
        return out
    group = partition.group.astype(np.int64)
    set_of_code = np.full(table.n_sa, -1, dtype=np.int64)
    for s, mask in enumerate(plan.sets):
        set_of_code[mask] = s
    remove = np.where(plan.violating, plan.set_counts - plan.targets, 0)

    # which rows change: uniformly random among each (group, set)'s rows
    rows = np.flatnonzero(set_of_code[sa] >= 0)
    s_row = set_of_code[sa[rows]]
    need = remove[group[rows], s_row]
    rows, s_row, need = rows[need > 0], s_row[need > 0], need[need > 0]
    key = rng.random(rows.size)
    pair = group[rows] * n_sets + s_row
    order = np.lexsort((key, pair))
    rank = rank_within(pair[order])
    moved = rows[order][rank < need[order]]  # sorted by group, random inside a group
    if moved.size == 0:
        return out
    g_moved = group[moved]

    present = np.bincount(sa, minlength=table.n_sa) > 0
    if plan.all_values:
        out[moved] = _fill_free_slots(table, group, partition.n_groups, plan, g_moved, m, rng)
        return out
    receivers = np.flatnonzero(present & ~table.sensitive)
    if receivers.size == 0:
        raise ParameterError(
            "mask: every value of the sensitive attribute in the table is sensitive, so there "
            "is no non-sensitive value to distort into"
        )
    if replacement == "uniform":
        out[moved] = receivers[rng.integers(receivers.size, size=moved.size)]
        return out
    counts = np.bincount(
        group * table.n_sa + sa, minlength=partition.n_groups * table.n_sa
    ).reshape(partition.n_groups, table.n_sa)
    dist = _sa_distance(table)[sa[moved]][:, receivers].astype(np.float64)
    best = dist == dist.min(axis=1, keepdims=True)
    freq = np.where(best, counts[g_moved][:, receivers], -1)
    best &= freq == freq.max(axis=1, keepdims=True)
    tie = np.where(best, rng.random(best.shape), -1.0)
    out[moved] = receivers[np.argmax(tie, axis=1)]
    return out


def _fill_free_slots(
    table: Table,
    group: np.ndarray,
    n_groups: int,
    plan: MaskPlan,
    g_moved: np.ndarray,
    m: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Every value sensitive: new values for the moved rows (sorted by group), drawn as
    uniformly random free slots under each value's cap ``floor(|E| / m)``."""
    n_sa = table.n_sa
    counts = np.bincount(group * n_sa + table.sa, minlength=n_groups * n_sa).reshape(n_groups, n_sa)
    vgroups = np.unique(g_moved)
    cap = counts[vgroups].sum(axis=1) // m
    set_codes = np.array([int(np.flatnonzero(mask)[0]) for mask in plan.sets])
    free = np.zeros((vgroups.size, n_sa), dtype=np.int64)
    viol = plan.violating[vgroups]
    free[:, set_codes] = np.where(viol, 0, cap[:, None] - counts[vgroups][:, set_codes])
    flat = free.ravel()
    slot_cell = np.repeat(np.arange(flat.size), flat)
    slot_group = slot_cell // n_sa
    slot_value = slot_cell % n_sa
    order = np.lexsort((rng.random(slot_cell.size), slot_group))
    rank = rank_within(slot_group[order])
    n_moved = np.bincount(np.searchsorted(vgroups, g_moved), minlength=vgroups.size)
    take = order[rank < n_moved[slot_group[order]]]
    return slot_value[take].astype(table.sa.dtype)


def base_partition(table: Table, k: int, base: str, rng: np.random.Generator) -> Partition:
    """Step 1: a k-anonymous partition made from the QIs only (drawing, if it draws, from the
    caller's generator ``rng``)."""
    if base == "mondrian":  # the median cut of paper 000's MASK runs, which its reproductions keep
        return mondrian(table, [KAnonymity(k)], seed=rng, categorical_cuts="median").partition
    if base == "mask":
        raise ParameterError("mask: the base k-anonymizer cannot be mask itself")
    return get(base).run(table, [KAnonymity(k)], seed=rng).partition


def _log_mask_reads(sa_log: SAReadLog, table: Table, partition: Partition, plan: MaskPlan) -> None:
    """Record MASK's SA reads: every group's count of each sensitive set (step 2), then the
    satisfying groups' proportions when some group is distorted (they are what ``L`` and ``D``
    are built from). The counts are kept, so the audit sees that the distorted groups publish
    counts other than the ones read."""
    rows = np.arange(partition.n)
    for s, mask_s in enumerate(plan.sets):
        sa_log.record(
            rows,
            partition.group,
            f"MASK step 2: count of sensitive set {s + 1} in every group",
            counted=mask_s,
            summed=True,
            sa=table.sa,
        )
    in_v = np.asarray(plan.violating.any(axis=1), dtype=bool)
    if in_v.any():
        good = ~in_v[partition.group]
        sa_log.record(
            rows[good],
            partition.group[good],
            "MASK steps 2-3: proportions of the satisfying groups (look-alikes L, distribution D)",
            counted=np.ones(table.n_sa, dtype=bool),
            sa=table.sa,
        )


@register(
    "mask",
    perturbs_sa=True,
    sa_blind=True,
    summary="MASK (paper 001 Alg. 1): k-anonymize on the QIs, then distort the sensitive "
    "values of m-confidentiality-violating groups to frequencies of genuine groups",
    models=("KAnonymity", "MConfidentiality"),
    schemes=(Scheme.GENERALIZATION, Scheme.BUCKETIZATION),
    randomized=True,
    options={
        "base": "k-anonymizer of step 1 (a registered algorithm name; default mondrian)",
        "replacement": "nearest (default) | uniform: value given to distorted rows",
        "rounding": "half-down (default) | ceil: rounding of p_E * |E|",
        "scheme": "generalization (default) | bucketization (paper 001 section 6.2)",
    },
)
def mask(
    table: Table,
    models: list[PrivacyModel],
    *,
    seed: Seed = None,
    base: str = "mondrian",
    partition: Partition | None = None,
    replacement: str = "nearest",
    rounding: str = "half-down",
    scheme: str | Scheme = Scheme.GENERALIZATION,
    sa_log: SAReadLog | None = None,
    **options: Any,
) -> Release:
    """MASK with ``k`` from :class:`KAnonymity` and ``m`` from :class:`MConfidentiality`.

    ``partition`` replaces step 1 with a given k-anonymous partition (it must ignore the SA for
    MASK's guarantee to hold). ``seed``: an int (tests and experiments), a
    :class:`numpy.random.Generator`, or None (default) for fresh randomness from the operating
    system. Randomness (the base k-anonymizer's, if it draws; the tie order of ``L``, the draws
    from ``D``, the rows changed and their new values) comes only from the one generator
    ``generator(seed)``, built once and passed to every step: two generators built from one int
    seed would draw the same numbers.

    ``sa_log`` (information-flow audit, ``docs/theory/asap.md#audits``) records what MASK reads:
    the sensitive count of every group (the violation test of step 2) and, when some group
    violates, the proportions of the satisfying groups (the look-alikes ``L`` and the
    distribution ``D``). Every such row set is a group of the release, so a row-set audit
    alone would pass MASK; its leak is that the counts read are the *original* ones, which the
    distorted groups no longer publish (S*-independence, paper 000 section 5.1,
    ``docs/theory/asap.md#necessary-conditions``). The log keeps the counts
    read, so the audit fails MASK whenever it distorts a group; see :func:`mask_plus`.
    """
    if options:
        raise ParameterError(f"mask: unknown option {sorted(options)[0]!r}")
    refuse_others(models, (KAnonymity, MConfidentiality), "mask")
    km = pick(models, KAnonymity, "mask")
    mm = pick(models, MConfidentiality, "mask")
    if km is None or mm is None:
        raise ParameterError("mask needs both k-anonymity and m-confidentiality (e.g. k=50, m=3)")
    k, m = km.k, mm.m  # k < m is allowed (paper 001 Fig. 10 has k = 2 points): a group of
    # fewer than m rows gets the target count floor(|E| / m) = 0 in step 4, so it is distorted
    # to no sensitive value at all, which is m-confidential
    if replacement not in REPLACEMENTS:
        raise ParameterError(f"mask: replacement must be one of {', '.join(REPLACEMENTS)}")
    if rounding not in ROUNDINGS:
        raise ParameterError(f"mask: rounding must be one of {', '.join(ROUNDINGS)}")
    scheme = parse_scheme(scheme, "mask")
    whole = Release(table, Partition.single(table.n)).histogram()
    km.validate(whole, table.sa_name)
    mm.validate(whole, table.sa_name)
    rng = generator(seed)  # one stream for step 1 (if it draws) and steps 2-4
    if partition is None:
        partition = base_partition(table, k, base, rng)
        base_name = base
    else:
        if partition.n != table.n:
            raise ParameterError(f"mask: partition has {partition.n} rows, table has {table.n}")
        base_name = "given partition"
    if partition.sizes.min() < k:
        raise ParameterError(
            f"mask: the base partition has a group of {int(partition.sizes.min())} rows (< k={k})"
        )
    plan = mask_plan(table, partition, m, rng, rounding=rounding)
    if sa_log is not None:
        _log_mask_reads(sa_log, table, partition, plan)
    sa_published = mask_perturb(
        table, partition, m, rng, replacement=replacement, rounding=rounding, plan=plan
    )
    release = Release(
        table,
        partition,
        scheme,
        sa_published,
        Provenance(
            "mask",
            {
                "k": k,
                "m": m,
                "base": base_name,
                "replacement": replacement,
                "rounding": rounding,
            },
        ),
    )
    result = mm.evaluate(release.histogram())
    if not result.satisfied:  # a bug, not bad input: the construction guarantees it
        raise InternalError(f"mask produced a group violating m={m}: {result.summary()}")
    return release
