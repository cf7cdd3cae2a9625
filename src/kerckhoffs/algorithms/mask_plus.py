"""MASK+ and MASK++ (paper 000 Algorithm 3 and Theorem 6.3; Algorithms 5-6 for the pick-up):
the algorithm-safe variants of MASK (:mod:`kerckhoffs.algorithms.mask`).

MASK reads every group's original counts before deciding to distort it, which the release then
no longer shows (paper 000 section 2.2). MASK+ decides instead by a local look-ahead over
counts (:func:`mask_plus_lookahead`, :func:`mask_plus_counts`); MASK++ refines each MASK+ group
by stratified pick-up (:func:`kerckhoffs.algorithms.pickup.pickup`). Both start from MASK's
blind k-anonymous grouping (:func:`kerckhoffs.algorithms.mask.base_partition`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from kerckhoffs.algorithms.mask import base_partition
from kerckhoffs.algorithms.mondrian import mondrian
from kerckhoffs.algorithms.pickup import pickup
from kerckhoffs.algorithms.registry import lookup, parse_scheme, pick, refuse_others, register
from kerckhoffs.algorithms.sa_reads import SAReadLog
from kerckhoffs.data.schema import SensitiveMode
from kerckhoffs.data.table import Table
from kerckhoffs.errors import InternalError, ParameterError
from kerckhoffs.models.base import PrivacyModel
from kerckhoffs.models.k_anonymity import KAnonymity
from kerckhoffs.models.m_confidentiality import MConfidentiality
from kerckhoffs.randomness import Seed, generator, order_within
from kerckhoffs.release import Partition, Provenance, Release, Scheme
from kerckhoffs.segments import rank_within

FILL_ORDERS = ("random", "paper")


def lookahead_domain(table: Table) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The values MASK+ counts: ``(value_of_code, sensitive, first_code)``.

    The domain is the whole declared SA domain (every code of the SA column, present or not:
    public, so it leaks nothing). Every code is its own value, except that a sensitive subset in
    ``set`` mode is one value (m-confidentiality bounds the subset's total, paper 001), placed at
    its first code. ``value_of_code[c]`` maps an SA code to its value, ``sensitive[v]`` says
    whether value ``v`` is bounded by ``floor(|G| / m)``, ``first_code[v]`` is its first code.
    """
    sens = np.asarray(table.sensitive, dtype=bool)
    codes = np.arange(table.n_sa)
    key = codes
    if sens.any() and not sens.all() and table.schema.sensitive_mode == SensitiveMode.SET:
        key = np.where(sens, int(np.flatnonzero(sens)[0]), codes)
    first, value_of_code = np.unique(key, return_inverse=True)
    return value_of_code.astype(np.int64), sens[first], first


@dataclass(frozen=True, eq=False)
class LookAhead:
    """MASK+'s decision for every group (paper 000 Algorithm 3,
    ``docs/theory/asap.md#mask-plus``), before any row changes.

    ``order[g]`` lists the values in ascending count order (ties: non-sensitive first, then
    value order); ``sorted_counts[g]`` their counts ``f_1 <= ... <= f_D``; ``cap[g]`` is
    ``floor(|G| / m)``; ``read[g]`` is ``r``, the number of values read (``D`` when every test
    passes, 0 when even ``f_1`` may not be read); ``perturb[g]`` whether the group's counts are
    redrawn (some test failed and an unread value is sensitive).
    """

    order: np.ndarray
    sorted_counts: np.ndarray
    cap: np.ndarray
    read: np.ndarray
    perturb: np.ndarray


