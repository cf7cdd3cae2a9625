"""The composition (intersection) attack: paper 004 (Ganta, Kasiviswanathan, Smith, KDD 2008)
Algorithm 1, with the paper's anonymity metrics (Definitions 7-9;
``docs/theory/composition.md#metrics`` and ``docs/theory/composition.md#intersection-attack``).

Several organizations publish independent releases of overlapping populations. An adversary
who knows a target's QIs and that the target is in every release locates the target's class
in each release (:mod:`kerckhoffs.attacks.locate`, the paper's ``Get_equivalence_class``),
takes each class's set of *distinct* published SA values ``s_ij`` and intersects them:
``S_i = s_i1 ∩ ... ∩ s_in``. With ``|S_i| = 1`` the target's value is learnt (a *perfect
breach*); with ``|S_i| <= 1/C`` the adversary is at least ``C`` confident (a *partial breach*
at confidence ``C``, the paper's Def. 9, uniform over ``S_i``).

Metrics (``docs/theory/composition.md#metrics``; all over the targets ``P``):

* ``EA_ij = |s_ij|`` (effective prior anonymity w.r.t. release ``j``), ``ÊA_i = |S_i|``
  (effective posterior anonymity), ``drop_i = min_j EA_ij - ÊA_i``;
* the vulnerable population ``VP = {i : drop_i > 0}``, ``PVP_C`` the share with
  ``1 <= |S_i| <= floor(1/C + 1e-9)`` (integer threshold, so ``C = 1/3`` counts ``|S| = 3``);
* averages per release (prior anonymity, partition size ``|e_ij|`` individual-weighted, drop
  ``avg prior_j - avg posterior``) and the mean of per-person drops (both: the paper's
  "average drop" may be either, per release or per person:
  ``docs/theory/composition.md#err-average-drop``);
  presumed anonymity ``k_j`` (the release's ``k`` parameter, else its smallest group) and
  the presumed drop ``mean(min_j k_j - ÊA_i)``.

Our resolutions applied: an individual in several candidate classes of a release keeps the
union of their value sets (paper 004 Definition 6 speaks of a "set of tuples" and Algorithm 1
does not say what several matching classes give:
``docs/theory/composition.md#err-several-matches``); one in none learns nothing from that release
(the whole release's value set, ``docs/theory/composition.md#locators``), and is counted in
:attr:`AttackResult.not_located` (a target missing from some release was not attacked with every
release, so the verdict says how many there are rather than passing a clean SAFE or UNSAFE on part
of the targets); an empty intersection (possible only with imperfect locating, or releases that
disagree on a person's value) is *inconsistent*, counted apart and never a breach
(``docs/theory/composition.md#intersection-attack``). Shares are fractions in [0, 1] (the paper's
percentages / 100); with no targets they are NaN, not a division by zero.

Beyond the paper: negative knowledge ("individual i does not have v",
:class:`~kerckhoffs.attacks.knowledge.NotHaving`) removes values from ``S_i`` after the
intersection; the drop then includes what the knowledge removed. The reported ``sa_value``
is the single value of ``S_i`` when determined, else the most likely one: the value of
``S_i`` maximising the product over releases of its share in the target's class (a
frequency-aware tie-break; the posterior reported stays the paper's ``1/|S_i|``).

Also here: :func:`make_subsets` / :func:`overlapping_releases` build the experiments'
releases (``docs/theory/composition.md#subsets``: random subsets sharing an overlap population, each
anonymized independently by a registered algorithm).

Speed: everything is numpy over (targets x SA values) arrays, in chunks of targets; the
loops run over releases and chunks, never over targets or groups.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs.attacks.composition.chance import against_chance
from kerckhoffs.attacks.knowledge import Knowledge, NotHaving, not_having_mask
from kerckhoffs.attacks.locate import (
    NOT_FOUND,
    Location,
    concat_ranges,
    locate_all,
    locate_rows,
)
from kerckhoffs.attacks.registry import register_attack
from kerckhoffs.attacks.result import AttackResult, tuple_table
from kerckhoffs.data.io import load_json, read_regular
from kerckhoffs.data.schema import Schema
from kerckhoffs.data.table import Table
from kerckhoffs.errors import KerckhoffsError, ParameterError
from kerckhoffs.models.base import PrivacyModel
from kerckhoffs.release import Release, Scheme

NAME = "intersection"
LEVELS = (1.0, 1 / 2, 1 / 3, 1 / 4, 1 / 5)
"""Confidence levels reported in ``details["breach_by_confidence"]`` (our grid for the paper's
figures, which give none: ``docs/theory/composition.md#err-grids``)."""
_CELLS_PER_CHUNK = 1 << 22
"""Target x value cells handled at once (chunks of targets keep memory flat)."""


# -- the core: Algorithm 1 ------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Intersection:
    """Algorithm 1's output for ``m`` targets over ``n_rel`` releases.

    ``values[v]`` is the SA value of column ``v`` (the sorted union of the releases'
    published values). ``possible[i, v]``: value ``v`` is in ``S_i`` (after any negative
    knowledge). ``prior[i, j] = EA_ij = |s_ij|``; ``size[i, j]`` the number of rows in the
    class(es) ``i`` was located in (the whole release when in none). ``likely[i]`` the most
    likely value of ``S_i`` (see the module docstring), -1 when ``S_i`` is empty.
    """

    values: np.ndarray
    possible: np.ndarray
    prior: np.ndarray
    size: np.ndarray
    likely: np.ndarray

    @property
    def m(self) -> int:
        """Number of targets."""
        return int(self.possible.shape[0])

    @property
    def posterior_anonymity(self) -> np.ndarray:
        """``ÊA_i = |S_i|``."""
        return self.possible.sum(axis=1)

    @property
    def drop(self) -> np.ndarray:
        """``Anon_Drop_i = min_j EA_ij - ÊA_i``."""
        return self.prior.min(axis=1) - self.posterior_anonymity

    def value_sets(self) -> list[frozenset[str]]:
        """``S_i`` as sets of values (for tests and small populations: a loop over targets)."""
        return [frozenset(self.values[row].tolist()) for row in self.possible]


def sa_vocabulary(releases: Sequence[Release]) -> np.ndarray:
    """The sorted union of the releases' SA values (as published text)."""
    labels: set[str] = set()
    for r in releases:
        labels.update(str(x) for x in np.asarray(r.table.sa_column.labels, dtype=object))
    return np.array(sorted(labels), dtype=object)


def intersect(
    releases: Sequence[Release],
    locations: Sequence[Location],
    *,
    exclude: np.ndarray | None = None,
    group_counts: Sequence[np.ndarray | None] | None = None,
) -> Intersection:
    """Algorithm 1 of paper 004 (lines 1-7; ``docs/theory/composition.md#intersection-attack``),
    vectorized over targets.

    ``locations[j]`` says where each target is in ``releases[j]`` (every location covers the
    same targets, in the same order). ``exclude`` (bool [m, V] over :func:`sa_vocabulary`)
    marks values a target is known not to have; they are removed from ``S_i``.
    ``group_counts[j]`` (int [groups, labels of release ``j``'s SA column], non-negative),
    when given and not None, replaces release ``j``'s published SA counts per group: a value
    is in ``s_ij`` when its count is positive. :mod:`kerckhoffs.attacks.composition.dp_intersection`
    passes the thresholded noisy counts of a DP release here.
    """
    _check(releases, locations)
    values = sa_vocabulary(releases)
    n_val = values.size
    m = locations[0].n
    n_rel = len(releases)
    if exclude is not None and exclude.shape != (m, n_val):
        raise ParameterError(f"exclude must be a bool array of shape {(m, n_val)}")
    given = list(group_counts) if group_counts is not None else [None] * n_rel
    if len(given) != n_rel:
        raise ParameterError(f"group_counts: need one entry per release ({n_rel})")
    vocab = pd.Index(values)
    counts = []
    for r, g in zip(releases, given, strict=True):
        if g is None and r.scheme == Scheme.DP:
            raise ParameterError(f"{NAME}: {DP_REASON}")
        c = r.histogram().counts.astype(np.int64) if g is None else np.asarray(g, dtype=np.int64)
        labels = np.asarray(r.table.sa_column.labels, dtype=object).astype(str)
        if g is not None and (c.shape != (r.partition.n_groups, labels.size) or (c < 0).any()):
            raise ParameterError(
                f"group_counts: expected non-negative counts of shape "
                f"{(r.partition.n_groups, labels.size)}, got {c.shape}"
            )
        cols = vocab.get_indexer(labels)
        full = np.zeros((c.shape[0] + 1, n_val), dtype=np.int64)
        full[:-1, cols] = c
        full[-1] = full[:-1].sum(axis=0)  # "every class": what an unlocated target learns
        counts.append(full)
    possible = np.zeros((m, n_val), dtype=bool)
    prior = np.zeros((m, n_rel), dtype=np.int64)
    size = np.zeros((m, n_rel), dtype=np.int64)
    likely = np.full(m, -1, dtype=np.int64)
    chunk = max(1, _CELLS_PER_CHUNK // max(n_val, 1))
    for start in range(0, m, chunk):
        stop = min(m, start + chunk)
        acc = np.ones((stop - start, n_val), dtype=bool)
        score = np.ones((stop - start, n_val), dtype=float)
        for j, (loc, full) in enumerate(zip(locations, counts, strict=True)):
            cnt = _class_counts(loc, full, start, stop)
            present = cnt > 0
            acc &= present
            prior[start:stop, j] = present.sum(axis=1)
            tot = cnt.sum(axis=1)
            size[start:stop, j] = tot
            score *= cnt / np.maximum(tot, 1)[:, None]
        if exclude is not None:
            acc &= ~exclude[start:stop]
        possible[start:stop] = acc
        score[~acc] = -1.0
        best = np.argmax(score, axis=1)
        likely[start:stop] = np.where(acc.any(axis=1), best, -1)
    return Intersection(values, possible, prior, size, likely)


def _class_counts(loc: Location, full: np.ndarray, start: int, stop: int) -> np.ndarray:
    """Per target in ``[start, stop)``: SA counts of the union of its candidate classes (the
    extra last row of ``full``, the whole release, for targets in none).

    Targets sharing a candidate set (people with the same QIs, typically) are summed once:
    sets are told apart by a 64-bit sum of random per-group weights and the set size, and
    every target is then checked against its representative element by element, so a hash
    collision costs time, never a wrong answer."""
    ptr = loc.indptr[start : stop + 1]
    n = ptr[1:] - ptr[:-1]
    if np.all(n == 1):
        return full[loc.candidates[ptr[0] : ptr[-1]]]
    rep, of = _distinct_sets(loc.candidates, ptr, n, full.shape[0])
    # one slot per representative: its candidates, or the "whole release" row when none
    n_rep = n[rep]
    nonempty = np.maximum(n_rep, 1)
    offs = np.concatenate([[0], np.cumsum(nonempty)[:-1]])
    slots = np.full(int(nonempty.sum()), full.shape[0] - 1, dtype=np.int64)
    slots[concat_ranges(offs, n_rep)] = loc.candidates[concat_ranges(ptr[:-1][rep], n_rep)]
    who = np.repeat(np.arange(rep.size), nonempty)
    out = np.zeros((rep.size, full.shape[1]), dtype=np.int64)
    by_value = np.ascontiguousarray(full.T, dtype=np.float64)
    for v in np.flatnonzero(full[-1]):  # one weighted bincount per value a release holds
        out[:, v] = np.bincount(who, weights=by_value[v][slots], minlength=rep.size)
    return out[of]


_WEIGHTS = np.random.default_rng(20080824).integers(0, 2**63, 1 << 16, dtype=np.int64)


def _distinct_sets(
    cands: np.ndarray, ptr: np.ndarray, n: np.ndarray, n_groups: int
) -> tuple[np.ndarray, np.ndarray]:
    """Representatives of the distinct candidate sets ``cands[ptr[i]:ptr[i+1]]`` (positions
    into the chunk) and, per target, the index of its representative."""
    weights = _WEIGHTS[np.arange(n_groups) % _WEIGHTS.size] ^ np.arange(n_groups, dtype=np.int64)
    seg = cands[ptr[0] : ptr[-1]]
    local = ptr - ptr[0]
    csum = np.concatenate([[0], np.cumsum(weights[seg], dtype=np.int64)])  # wraps: fine
    key = (csum[local[1:]] - csum[local[:-1]]) * np.int64(1_000_003) + n
    codes, _ = pd.factorize(key)
    first = np.full(codes.max() + 1, n.size, dtype=np.int64)
    np.minimum.at(first, codes, np.arange(n.size))
    rep_of = first[codes]
    # verify element by element; a target differing from its representative is its own
    same = n == n[rep_of]
    idx_t = concat_ranges(ptr[:-1][same], n[same])
    idx_r = concat_ranges(ptr[:-1][rep_of[same]], n[same])
    differs = np.zeros(n.size, dtype=bool)
    bad = cands[idx_t] != cands[idx_r]
    differs[np.repeat(np.flatnonzero(same), n[same])[bad]] = True
    differs |= ~same
    rep_of[differs] = np.flatnonzero(differs)
    rep, of = np.unique(rep_of, return_inverse=True)
    return rep, of.reshape(-1)


def _check(releases: Sequence[Release], locations: Sequence[Location]) -> None:
    if len(releases) == 0:
        raise ParameterError("the intersection attack needs at least one release")
    if len(locations) != len(releases):
        raise ParameterError(
            f"{len(releases)} release(s) but {len(locations)} location(s): give one per release"
        )
    sizes = {loc.n for loc in locations}
    if len(sizes) != 1:
        raise ParameterError(f"the locations cover different numbers of targets: {sorted(sizes)}")
    names = [r.table.sa_name for r in releases]
    for j, name in enumerate(names):
        if name != names[0]:
            raise ParameterError(
                f"release {j} publishes sensitive attribute {name!r}, release 0 {names[0]!r}"
            )
    for j, (r, loc) in enumerate(zip(releases, locations, strict=True)):
        if loc.candidates.size and loc.candidates.max() >= r.partition.n_groups:
            raise ParameterError(f"location {j} names a group release {j} does not have")


# -- the attack and its metrics -------------------------------------------------------------------
def max_values(confidence: float) -> int:
    """The largest ``|S_i|`` that gives confidence at least ``confidence``:
    ``floor(1/C + 1e-9)`` (``docs/theory/composition.md#metrics``: integer thresholds, exact at
    ``C = 1/3``)."""
    if not 0 < confidence <= 1 or math.isnan(confidence):
        raise ParameterError(f"confidence must be in (0, 1], got {confidence}")
    return math.floor(1 / confidence + 1e-9)


def presumed_anonymity(release: Release) -> int:
    """The ``k`` a release promises (paper 004 Def. 7): its ``k`` parameter when its
    provenance records one, else its smallest group."""
    k = release.provenance.parameters.get("k")
    if isinstance(k, int | float) and not isinstance(k, bool):
        return int(k)
    sizes = release.partition.sizes
    return int(sizes.min()) if sizes.size else 0


def intersection_attack(
    releases: Sequence[Release],
    locations: Sequence[Location],
    *,
    confidence: float = 1.0,
    not_having: Sequence[NotHaving] = (),
    ids: Sequence[Any] | np.ndarray | None = None,
    rows: np.ndarray | None = None,
    true_values: Sequence[Any] | np.ndarray | None = None,
) -> AttackResult:
    """Run Algorithm 1 and report per target and in aggregate (module docstring).

    ``locations[j]``: where each target is in ``releases[j]`` (:func:`~kerckhoffs.attacks.
    locate.locate` on cells, or :func:`~kerckhoffs.attacks.locate.locate_rows`, the oracle).
    ``confidence``: a target is *breached* when ``1 <= |S_i| <= floor(1/confidence)``; the
    default 1.0 counts perfect breaches only. ``not_having``: negative knowledge, with
    ``ids`` the targets' ids it refers to (default: target positions 0..m-1). ``rows``: the
    ``row`` column of the tuple table (default: target positions). ``true_values``: the
    targets' real SA values, for the evaluation-only ``truth_in_set`` share.

    Tuple table: ``row, sa_value, posterior = 1/|S_i|, breached``, then ``n_values``
    (``|S_i|``), ``anonymity_drop``, ``id`` (when ids are given), ``true_value`` (when
    given) and per release ``j``: ``group_j`` (the class, -1 none, -2 several) and ``ea_j``
    (``EA_ij``). ``not_located`` of the result: the targets some release has no class for
    (``group_j = -1`` for some ``j``).
    """
    refuse_dp(releases)
    return attack_result(
        releases,
        locations,
        confidence=confidence,
        not_having=not_having,
        ids=ids,
        rows=rows,
        true_values=true_values,
    )


DP_REASON = "a DP release publishes noisy counts, not groups; see dp-intersection"
"""Why the intersection attack refuses a DP release (its ``applies`` and its error)."""


SYNTHETIC_REASON = (
    "a synthetic release publishes rows drawn from a DP model, not anyone's record: a value "
    "the attack infers says something only where it is right more often than chance, which "
    "needs the targets' true values (a population column named like the sensitive attribute)"
)
"""Why the intersection attack does not run on a synthetic release without the targets' true
values (its ``applies``): a perfect breach there names a value of synthetic rows, not a
disclosure; with them, the breaches are judged against chance
(:func:`kerckhoffs.attacks.composition.chance.against_chance`)."""


def _synthetic(releases: Sequence[Release], on_disk: Sequence[object] = ()) -> bool:
    """Whether a synthetic release is among ``releases`` (in memory) or the schemes
    ``on_disk`` read from the known releases' ``release.json``."""
    return any(r.scheme == Scheme.SYNTHETIC for r in releases) or (
        Scheme.SYNTHETIC.value in on_disk
    )


def refuse_dp(releases: Sequence[Release]) -> None:
    """A one-line ParameterError when a release is a DP count table: Algorithm 1 reads each
    class's exact SA values, which a DP release does not publish (its cells hold noisy
    counts, empty ones included); the thresholding adversary of
    :mod:`kerckhoffs.attacks.composition.dp_intersection` is the one that applies."""
    if any(r.scheme == Scheme.DP for r in releases):
        raise ParameterError(f"{NAME}: {DP_REASON}")


def attack_result(
    releases: Sequence[Release],
    locations: Sequence[Location],
    *,
    name: str = NAME,
    group_counts: Sequence[np.ndarray | None] | None = None,
    confidence: float = 1.0,
    not_having: Sequence[NotHaving] = (),
    ids: Sequence[Any] | np.ndarray | None = None,
    rows: np.ndarray | None = None,
    true_values: Sequence[Any] | np.ndarray | None = None,
) -> AttackResult:
    """:func:`intersection_attack`'s body, for any attack that intersects value sets:
    ``group_counts`` as in :func:`intersect` (the per-group counts a value set is read
    from), ``name`` the result's attack name. No check of the releases' schemes."""
    limit = max_values(confidence)
    _check(releases, locations)
    m = locations[0].n
    values = sa_vocabulary(releases)
    exclude = None
    ignored = 0
    if not_having:
        exclude, ignored = not_having_mask(not_having, values, m, ids)
    inter = intersect(releases, locations, exclude=exclude, group_counts=group_counts)
    post_anon = inter.posterior_anonymity
    drop = inter.drop
    consistent = post_anon >= 1
    breached = consistent & (post_anon <= limit)
    posterior = np.where(consistent, 1.0 / np.maximum(post_anon, 1), 0.0)
    sa_value = np.where(inter.likely >= 0, values[np.maximum(inter.likely, 0)], "")
    extra: dict[str, Any] = {"n_values": post_anon, "anonymity_drop": drop}
    if ids is not None:
        extra["id"] = np.asarray(ids, dtype=object)
    details = _metrics(inter, releases, locations, limit, confidence)
    if true_values is not None:
        truth = np.asarray([str(v) for v in np.asarray(true_values, dtype=object)], dtype=object)
        if truth.size != m:
            raise ParameterError(f"true_values has {truth.size} entries for {m} targets")
        col = pd.Index(values).get_indexer(truth)
        inside = (col >= 0) & inter.possible[np.arange(m), np.maximum(col, 0)]
        extra["true_value"] = truth
        details["truth_in_set"] = _share(int(inside.sum()), m)
        # a breach that names the wrong value (possible when the sets come from noisy counts)
        # discloses nothing: count the breaches whose single or most likely value is right
        right = int(np.count_nonzero(breached & (sa_value.astype(str) == truth.astype(str))))
        details["correct_breach"] = right
        details["correct_breach_share"] = _share(right, m)
    if not_having:
        details["not_having_applied"] = len(not_having) - ignored
        details["not_having_ignored"] = ignored
    for j, loc in enumerate(locations):
        extra[f"group_{j}"] = loc.group
        extra[f"ea_{j}"] = inter.prior[:, j]
    row = np.arange(m) if rows is None else np.asarray(rows, dtype=np.int64)
    if row.size != m:
        raise ParameterError(f"rows has {row.size} entries for {m} targets")
    table = tuple_table(row, sa_value, posterior, breached, **extra)
    missing = np.zeros(m, dtype=bool)
    for loc in locations:
        missing |= loc.group == NOT_FOUND
    if missing.any():  # they were attacked with the releases that do place them
        details["not_located_in"] = "some release"
    return AttackResult(name, table, m, None, details, not_located=int(np.count_nonzero(missing)))


def _share(count: int, total: int) -> float:
    return count / total if total else float("nan")


def _metrics(
    inter: Intersection,
    releases: Sequence[Release],
    locations: Sequence[Location],
    limit: int,
    confidence: float,
) -> dict[str, Any]:
    """The paper's aggregate metrics (``docs/theory/composition.md#metrics``)."""
    m = inter.m
    post = inter.posterior_anonymity
    consistent = post >= 1
    prior_min = inter.prior.min(axis=1) if m else np.zeros(0, np.int64)
    drop = prior_min - post
    k = [presumed_anonymity(r) for r in releases]

    def mean(x: np.ndarray) -> float:
        return float(x.mean()) if x.size else float("nan")

    after = mean(post.astype(float))
    prior_avg = [mean(inter.prior[:, j].astype(float)) for j in range(len(releases))]
    perfect = int(np.count_nonzero(post == 1))
    partial = int(np.count_nonzero(consistent & (post <= limit)))
    vulnerable = int(np.count_nonzero(drop > 0))
    by_level = {
        f"{round(c * 100)}%": _share(int(np.count_nonzero(consistent & (post <= max_values(c)))), m)
        for c in LEVELS
    }
    return {
        "targets": m,
        "releases": len(releases),
        "confidence": confidence,
        "max_values": limit,
        "perfect_breach": perfect,
        "perfect_breach_share": _share(perfect, m),
        "partial_breach": partial,
        "partial_breach_share": _share(partial, m),
        "breach_by_confidence": by_level,
        "vulnerable": vulnerable,
        "vulnerable_share": _share(vulnerable, m),
        "effective_anonymity_before": mean(prior_min.astype(float)),
        "effective_anonymity_after": after,
        "anonymity_drop": mean(drop.astype(float)),
        "prior_anonymity": prior_avg,
        "drop_per_release": [p - after for p in prior_avg],
        "partition_size": [mean(inter.size[:, j].astype(float)) for j in range(len(releases))],
        "presumed_anonymity": k,
        "presumed_drop": (min(k) - after) if m else float("nan"),
        "inconsistent": int(np.count_nonzero(~consistent)),
        "unlocated": [loc.unlocated for loc in locations],
        "ambiguous": [loc.ambiguous for loc in locations],
        "notes": [note for loc in locations for note in loc.notes],
    }


# -- overlapping releases (docs/theory/composition.md#subsets) ------------------------------------
def make_subsets(
    n_rows: int,
    n_releases: int,
    overlap: int,
    seed: int,
    *,
    size: int | None = None,
) -> tuple[list[np.ndarray], np.ndarray]:
    """The experiments' subsets (``docs/theory/composition.md#subsets``): random subsets of
    ``range(n_rows)`` sharing exactly ``overlap`` rows.

    A permutation (``np.random.default_rng(seed)``) gives the overlap ``P`` (its first
    ``overlap`` rows) and disjoint chunks of the rest, one per subset: of ``size - overlap``
    rows each when ``size`` is given, else an even split of the rest (the paper does not give
    the subsets' sizes: ``docs/theory/composition.md#err-subset-sizes``). Returns the
    subsets (sorted row indices) and ``P`` (sorted). Build the most releases once and take
    prefixes for the number-of-releases experiment: the releases are then nested.
    """
    for name, v in (("n_rows", n_rows), ("n_releases", n_releases), ("overlap", overlap)):
        if int(v) != v or v < (1 if name == "n_releases" else 0):
            raise ParameterError(f"{name} must be a non-negative integer, got {v}")
    if overlap > n_rows:
        raise ParameterError(f"overlap {overlap} is larger than the table ({n_rows} rows)")
    rest = n_rows - overlap
    if size is None:
        chunk = rest // n_releases
    else:
        chunk = int(size) - overlap
        if chunk < 0 or chunk * n_releases > rest:
            raise ParameterError(
                f"{n_releases} subsets of {size} rows sharing {overlap} need "
                f"{overlap + max(chunk, 0) * n_releases} rows, the table has {n_rows}"
            )
    perm = np.random.default_rng(seed).permutation(n_rows)
    common = perm[:overlap]
    subsets = [
        np.sort(np.concatenate([common, perm[overlap + j * chunk : overlap + (j + 1) * chunk]]))
        for j in range(n_releases)
    ]
    return subsets, np.sort(common)


def take_rows(table: Table, rows: np.ndarray) -> Table:
    """The rows ``rows`` of an encoded table, with the same code domains (so releases of
    subsets publish the same cells a release of the whole table would)."""
    rows = np.asarray(rows, dtype=np.int64)
    return dataclasses.replace(
        table,
        qi=np.asfortranarray(table.qi[rows]),
        sa=table.sa[rows],
        provider=None if table.provider is None else table.provider[rows],
        row_ids=None if table.row_ids is None else table.row_ids[rows],
        index=None if table.index is None else table.index[rows],
        other=None if table.other is None else table.other.iloc[rows].reset_index(drop=True),
        notes=list(table.notes),
    )


@dataclass(frozen=True, eq=False)
class OverlappingReleases:
    """Independent releases of overlapping subsets of one table
    (``docs/theory/composition.md#subsets``).

    ``subsets[j]``: the source rows in ``releases[j]`` (sorted; row ``r`` of release ``j``'s
    table is source row ``subsets[j][r]``). ``overlap``: the source rows in every release
    (the targets ``P``, sorted).
    """

    source: Table
    releases: list[Release]
    subsets: list[np.ndarray]
    overlap: np.ndarray

    def locations(self, targets: np.ndarray | None = None) -> list[Location]:
        """Oracle locations (the oracle locator of ``docs/theory/composition.md#locators``) of
        ``targets`` (source rows; default the overlap) in every release; a target absent from a
        release is not located."""
        t = self.overlap if targets is None else np.asarray(targets, dtype=np.int64)
        out = []
        for sub, rel in zip(self.subsets, self.releases, strict=True):
            pos = np.minimum(np.searchsorted(sub, t), max(sub.size - 1, 0))
            rows = np.where(sub[pos] == t, pos, -1)
            out.append(locate_rows(rel, rows))
        return out

    def population(self, targets: np.ndarray | None = None) -> pd.DataFrame:
        """The targets' QIs (original values), the adversary's external table for
        :func:`~kerckhoffs.attacks.locate.locate`."""
        t = self.overlap if targets is None else np.asarray(targets, dtype=np.int64)
        src = self.source
        return pd.DataFrame({c.name: c.decode(src.qi[t, j]) for j, c in enumerate(src.qi_columns)})

    def true_values(self, targets: np.ndarray | None = None) -> np.ndarray:
        """The targets' SA values (evaluation only)."""
        t = self.overlap if targets is None else np.asarray(targets, dtype=np.int64)
        return np.asarray(self.source.sa_column.labels, dtype=object)[self.source.sa[t]]


def overlapping_releases(
    table: Table,
    n_releases: int,
    overlap: int,
    algorithm: str | Sequence[str],
    models: list[PrivacyModel] | Sequence[list[PrivacyModel]],
    seed: int,
    *,
    size: int | None = None,
    **options: Any,
) -> OverlappingReleases:
    """Spec 3.6/3.7: :func:`make_subsets` of ``table``, each subset anonymized independently by
    the registered ``algorithm`` under ``models`` (one name / model list for all, or one per
    release, e.g. scenario (iii) "Mondrian on subset 1, MDAV on subset 2"). Release ``j``'s
    seed is the ``j``-th number of ``np.random.SeedSequence(seed)``; ``options`` go to every
    algorithm run."""
    from kerckhoffs.algorithms.registry import get

    subsets, common = make_subsets(table.n, n_releases, overlap, seed, size=size)
    names = [algorithm] * n_releases if isinstance(algorithm, str) else list(algorithm)
    if models and all(isinstance(x, list | tuple) for x in models):
        per_models = [list(x) for x in models]  # type: ignore[arg-type]
    else:
        per_models = [list(models)] * n_releases  # type: ignore[arg-type]
    if len(names) != n_releases or len(per_models) != n_releases:
        raise ParameterError(f"give one algorithm and one model list, or {n_releases} of each")
    seeds = np.random.SeedSequence(seed).generate_state(n_releases)
    releases = [
        get(name).run(take_rows(table, sub), mods, seed=int(s), **options)
        for name, mods, sub, s in zip(names, per_models, subsets, seeds, strict=True)
    ]
    return OverlappingReleases(table, releases, subsets, common)


# -- the registered attack ------------------------------------------------------------------------
def meta_on_disk(path: Path | Release) -> dict[str, Any] | None:
    """A release directory's ``release.json`` as read (None when it is a :class:`Release`
    or unreadable): what ``applies`` checks cheaply before loading any table."""
    if isinstance(path, Release):
        return None
    meta_path = Path(path) / "release.json"
    try:  # a regular file, bounded: a FIFO would hang, deep nesting recurse
        meta = load_json(read_regular(meta_path), meta_path)
    except (OSError, KerckhoffsError):
        return None
    return meta if isinstance(meta, dict) else None


def _sa_name(meta: dict[str, Any] | None) -> str | None:
    try:
        return str(meta["sensitive"]["name"])  # type: ignore[index]
    except (KeyError, TypeError):
        return None


def _applies(releases: Sequence[Release], knowledge: Knowledge) -> str | None:
    metas = [meta_on_disk(p) for p in knowledge.releases if not isinstance(p, Release)]
    on_disk = [m.get("scheme") for m in metas if m is not None]
    known = [r for r in knowledge.releases if isinstance(r, Release)]
    if any(r.scheme == Scheme.DP for r in [*releases, *known]) or Scheme.DP.value in on_disk:
        return DP_REASON
    if _synthetic([*releases, *known], on_disk):
        sa = releases[0].table.sa_name if releases else None
        pop = knowledge.population
        if pop is None or sa not in pop.columns:
            return SYNTHETIC_REASON
    n = len(releases) + len(knowledge.releases)
    if n < 2:
        return (
            "needs at least two releases of overlapping populations "
            "(the attacked one plus knowledge releases = [...])"
        )
    if not releases:
        return "no release to attack"
    name = releases[0].table.sa_name
    others = [r.table.sa_name for r in releases[1:]]
    others += [r.table.sa_name for r in known]
    others += [s for s in map(_sa_name, metas) if s is not None]
    bad = [s for s in others if s != name]
    if bad:
        return f"the releases publish different sensitive attributes ({name!r}, {bad[0]!r})"
    if knowledge.population is None and releases[0].scheme != Scheme.BUCKETIZATION:
        return (
            "needs the adversary's population of targets with their QIs "
            "(knowledge [population] file = ...)"
        )
    return None


@register_attack(
    NAME,
    summary="composition attack: intersect each target's SA value sets across independent "
    "releases of overlapping populations (paper 004 Algorithm 1)",
    applies=_applies,
    reads=("population", "not_having", "releases"),
)
def run_intersection(
    releases: Sequence[Release], knowledge: Knowledge, **options: Any
) -> AttackResult:
    """Registry adapter: the attacked release, the other ``releases`` and
    ``knowledge.releases`` (read with :meth:`Release.from_published`) are intersected for
    every individual of ``knowledge.population`` (or, for a bucketized attacked release
    without a population, for the individuals of its QI table), located by their QIs.

    Options: ``confidence`` (float in (0, 1], default 1: perfect breaches), ``schema`` (a
    :class:`Schema` or a schema TOML path; default ``knowledge.schema``) for the hierarchies
    needed to read categorical cells. Negative knowledge (``knowledge.not_having``) is
    applied; a population column named like the SA gives the ``truth_in_set`` share.
    """
    allowed = {"confidence", "schema"}
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise ParameterError(
            f"{NAME}: unknown option {unknown[0]!r} (allowed: {', '.join(sorted(allowed))})"
        )
    reason = _applies(releases, knowledge)
    if reason is not None:
        raise ParameterError(f"{NAME}: {reason}")
    schema = options.get("schema", knowledge.schema)
    if schema is not None and not isinstance(schema, Schema):
        schema = Schema.from_toml(schema)
    confidence = float(options.get("confidence", 1.0))
    every = list(releases) + knowledge.load_releases(schema)
    population = knowledge.population
    if population is None:
        t = releases[0].table
        population = pd.DataFrame(
            {c.name: c.decode(t.qi[:, j]) for j, c in enumerate(t.qi_columns)}
        )
    locations = locate_all(every, population, schema)
    ids = population["id"].to_numpy() if "id" in population.columns else None
    sa = every[0].table.sa_name
    truth = population[sa].to_numpy() if sa in population.columns else None
    result = intersection_attack(
        every,
        locations,
        confidence=confidence,
        not_having=knowledge.not_having,
        ids=ids,
        true_values=truth,
    )
    if truth is not None and _synthetic(every):
        against_chance(result)  # synthetic rows are no one's record: breaches vs chance
    return result


__all__ = [
    "DP_REASON",
    "LEVELS",
    "Intersection",
    "OverlappingReleases",
    "attack_result",
    "intersect",
    "intersection_attack",
    "make_subsets",
    "max_values",
    "meta_on_disk",
    "overlapping_releases",
    "presumed_anonymity",
    "refuse_dp",
    "run_intersection",
    "sa_vocabulary",
    "take_rows",
]