def mask_plus_lookahead(
    counts: np.ndarray, m: int, sensitive: np.ndarray | None = None
) -> LookAhead:
    """MASK+'s local look-ahead on per-group value counts ``counts`` [groups, D].

    A function of the counts alone, so re-running it on the *published* counts gives the same
    ``read`` and ``perturb`` (the simulatability MASK+ rests on, a property the tests check:
    ``docs/theory/asap.md#properties``).

    - ``f_1`` is read iff ``floor(|G|/D) <= cap`` and the rest can still absorb the group:
      ``(D - 1) * cap >= |G|`` or at least two values are non-sensitive (paper 000's perturbation
      is infeasible at ``r = 1``: ``docs/theory/asap.md#err-mask-plus-r1``; a test on ``|G|`` and
      the schema only).
      Otherwise ``r = 0``.
    - ``f_i`` (``i = 2 .. D-1``, inclusive; paper 000 Algorithm 3's loop exits one test early,
      before ``i = D - 1``: ``docs/theory/asap.md#err-mask-plus-loop``) is read iff
      ``B_i = (|G| - sum_{j<i} f_j - f_{i-1}) / (D - i) <= cap`` (Eq. 21), tested in integers
      as ``|G| - sum_{j<i} f_j - f_{i-1} <= cap * (D - i)``.
    - Every test passes: the group is m-confidential as it stands (``r = D``). Otherwise
      ``r = i - 1`` at the first failing ``i``, and the group is perturbed unless every unread
      value is non-sensitive (sensitive-subset setting, our proposal:
      ``docs/theory/asap.md#err-mask-subset``).

    Ties in the ascending order put non-sensitive values first (then value order, the paper's
    fixed SA-domain order), so a published unread value that ties with the last read one never
    hides a sensitive unread value from the re-run (with every value sensitive this is plain
    value order, as in the paper).
    """
    counts = np.asarray(counts, dtype=np.int64)
    n_groups, d = counts.shape
    sens = np.ones(d, dtype=bool) if sensitive is None else np.asarray(sensitive, dtype=bool)
    sizes = counts.sum(axis=1)
    cap = sizes // m
    key = counts * (2 * d) + sens[None, :].astype(np.int64) * d + np.arange(d)[None, :]
    order = np.argsort(key, axis=1, kind="stable")
    f = np.take_along_axis(counts, order, axis=1)
    n_ns = int(d - sens.sum())
    read1 = (sizes // max(d, 1) <= cap) & (((d - 1) * cap >= sizes) | (n_ns >= 2))
    r = np.full(n_groups, d, dtype=np.int64)
    if d >= 3:
        i = np.arange(2, d)  # 1-based i = 2 .. D-1
        csum = np.cumsum(f, axis=1)
        num = sizes[:, None] - csum[:, i - 2] - f[:, i - 2]
        fail = num > cap[:, None] * (d - i)[None, :]
        any_fail = fail.any(axis=1)
        r = np.where(any_fail, i[np.argmax(fail, axis=1)] - 1, d)
    r = np.where(read1, r, 0)
    unread = np.arange(d)[None, :] >= r[:, None]
    perturb = (unread & sens[order]).any(axis=1)
    return LookAhead(order, f, cap, r, perturb)


def mask_plus_counts(
    look: LookAhead,
    sensitive: np.ndarray,
    seed: Seed = None,
    fill_order: str = "random",
) -> np.ndarray:
    """The counts MASK+ publishes, per group and value (columns in value order, not sorted).

    Groups not perturbed keep their counts. In a perturbed group the ``r`` read values keep theirs;
    every unread value starts at ``f_r`` (0 when ``r = 0``) and the rest of the group is poured in,
    value by value, up to each value's cap (``floor(|G|/m)`` if sensitive, ``|G|`` if not:
    non-sensitive values absorb the excess), paper 000 Algorithm 3 line 12 as we write it out
    (``docs/theory/asap.md#mask-plus``). ``fill_order="paper"`` pours in descending original count
    order (the paper's, needed for its figures and for our MASK+ test vectors,
    ``docs/theory/asap.md#worked-examples``, but that order is unread information: the printed fill
    order reads the unread counts' ranking, ``docs/theory/asap.md#err-mask-plus-fill``);
    ``"random"`` (default) in a uniformly random order, so the published counts depend on nothing
    but the read values and the seed. ``seed``: an int, a :class:`numpy.random.Generator` (MASK+
    passes its one stream), or None for fresh OS
    randomness; unused with ``fill_order="paper"``.
    """
    if fill_order not in FILL_ORDERS:
        raise ParameterError(f"mask+: fill_order must be one of {', '.join(FILL_ORDERS)}")
    rng = generator(seed)
    f = look.sorted_counts
    d = f.shape[1]
    out_sorted = f.copy()
    pg = np.flatnonzero(look.perturb)
    if pg.size:
        fp = f[pg]
        r = look.read[pg]
        sizes = fp.sum(axis=1)
        pos = np.arange(d)[None, :]
        unread = pos >= r[:, None]
        lb = np.where(r > 0, fp[np.arange(pg.size), np.maximum(r - 1, 0)], 0)
        caps = np.where(sensitive[look.order[pg]], look.cap[pg, None], sizes[:, None])
        new = np.where(unread, lb[:, None], fp)
        rest = sizes - new.sum(axis=1)
        room = np.where(unread, caps - lb[:, None], 0)
        if fill_order == "paper":
            perm = np.broadcast_to(np.arange(d)[::-1], (pg.size, d))
        else:
            perm = _unread_first_random(unread, rng)
        room_o = np.take_along_axis(room, perm, axis=1)
        before = np.cumsum(room_o, axis=1) - room_o
        add_o = np.clip(rest[:, None] - before, 0, room_o)
        if (add_o.sum(axis=1) != rest).any():  # excluded by the checks in mask_plus
            raise ParameterError("mask+: a perturbed group cannot be filled under its caps")
        add = np.empty_like(add_o)
        np.put_along_axis(add, perm, add_o, axis=1)
        out_sorted[pg] = new + add
    out = np.empty_like(out_sorted)
    np.put_along_axis(out, look.order, out_sorted, axis=1)
    return out


def _unread_first_random(unread: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Per row, the positions of the unread values in uniformly random order, then the read
    ones (which have no room, so their order is irrelevant). Keys are drawn for the unread
    values only: the random-worlds auditor then enumerates ``prod(u!)`` fill orders, not
    ``D!`` per group."""
    ur, uc = np.nonzero(unread)
    o = np.lexsort((rng.random(ur.size), ur))
    ur, uc = ur[o], uc[o]
    perm = np.empty(unread.shape, dtype=np.int64)
    perm[ur, rank_within(ur)] = uc
    rr, rc = np.nonzero(~unread)
    perm[rr, unread.sum(axis=1)[rr] + rank_within(rr)] = rc
    return perm


def _relabel(
    table: Table,
    group: np.ndarray,
    value_of_code: np.ndarray,
    first_code: np.ndarray,
    counts: np.ndarray,
    targets: np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    """Tuple level (paper 000 Algorithm 3; the paper does not say which rows change, random subsets
    chosen: ``docs/theory/asap.md#err-mask-plus-rows``): per (group, value) with ``target < count``
    a uniformly random subset of its rows is freed, and the freed rows of a group are matched to its
    deficits by a uniformly random bijection. Values whose count is kept keep all their rows. A
    freed slot of the merged sensitive set (``set`` mode) gets a uniformly random sensitive code.

    Draws (all from ``rng``): :func:`~kerckhoffs.randomness.order_within` over the (group,
    value) cells, whose first ``count - target`` rows are freed (a uniform order's first ``j``
    is a uniform ``j``-subset); the freed rows in cell order, and the deficits ("slots") in a
    second ``order_within`` over the groups, paired in turn (a fixed order of the rows against
    a uniform order of the slots is a uniform bijection, the distribution of shuffling both);
    then the codes of merged-set slots. Exact uniformity, and an enumerating generator (the
    random-worlds auditor's) sees ``prod(c!)`` cell orders and ``prod(s!)`` slot orders, nothing
    over all rows. Which rows change is visible through MASK++'s pick-up, so it is drawn, not
    fixed (only MASK+ alone publishes no more than each group's multiset)."""
    sa = table.sa
    out = sa.copy()
    d = counts.shape[1]
    remove = np.maximum(counts - targets, 0)
    if not remove.any():
        return out
    val = value_of_code[sa]
    need = remove[group, val]
    rows = np.flatnonzero(need > 0)
    cell = group[rows].astype(np.int64) * d + val[rows]
    order = order_within(cell, rng)  # rows by cell (so by group), uniformly random in a cell
    moved = rows[order][rank_within(cell[order]) < need[rows][order]]
    add = np.maximum(targets - counts, 0).ravel()
    slot_cell = np.repeat(np.arange(add.size), add)
    slot_cell = slot_cell[order_within(slot_cell // d, rng)]  # by group, random in a group
    codes = first_code[slot_cell % d].astype(np.int64)
    sens_codes = np.flatnonzero(table.sensitive)
    is_set = np.bincount(value_of_code, minlength=d)[slot_cell % d] > 1
    if is_set.any():
        codes[is_set] = sens_codes[rng.integers(sens_codes.size, size=int(is_set.sum()))]
    out[moved] = codes.astype(sa.dtype)
    return out


def _k_m(models: list[PrivacyModel], name: str) -> tuple[KAnonymity, MConfidentiality]:
    refuse_others(models, (KAnonymity, MConfidentiality), name)
    km = pick(models, KAnonymity, name)
    mm = pick(models, MConfidentiality, name)
    if km is None or mm is None:
        raise ParameterError(
            f"{name} needs both k-anonymity and m-confidentiality (e.g. k=50, m=3)"
        )
    if km.k < mm.m:
        raise ParameterError(
            f"{name}: k={km.k} must be at least m={mm.m} (a group smaller than m cannot be "
            "m-confidential)"
        )
    return km, mm


def _mask_plus_run(
    table: Table,
    models: list[PrivacyModel],
    rng: np.random.Generator,
    *,
    name: str,
    base: str,
    partition: Partition | None,
    fill_order: str,
    sa_log: SAReadLog | None,
) -> tuple[Partition, np.ndarray, dict[str, Any]]:
    """MASK+ proper: (base partition, published SA codes, provenance parameters)."""
    km, mm = _k_m(models, name)
    k, m = km.k, mm.m
    if fill_order not in FILL_ORDERS:
        raise ParameterError(f"{name}: fill_order must be one of {', '.join(FILL_ORDERS)}")
    whole = Release(table, Partition.single(table.n)).histogram()
    km.validate(whole, table.sa_name)
    mm.validate(whole, table.sa_name)
    if partition is None:
        if base == "mondrian":
            partition = mondrian(
                table, [KAnonymity(k)], seed=rng, sa_log=sa_log, categorical_cuts="median"
            ).partition
        elif (info := lookup(base)) is not None and info.perturbs_sa:
            raise ParameterError(f"{name}: the base k-anonymizer cannot be {base}")
        else:
            partition = base_partition(table, k, base, rng)
        base_name = base
    else:
        if partition.n != table.n:
            raise ParameterError(f"{name}: partition has {partition.n} rows, table has {table.n}")
        base_name = "given partition"
    if partition.sizes.min() < k:
        raise ParameterError(
            f"{name}: the base partition has a group of {int(partition.sizes.min())} rows (< k={k})"
        )
    params: dict[str, Any] = {"k": k, "m": m, "base": base_name, "fill_order": fill_order}
    value_of_code, sens, first_code = lookahead_domain(table)
    if not sens.any():  # nothing sensitive: nothing to bound, nothing to read
        return partition, table.sa.copy(), params
    group = partition.group.astype(np.int64)
    n_groups = partition.n_groups
    d = sens.size
    counts = np.bincount(group * d + value_of_code[table.sa], minlength=n_groups * d).reshape(
        n_groups, d
    )
    sizes = counts.sum(axis=1)
    if sens.all():  # paper 000 footnote 4: |D_S| * floor(|G|/m) >= |G|, a test on |G| only
        bad = np.flatnonzero(d * (sizes // m) < sizes)
        if bad.size:
            g = int(bad[0])
            raise ParameterError(
                f"{name}: a group of {int(sizes[g])} rows cannot hold its values at most "
                f"floor(|G|/m) = {int(sizes[g] // m)} times each over the {d} SA values "
                f"(|D_S| * floor(|G|/m) < |G|; m={m} is too large for this group size)"
            )
    look = mask_plus_lookahead(counts, m, sens)
    if sa_log is not None:
        _log_lookahead(sa_log, table, group, look, value_of_code)
    targets = mask_plus_counts(look, sens, rng, fill_order)
    sa_published = _relabel(table, group, value_of_code, first_code, counts, targets, rng)
    return partition, sa_published, params


def _log_lookahead(
    sa_log: SAReadLog, table: Table, group: np.ndarray, look: LookAhead, value_of_code: np.ndarray
) -> None:
    """Record MASK+'s reads: in every group where ``r >= 1``, the ``r`` smallest counts (each a
    statistic of the whole group: a count is read on the group's rows), with the counts, so the
    audit can confirm they are published unchanged (MASK+ is simulatable,
    ``docs/theory/asap.md#properties``)."""
    read_any = look.read > 0
    rows = np.flatnonzero(read_any[group])
    if rows.size:
        n_groups, d = look.order.shape
        read_value = np.zeros((n_groups, d), dtype=bool)
        g_idx, pos = np.nonzero(np.arange(d)[None, :] < look.read[:, None])
        read_value[g_idx, look.order[g_idx, pos]] = True
        sa_log.record(
            rows,
            group[rows],
            "MASK+ look-ahead: the r smallest SA counts of each group, read while "
            "B_i <= floor(|G|/m) (published unchanged)",
            counted=read_value[:, value_of_code],
            summed=False,
            sa=table.sa,
        )


def _check_m(release: Release, mm: MConfidentiality | None, name: str) -> None:
    if mm is None:  # mask+ and mask++ refuse to run without m (their plans need it)
        raise InternalError(f"{name} ran without an m-confidentiality model")
    result = mm.evaluate(release.histogram())
    if not result.satisfied:  # a bug, not bad input: the construction guarantees it
        raise InternalError(f"{name} produced a group violating m={mm.m}: {result.summary()}")


@register(
    "mask+",
    algorithm_safe=True,
    perturbs_sa=True,
    family="mask",
    base="mask",
    sa_blind=True,
    summary="MASK+ (paper 000 Alg. 3, local look-ahead): k-anonymize on the QIs, read each "
    "group's SA counts in ascending order only while the worst case stays m-confidential, and "
    "redraw the rest keeping every count read (algorithm-safe)",
    models=("KAnonymity", "MConfidentiality"),
    schemes=(Scheme.GENERALIZATION, Scheme.BUCKETIZATION),
    randomized=True,
    options={
        "base": "k-anonymizer of the QI grouping (a registered algorithm name; default mondrian)",
        "fill_order": "random (default, algorithm-safe) | paper: order the unread values are "
        "refilled in (paper = descending original count, leaks their ranking)",
        "scheme": "generalization (default) | bucketization",
    },
)
def mask_plus(
    table: Table,
    models: list[PrivacyModel],
    *,
    seed: Seed = None,
    base: str = "mondrian",
    partition: Partition | None = None,
    fill_order: str = "random",
    scheme: str | Scheme = Scheme.GENERALIZATION,
    sa_log: SAReadLog | None = None,
    **options: Any,
) -> Release:
    """MASK+ (paper 000 Algorithm 3, Theorem 6.3; ``docs/theory/asap.md#mask-plus``), ``k`` from
    :class:`KAnonymity`, ``m`` from :class:`MConfidentiality` (``k >= m``).

    1. Group the rows on their QIs only (Mondrian k-anonymity, ``base`` or ``partition`` as in
       :func:`mask`).
    2. In each group, read the SA counts in ascending order only while the worst case of the
       next one stays below ``floor(|G|/m)`` (:func:`mask_plus_lookahead`); a read count can
       never reveal a violation.
    3. A group whose tests all pass is published as it is. Otherwise the counts read are kept
       exactly and the unread values redrawn between ``f_r`` and their cap
       (:func:`mask_plus_counts`); rows are relabelled at random (:func:`_relabel`).

    Every decision depends only on counts that stay published, so anyone holding the release
    and the QIs can re-run it (Theorem 5.4, "simulatable"); ``sa_log`` records these reads.
    Fixes of the printed algorithm (``docs/theory/asap.md#errors``): the exit test includes
    ``i = |D_S| - 1`` (the printed loop stops one test early,
    ``docs/theory/asap.md#err-mask-plus-loop``); ``f_1`` is read only when the rest can absorb
    the group, else ``r = 0`` and the group gets a data-independent distribution (the printed
    perturbation is infeasible at ``r = 1``, ``docs/theory/asap.md#err-mask-plus-r1``);
    ``fill_order`` (the printed fill order reads the unread counts' ranking,
    ``docs/theory/asap.md#err-mask-plus-fill``); random rows (the paper does not say which rows
    are relabelled, ``docs/theory/asap.md#err-mask-plus-rows``).

    Settings: every value sensitive (each value capped at ``floor(|G|/m)``; a group with
    ``|D_S| * floor(|G|/m) < |G|`` cannot be made m-confidential and raises
    :class:`~kerckhoffs.errors.ParameterError`); a sensitive subset (paper 000 does not cover one;
    our proposal, a deviation from the paper: ``docs/theory/asap.md#err-mask-subset``): the
    look-ahead runs over the whole domain with the uniform cap, a group is left alone when every
    unread value is non-sensitive, and non-sensitive values take the excess (cap ``|G|``). In
    ``set`` mode the subset counts as one value (bounded in total, as m-confidentiality requires); a
    deficit of that set is filled with uniformly random sensitive codes. Randomness only from
    ``generator(seed)``.
    """
    if options:
        raise ParameterError(f"mask+: unknown option {sorted(options)[0]!r}")
    scheme = parse_scheme(scheme, "mask+")
    rng = generator(seed)
    part, sa_pub, params = _mask_plus_run(
        table,
        models,
        rng,
        name="mask+",
        base=base,
        partition=partition,
        fill_order=fill_order,
        sa_log=sa_log,
    )
    params["scheme"] = scheme.value
    release = Release(table, part, scheme, sa_pub, Provenance("mask+", params))
    _check_m(release, pick(models, MConfidentiality, "mask+"), "mask+")
    return release


@register(
    "mask++",
    algorithm_safe=True,
    perturbs_sa=True,
    family="mask",
    base="mask+",
    sa_blind=True,
    summary="MASK++ (paper 000 section 7): MASK+, then stratified pick-up (Anatomy with random "
    "row choice) inside every group of at least 2l rows of its published SA values",
    models=("KAnonymity", "MConfidentiality"),
    schemes=(Scheme.GENERALIZATION, Scheme.BUCKETIZATION),
    randomized=True,
    options={
        "base": "k-anonymizer of the QI grouping (a registered algorithm name; default mondrian)",
        "fill_order": "random (default) | paper: see mask+",
        "pickup_l": "l of the pick-up (default max(k, m), so groups stay k-anonymous; the "
        "paper's l = m needs k = m)",
        "scheme": "generalization (default) | bucketization",
    },
)
def mask_plus_plus(
    table: Table,
    models: list[PrivacyModel],
    *,
    seed: Seed = None,
    base: str = "mondrian",
    partition: Partition | None = None,
    fill_order: str = "random",
    pickup_l: int | None = None,
    scheme: str | Scheme = Scheme.GENERALIZATION,
    sa_log: SAReadLog | None = None,
    **options: Any,
) -> Release:
    """MASK++ (paper 000 Algorithms 5 and 6; ``docs/theory/asap.md#plus-plus``): :func:`mask_plus`,
    then stratified pick-up (:func:`kerckhoffs.algorithms.pickup.pickup`) on the *published*
    (perturbed) SA values.

    Pick-up cuts every MASK+ group of at least ``2 l`` rows into groups of ``l .. 2l - 1``
    rows with pairwise distinct values (the sensitive subset in ``set`` mode counting as one),
    so each holds a value at most once: m-confidential when ``l >= m`` and k-anonymous when
    ``l >= k``. The paper uses ``l = m`` and has no ``k`` after step 1; here ``l`` defaults to
    ``max(k, m)`` so the release satisfies both models given (``pickup_l`` below ``k`` is
    refused: pass ``k = m`` with a ``partition`` to reproduce the paper's setting). Pick-up reads
    only each MASK+ group's published SA multiset, and every MASK+ group is the union of its
    pick-up groups, so MASK++ stays simulatable (Theorem 7.2). One RNG stream (``seed``) drives
    MASK+ and then the pick-up. Published by generalization or bucketization (``scheme``).
    """
    if options:
        raise ParameterError(f"mask++: unknown option {sorted(options)[0]!r}")
    scheme = parse_scheme(scheme, "mask++")
    km, mm = _k_m(models, "mask++")
    if pickup_l is None:
        l_pick = max(km.k, mm.m)
    else:
        if int(pickup_l) != pickup_l or pickup_l < mm.m:
            raise ParameterError(f"mask++: pickup_l must be a whole number >= m={mm.m}")
        l_pick = int(pickup_l)
        if l_pick < km.k:
            raise ParameterError(
                f"mask++: pickup_l={l_pick} < k={km.k} would publish groups smaller than k "
                "(pass k=m and a k-anonymous partition for the paper's l = m)"
            )
    rng = generator(seed)
    part, sa_pub, params = _mask_plus_run(
        table,
        models,
        rng,
        name="mask++",
        base=base,
        partition=partition,
        fill_order=fill_order,
        sa_log=sa_log,
    )
    refined = pickup(table, part, l_pick, rng, sa=sa_pub, sa_log=sa_log)
    params.update(pickup_l=l_pick, scheme=scheme.value)
    release = Release(table, refined, scheme, sa_pub, Provenance("mask++", params))
    _check_m(release, mm, "mask++")
    return release
