"""The m-privacy anonymizers of paper 003 (Goryczka, Xiong, Fung, "m-Privacy for
Collaborative Data Publishing", section IV): ``provider-aware`` (Algorithm 2) and the
baseline ``mondrian-mprivacy`` (Mondrian where every test of C is a test of m-privacy w.r.t.
C). Explained in ``docs/theory/m-privacy.md#provider-aware``,
``docs/theory/m-privacy.md#baseline`` and ``docs/theory/m-privacy.md#deployment``, with our
resolutions of the paper's gaps in ``docs/theory/m-privacy.md#errors``.

Both are top-down binary space partitionings that publish a node whole when it has no allowable cut,
and a cut is **allowable only if both halves are m-private w.r.t. C** (the per-group definition,
``docs/theory/m-privacy.md#per-group``: every coalition of up to ``m_eff = min(m, n_G - 1)`` of a
half's ``n_G`` providers can remove its own records and what is left still satisfies C).

- ``mondrian-mprivacy`` (paper 003's baseline, ``docs/theory/m-privacy.md#baseline``; the paper
  leaves its details and verifier open, ``docs/theory/m-privacy.md#err-baseline-verifier``): strict
  Mondrian; per node the QI dimensions with more than one value are tried by decreasing normalized
  range (range of codes in the node over the width of the QI's code domain; ties to the lower
  index), one balanced cut each, the first allowable one wins.
- ``provider-aware`` (paper 003 Algorithm 2, ``docs/theory/m-privacy.md#provider-aware``):
  candidates are one balanced cut per QI plus one *provider cut* along the virtual attribute A_0 =
  provider (providers ordered by id or by size in the node, cut between two consecutive ones so that
  the sides are as equal in records as possible; a provider's records are never split). Among the
  allowable candidates the split score picks one (the paper only says "higher fitness" and not how
  the halves' scores combine: ``docs/theory/m-privacy.md#err-split-score``): default
  ``min(score(L), score(R))`` of Eq. 1 with alpha = 0.8, ties to the larger sum, then to the
  dimension (A_0 first, then A_1..A_q). Options ``sum``, ``provider_first`` (the provider cut
  whenever allowable, else the best QI cut by ``min``) and ``mondrian_width`` (the provider cut
  whenever allowable, else the widest allowable QI cut, the "provider-first + Mondrian width" rule
  of our prototype, ``docs/theory/m-privacy.md#provider-aware``).

**Balanced cut** (one split point per QI, our reading of Algorithm 2's "all possible splitting
points": ``docs/theory/m-privacy.md#err-one-cut``): over the node's distinct codes except the
largest, the code ``v`` minimizing ``| #{t : t[A] <= v} - |node| / 2 |`` (ties to the smaller
``v``); ``L = {t[A] <= v}``. On distinct codes it puts ``floor(|node|/2)`` rows left, which is
Mondrian's *upper* median (``median="upper"`` of :func:`~kerckhoffs.algorithms.mondrian.mondrian`;
our earlier reading, "equals the lower median", holds for even sizes only, its tie rule decides odd
ones); on duplicates it differs from both medians and never leaves one side empty while two values
remain. Option ``cut="median"`` takes Mondrian's strict lower median instead (the value at sorted
position ``ceil(|node|/2) - 1``, no cut when it is the largest), which makes the baseline with m = 0
and only k equal :func:`kerckhoffs.algorithms.mondrian.mondrian` (a property the tests check: the
baseline with m = 0 and l = 1 is strict Mondrian, ``docs/theory/m-privacy.md#properties``).

**Root check** (a table that is not m-private at the root is refused, never published:
``docs/theory/m-privacy.md#err-root``; the tests check that the anonymizers' output is m-private,
``docs/theory/m-privacy.md#properties``): Algorithm 2 would publish the whole table as one group
when no cut is allowable, m-private or not. When m-privacy w.r.t. C is merge-closed (the union of
two m-private groups is m-private: C EG-monotonic, as k and distinct-l are, or m = 0;
:func:`~kerckhoffs.mprivacy.constraints.m_privacy_merge_closed`), a table that is not m-private has
no m-private partition, so the algorithms refuse it up front. Frequency l-diversity with m >= 1 is
not merge-closed (a table of two providers can fail while the partition into their own records
passes), so there the search runs from a root that is not m-private, and only a root left uncut (no
cut with both halves m-private) is refused, with a message that does not claim that no partition
exists. Every other node the search reaches is a half of an allowable cut, hence m-private.

**Provider interface** (a "reduced-disclosure coordinator",
``docs/theory/m-privacy.md#deployment``): the coordinator here drives the partitioning only through
:class:`~kerckhoffs.mprivacy.providers.Providers` (counts, SA histograms, code histograms, cuts, the
final submission); it never reads a record. The provider cut's halves come from the node's
per-provider histograms without asking anyone. The tree is processed level by level: one
``codes_in_boxes`` for every QI and one ``hist_in_box`` for every candidate half of the level, then
one batched m-privacy check of all halves with the exact vectorized verifier
(:mod:`kerckhoffs.mprivacy.exact`), or half by half with a per-group verifier (``verifier=`` any
name of :data:`kerckhoffs.mprivacy.verify.VERIFIERS`, for the experiments that count oracle calls).
The verifiers are exact, so the partition does not depend on the verifier (a property the tests
check, ``docs/theory/m-privacy.md#properties``); the baseline with a per-group verifier checks the
cuts in its order and stops at the first allowable one, and a half is not checked when its sibling
failed.

The provider column is a partitioning dimension only (the paper does not say whether it is
published; we do not: ``docs/theory/m-privacy.md#err-provider-published``): the release publishes
the QIs and the SA, and its provenance holds public parameters only (no provider ids, no
counts). Provider cuts can give groups with overlapping or equal boxes (allowed; nothing downstream
assumes disjoint boxes: ``docs/theory/m-privacy.md#err-overlap``). Deterministic:
``seed`` is not used.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from kerckhoffs.algorithms.mprivacy_cuts import (
    choose_aware,
    choose_baseline,
    cut_points,
    merge_children,
    provider_cut,
    split_hist,
)
from kerckhoffs.algorithms.registry import pick, refuse_others, register
from kerckhoffs.data.table import Table
from kerckhoffs.errors import ParameterError
from kerckhoffs.models.base import PrivacyModel
from kerckhoffs.models.k_anonymity import KAnonymity
from kerckhoffs.models.l_diversity import DistinctLDiversity, LDiversity
from kerckhoffs.models.m_privacy import MPrivacy
from kerckhoffs.mprivacy import exact as exact_verifier
from kerckhoffs.mprivacy.constraints import (
    Constraint,
    KAnon,
    conjunction,
    constraint_from_models,
    m_privacy_merge_closed,
)
from kerckhoffs.mprivacy.group import GroupStats
from kerckhoffs.mprivacy.providers import (
    Boxes,
    Cuts,
    Histograms,
    LocalProviders,
    Providers,
)
from kerckhoffs.mprivacy.verify import VERIFIERS
from kerckhoffs.randomness import Seed
from kerckhoffs.release import Partition, Provenance, Release, Scheme
from kerckhoffs.segments import exclusive_cumsum

ALPHA_SPLIT = 0.8
"""Eq. 1's weight for rating candidate splits (paper Table II)."""
SCORES = ("min", "sum", "provider_first", "mondrian_width")
PROVIDER_ORDERS = ("id", "size")
CUT_RULES = ("balanced", "median")
ACCEPTED = (KAnonymity, DistinctLDiversity, LDiversity, MPrivacy)


# -- the settings --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Setting:
    """What the coordinator needs: m, the constraint C of m-privacy, the constraint of the
    models given beside it (checked on every half with m = 0), and the public parameters."""

    m: int
    constraint: Constraint
    extra: Constraint | None
    params: dict[str, Any]


def setting_from_models(models: list[PrivacyModel], name: str) -> Setting:
    """The coordinator's setting for algorithm ``name`` from its models: one m-privacy model
    (its constraint C, or the other models' conjunction when it has none) and the models given
    beside it. One-line :class:`~kerckhoffs.errors.ParameterError` for anything else."""
    refuse_others(models, ACCEPTED, name)
    mp = pick(models, MPrivacy, name)
    if mp is None:
        raise ParameterError(
            f"{name} needs an m-privacy model (m-privacy=M, with k=K and/or distinct-l=L)"
        )
    others = [x for x in models if not isinstance(x, MPrivacy)]
    c = mp.constraint() if mp.models else None
    if c is None:
        if not others:
            raise ParameterError(f"m-privacy={mp.m} needs a constraint: give k=K or distinct-l=L")
        c = conjunction([_one(x) for x in others])
    extra_parts = [p for x in others for p in _one(x).parts if p not in c.parts]
    params: dict[str, Any] = {"m": mp.m}
    for p in (*c.parts, *extra_parts):
        key = {"KAnon": "k", "DistinctL": "distinct_l", "FrequencyL": "l"}[type(p).__name__]
        params.setdefault(key, getattr(p, "k", getattr(p, "l", None)))
    return Setting(mp.m, c, conjunction(extra_parts) if extra_parts else None, params)


def _one(model: PrivacyModel) -> Constraint:
    return constraint_from_models([model])


def _score_constraint(c: Constraint) -> Constraint:
    """C with k first, so Eq. 1's alpha weights the diversity term as printed."""
    parts = sorted(c.parts, key=lambda p: not isinstance(p, KAnon))
    return conjunction(parts)


# -- verification of candidate halves ------------------------------------------------------------
class _Checker:
    """m-privacy of candidate halves (given as per-provider histograms), exact and batched or
    half by half with a per-group verifier; counts oracle calls and checks."""

    def __init__(self, setting: Setting, n_sa: int, verifier: str) -> None:
        if verifier not in VERIFIERS:
            raise ParameterError(
                f"unknown m-privacy verifier {verifier!r} (known: {', '.join(VERIFIERS)})"
            )
        if verifier not in ("exact", "brute", "exhaustive") and not setting.constraint.eg_monotonic:
            raise ParameterError(
                f"the {verifier} verifier prunes, which needs an EG-monotonic constraint (k, "
                "distinct-l); use verifier=exact"
            )
        self.s, self.n_sa, self.verifier = setting, n_sa, verifier
        self.calls = 0
        self.checks = 0

    def exact(self, h: Histograms, m: int) -> np.ndarray:
        """Per box of ``h``: m-private w.r.t. C (and the extra models hold); a box the
        coalition search cannot settle within its budget is not (never allowed)."""
        return self.decide(h, m)[0]

    def decide(self, h: Histograms, m: int) -> tuple[np.ndarray, np.ndarray]:
        """Per box of ``h``: (:meth:`exact`, undecided by the coalition search)."""
        self.checks += h.n_boxes
        if not h.n_boxes:
            return np.zeros(0, dtype=bool), np.zeros(0, dtype=bool)
        budget = exact_verifier.SEARCH_BUDGET  # read at each call: tests lower it
        d = exact_verifier.decide_triples(h.box, h.provider, h.sa, h.count, h.n_boxes,
                                          self.n_sa, m, self.s.constraint, budget)  # fmt: skip
        ok, undecided = d.ok, d.undecided
        if self.s.extra is not None:
            total, hist = h.totals(self.n_sa)
            extra = self.s.extra.check_batch(total, hist)
            ok, undecided = ok & extra, undecided & extra
        return np.asarray(ok, dtype=bool), np.asarray(undecided, dtype=bool)

    def one(self, h: Histograms, box: int, start: np.ndarray, size: np.ndarray) -> bool:
        """Box ``box`` of ``h`` with the per-group verifier."""
        sl = slice(int(start[box]), int(start[box] + size[box]))
        prov, sa, cnt = h.provider[sl], h.sa[sl], h.count[sl]
        ids, local = np.unique(prov, return_inverse=True)
        mat = np.zeros((ids.size, self.n_sa), dtype=np.int64)
        np.add.at(mat, (local.reshape(-1), sa), cnt)
        self.checks += 1
        res = VERIFIERS[self.verifier](GroupStats(ids, mat), self.s.m, self.s.constraint)
        self.calls += res.calls
        if res.private and self.s.extra is not None:
            return bool(self.s.extra.check(int(mat.sum()), mat.sum(axis=0)))
        return bool(res.private)

    def pairs(self, h: Histograms, which: np.ndarray) -> np.ndarray:
        """Whether both halves (boxes ``2c``, ``2c + 1`` of ``h``) of each candidate ``c`` in
        ``which`` are m-private; the right half is not checked when the left one fails."""
        size = h.box_sizes()
        start = exclusive_cumsum(size)
        out = np.zeros(which.size, dtype=bool)
        for i, c in enumerate(which.tolist()):
            out[i] = self.one(h, 2 * c, start, size) and self.one(h, 2 * c + 1, start, size)
        return out


# -- the coordinator -----------------------------------------------------------------------------
class _Clock:
    def __init__(self) -> None:
        self.spent: dict[str, float] = {}

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.spent[name] = self.spent.get(name, 0.0) + time.perf_counter() - t0


def coordinate(
    providers: Providers,
    setting: Setting,
    *,
    provider_aware: bool,
    score: str = "min",
    provider_order: str = "id",
    alpha: float = ALPHA_SPLIT,
    verifier: str = "exact",
    cut: str = "balanced",
    stats: dict[str, Any] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> np.ndarray:
    """Run the partitioning of paper 003 Algorithm 2 (``provider_aware``,
    ``docs/theory/m-privacy.md#provider-aware``) or of the baseline
    (``docs/theory/m-privacy.md#baseline``) through ``providers``;
    returns the group id of every record (from the providers' submission). Raises
    :class:`~kerckhoffs.errors.ParameterError` when the whole table is not m-private.
    ``progress(level, open_boxes)`` is called before each level."""
    _check_options(score, provider_order, cut, alpha)
    clock = _Clock()
    n_sa, n_prov, m = providers.n_sa, providers.n_providers, setting.m
    checker = _Checker(setting, n_sa, verifier)
    scorer = _score_constraint(setting.constraint)
    t_start = time.perf_counter()
    node_hist, root_ok, root_open = _check_root(providers, setting, checker, verifier, clock)

    nodes = np.zeros(1, dtype=np.int64)
    next_id = 1
    leaves: list[np.ndarray] = []
    levels = 0
    while nodes.size:
        levels += 1
        if progress is not None:
            progress(levels, int(nodes.size))
        n_nodes = nodes.size
        thr, norm = _cut_candidates(providers, nodes, cut, clock)
        ci, cj = np.nonzero(thr >= 0)  # candidate c: node ci[c], QI cj[c]
        with clock.phase("histograms"):
            halves = providers.hist_in_box(Boxes.halves(nodes[ci], cj, thr[ci, cj]))
        # the provider cut's halves, from the nodes' own histograms (no message)
        pleft = np.zeros((n_nodes, n_prov), dtype=bool)
        pcand = np.zeros(n_nodes, dtype=bool)
        phalves = None
        if provider_aware:
            with clock.phase("provider cut"):
                pleft = provider_cut(node_hist, n_nodes, n_prov, provider_order)
                pcand = np.asarray(pleft.any(axis=1), dtype=bool)
                phalves = split_hist(node_hist, pleft, np.flatnonzero(pcand))
        with clock.phase("verify"):
            allowed_q, allowed_p = _allowed_cuts(
                checker, verifier, provider_aware, halves, phalves, pcand, ci, cj, norm, m
            )
        with clock.phase("choose"):
            if provider_aware:
                pick_c, use_p = choose_aware(
                    halves, phalves, ci, cj, allowed_q, allowed_p, pcand, norm, n_nodes, n_sa,
                    scorer, alpha, score,
                )  # fmt: skip
            else:
                pick_c = choose_baseline(ci, cj, allowed_q, norm, n_nodes)
                use_p = np.zeros(n_nodes, dtype=bool)
        with clock.phase("split"):
            is_cut = (pick_c >= 0) | use_p
            leaves.append(nodes[~is_cut])
            if not root_ok and levels == 1 and not is_cut.any():
                _refuse_unsplit_root(setting, root_open, int(ci.size), int(pcand.sum()), cut)
            node_hist, nodes, next_id = _split_nodes(
                providers, nodes, is_cut, pick_c, use_p, cj, thr, pleft, pcand, halves, phalves,
                next_id,
            )  # fmt: skip

    with clock.phase("submit"):
        all_leaves = np.concatenate(leaves) if leaves else np.zeros(0, np.int64)
        sub = providers.generalize_and_submit(all_leaves)
    if stats is not None:
        sizes = np.bincount(sub.group, minlength=all_leaves.size)
        stats.update(
            oracle_calls=checker.calls,
            checks=checker.checks,
            nodes=int(next_id),
            groups=int(all_leaves.size),
            levels=levels,
            messages=int(providers.messages),
            bytes=int(providers.bytes),
            verifier=verifier,
            mean_group_size=float(sizes.mean()) if sizes.size else 0.0,
            time={**clock.spent, "total": time.perf_counter() - t_start},
        )
    return sub.group


def _check_options(score: str, provider_order: str, cut: str, alpha: float) -> None:
    """Refuse an unknown score, provider order or cut rule, or an ``alpha`` outside [0, 1]."""
    if score not in SCORES:
        raise ParameterError(f"score must be one of {', '.join(SCORES)}, got {score!r}")
    if provider_order not in PROVIDER_ORDERS:
        raise ParameterError(
            f"provider_order must be one of {', '.join(PROVIDER_ORDERS)}, got {provider_order!r}"
        )
    if cut not in CUT_RULES:
        raise ParameterError(f"cut must be one of {', '.join(CUT_RULES)}, got {cut!r}")
    if not 0.0 <= alpha <= 1.0:
        raise ParameterError(f"alpha must be in [0, 1], got {alpha}")


def _check_root(
    providers: Providers, setting: Setting, checker: _Checker, verifier: str, clock: _Clock
) -> tuple[Histograms, bool, bool]:
    """The whole table's histogram and whether it is m-private (``root_ok``) or could not be
    settled within the search budget (``root_open``); refuses a table no partition of which
    can pass."""
    m, n_sa = setting.m, providers.n_sa
    with clock.phase("histograms"):
        node_hist = providers.hist_in_box(Boxes.whole(np.zeros(1, np.int64)))
    if node_hist.count.sum() == 0:
        raise ParameterError("the table is empty: nothing to anonymize")
    with clock.phase("verify"):
        root_open = False  # the coalition search could not settle the root
        if verifier == "exact":
            ok, undecided = checker.decide(node_hist, m)
            root_ok, root_open = bool(ok[0]), bool(undecided[0])
        else:
            root_ok = checker.one(node_hist, 0, np.zeros(1, np.int64), node_hist.box_sizes())
    if not root_ok and not root_open and _no_partition_can_pass(setting, node_hist, n_sa):
        raise ParameterError(
            f"the whole table is not {m}-private w.r.t. {_describe(setting)}, so no "
            "partition of it is: nothing can be published (lower m, k or l)"
        )
    return node_hist, root_ok, root_open


def _cut_candidates(
    providers: Providers, nodes: np.ndarray, cut: str, clock: _Clock
) -> tuple[np.ndarray, np.ndarray]:
    """Candidate QI cuts, one per (node, QI) from the code histograms: the threshold (-1: no
    cut) and the QI's normalized range in the node."""
    n_nodes, d = nodes.size, len(providers.qi_sizes)
    widths = np.array([max(w - 1, 0) for w in providers.qi_sizes], dtype=np.float64)
    with clock.phase("cut points"):
        thr = np.full((n_nodes, d), -1, dtype=np.int64)
        norm = np.zeros((n_nodes, d), dtype=np.float64)
        for j, cc in enumerate(providers.codes_in_boxes(nodes, range(d))):
            thr[:, j], lo, hi = cut_points(cc.box, cc.code, cc.count, n_nodes, cut)
            if widths[j] > 0:
                norm[:, j] = (hi - lo) / widths[j]
    return thr, norm


def _allowed_cuts(
    checker: _Checker,
    verifier: str,
    provider_aware: bool,
    halves: Histograms,
    phalves: Histograms | None,
    pcand: np.ndarray,
    ci: np.ndarray,
    cj: np.ndarray,
    norm: np.ndarray,
    m: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Whether each QI candidate (both halves m-private) and each node's provider cut are
    allowed."""
    n_nodes = pcand.size
    allowed_q = np.zeros(ci.size, dtype=bool)
    allowed_p = np.zeros(n_nodes, dtype=bool)
    if verifier == "exact":
        allowed_q = np.asarray(checker.exact(halves, m).reshape(-1, 2).all(axis=1))
        if phalves is not None and phalves.n_boxes:
            allowed_p[pcand] = checker.exact(phalves, m).reshape(-1, 2).all(axis=1)
    elif provider_aware:
        allowed_q = checker.pairs(halves, np.arange(ci.size))
        if phalves is not None and phalves.n_boxes:
            allowed_p[pcand] = checker.pairs(phalves, np.arange(phalves.n_boxes // 2))
    else:
        allowed_q = _baseline_lazy(checker, halves, ci, cj, norm, n_nodes)
    return allowed_q, allowed_p


def _refuse_unsplit_root(
    setting: Setting, root_open: bool, qi_cuts: int, provider_cuts: int, cut: str
) -> None:
    """The root is not m-private and no cut of it is allowed: nothing can be published."""
    m = setting.m
    why = (
        "the coalition search could not settle whether the whole table is "
        f"{m}-private within its budget"
        if root_open
        else f"the whole table is not {m}-private (m-privacy w.r.t. frequency "
        "l-diversity is not closed under merging groups, so a finer partition "
        "this search does not reach might exist)"
    )
    raise ParameterError(
        f"found no partition of the table into {m}-private groups w.r.t. "
        f"{_describe(setting)}: {why}; "
        f"{_cuts_tried(qi_cuts, provider_cuts, cut, m)}; nothing is "
        "published"
    )


def _split_nodes(
    providers: Providers,
    nodes: np.ndarray,
    is_cut: np.ndarray,
    pick_c: np.ndarray,
    use_p: np.ndarray,
    cj: np.ndarray,
    thr: np.ndarray,
    pleft: np.ndarray,
    pcand: np.ndarray,
    halves: Histograms,
    phalves: Histograms | None,
    next_id: int,
) -> tuple[Histograms, np.ndarray, int]:
    """Split the cut nodes (the providers split their records; the others are final) and
    return the children's histograms (the chosen halves), the children and the next id."""
    final = nodes[~is_cut]
    cut_nodes = np.flatnonzero(is_cut)
    n_cut = cut_nodes.size
    left_ids = next_id + 2 * np.arange(n_cut, dtype=np.int64)
    next_id += 2 * n_cut
    qsel = pick_c[cut_nodes]
    by_qi = ~use_p[cut_nodes]
    attr = np.full(n_cut, -1, dtype=np.int64)
    attr[by_qi] = cj[qsel[by_qi]]
    upper = np.zeros(n_cut, dtype=np.int64)
    upper[by_qi] = thr[cut_nodes[by_qi], attr[by_qi]]
    providers.split(
        Cuts(nodes[cut_nodes], attr, upper, pleft[cut_nodes], left_ids, left_ids + 1),
        final,
    )
    boxes_q = np.stack([2 * qsel, 2 * qsel + 1], axis=1)[~use_p[cut_nodes]].reshape(-1)
    parts = [halves.select(boxes_q)]
    order = [np.flatnonzero(~use_p[cut_nodes])]
    if phalves is not None:
        prow = np.cumsum(pcand) - 1  # node -> its pair in phalves
        pn = np.flatnonzero(use_p[cut_nodes])
        pair = prow[cut_nodes[pn]]
        parts.append(phalves.select(np.stack([2 * pair, 2 * pair + 1], 1).reshape(-1)))
        order.append(pn)
    node_hist = merge_children(parts, order, n_cut)
    return node_hist, np.stack([left_ids, left_ids + 1], axis=1).reshape(-1), next_id


def _no_partition_can_pass(setting: Setting, root: Histograms, n_sa: int) -> bool:
    """Whether a root that fails its check proves that no partition passes: the models beside
    m-privacy fail on the whole table (they are merge-closed), or m-privacy w.r.t. C is
    merge-closed (module docstring, "Root check")."""
    if setting.extra is not None:
        total, hist = root.totals(n_sa)
        if setting.extra.merge_closed and not bool(setting.extra.check_batch(total, hist)[0]):
            return True
    return m_privacy_merge_closed(setting.constraint, setting.m)


def _describe(s: Setting) -> str:
    """The constraint as the command line spells it (``k=2, distinct-l=2``)."""
    names = {"distinct_l": "distinct-l"}

    def num(v: Any) -> Any:
        return int(v) if isinstance(v, float) and v.is_integer() else v

    return ", ".join(f"{names.get(k, k)}={num(v)}" for k, v in s.params.items() if k != "m")


def _cuts_tried(n_qi: int, n_provider: int, cut: str, m: int) -> str:
    """What the search tried at the root before refusing: one cut per QI at one split point
    (not every value), and, for ``provider-aware``, one cut between providers."""
    where = (
        "its balanced split point (about half of the rows on each side)"
        if cut == "balanced"
        else "its median"
    )
    tried = []
    if n_qi:
        tried.append(f"{n_qi} QI cut(s), one per QI with more than one value, at {where}")
    if n_provider:
        tried.append("a cut between providers")
    if not tried:
        return "there was no cut to try (every QI holds one value)"
    return (
        f"the search tried {' and '.join(tried)}, and none leaves both halves {m}-private; "
        "cuts at other values are not tried (one of them might)"
    )


def _baseline_lazy(
    checker: _Checker,
    halves: Histograms,
    ci: np.ndarray,
    cj: np.ndarray,
    norm: np.ndarray,
    n_nodes: int,
) -> np.ndarray:
    """Per-group verifier for the baseline: each node's candidates in its order, stopping at
    the first allowable one (the cuts after it are never checked)."""
    allowed = np.zeros(ci.size, dtype=bool)
    key = np.lexsort((cj, -norm[ci, cj], ci))
    done = np.zeros(n_nodes, dtype=bool)
    size = halves.box_sizes()
    start = exclusive_cumsum(size)
    for c in key.tolist():
        node = int(ci[c])
        if done[node]:
            continue
        if checker.one(halves, 2 * c, start, size) and checker.one(halves, 2 * c + 1, start, size):
            allowed[c] = True
            done[node] = True
    return allowed


# -- the registered algorithms -------------------------------------------------------------------
def _run(
    name: str,
    table: Table,
    models: list[PrivacyModel],
    *,
    provider_aware: bool,
    providers: Providers | None,
    stats: dict[str, Any] | None,
    **options: Any,
) -> Release:
    setting = setting_from_models(models, name)
    if providers is None:
        providers = LocalProviders(table)
    group = coordinate(providers, setting, provider_aware=provider_aware, stats=stats, **options)
    params = dict(setting.params)
    params.update({k: v for k, v in options.items()})
    return Release(
        table,
        Partition.from_labels(group),
        Scheme.GENERALIZATION,
        table.sa,
        Provenance(name, params),
        models=tuple(models),
    )


@register(
    "mondrian-mprivacy",
    family="mondrian-mprivacy",
    summary="Mondrian where a cut needs both halves m-private w.r.t. C (paper 003's baseline)",
    models=("MPrivacy", "KAnonymity", "DistinctLDiversity", "LDiversity"),
    options={
        "verifier": "exact (default, vectorized) | any per-group verifier: brute, direct, "
        "bottom-up, top-down, binary, adaptive (same partition, counts oracle calls)",
        "cut": "balanced (default, one split point per QI) | median (Mondrian's strict lower "
        "median)",
    },
)
def mondrian_mprivacy(
    table: Table,
    models: list[PrivacyModel],
    *,
    seed: Seed = None,
    verifier: str = "exact",
    cut: str = "balanced",
    providers: Providers | None = None,
    stats: dict[str, Any] | None = None,
) -> Release:
    """The baseline of paper 003 (``docs/theory/m-privacy.md#baseline``): strict top-down Mondrian,
    widest normalized QI first with fall-back to the next, a cut allowed only when both halves are
    m-private w.r.t. C. Models: one :class:`~kerckhoffs.models.MPrivacy` (required) and its
    constraint (k, distinct-l, frequency l). Raises :class:`~kerckhoffs.errors.ParameterError`
    without m-privacy, without a provider column, or when the whole table is not m-private.

    ``providers``: the back-end the coordinator talks to (default: :class:`LocalProviders`
    over ``table``). ``stats``: if a dict, filled with oracle calls, checks, nodes, groups,
    levels, messages, bytes and seconds per phase (never published). ``seed`` is unused.
    """
    return _run(
        "mondrian-mprivacy", table, models, provider_aware=False, providers=providers,
        stats=stats, verifier=verifier, cut=cut,
    )  # fmt: skip


@register(
    "provider-aware",
    family="provider-aware",
    summary="Provider-aware anonymization (paper 003, Alg. 2): QI cuts and a provider cut, "
    "both halves m-private, best privacy fitness",
    models=("MPrivacy", "KAnonymity", "DistinctLDiversity", "LDiversity"),
    options={
        "score": "min (default) | sum | provider_first | mondrian_width: split choice",
        "provider_order": "id (default) | size: the providers' order for the provider cut",
        "alpha": "Eq. 1's weight of the diversity term for rating splits (default 0.8)",
        "verifier": "exact (default, vectorized) | any per-group verifier: brute, direct, "
        "bottom-up, top-down, binary, adaptive (same partition, counts oracle calls)",
    },
)
def provider_aware(
    table: Table,
    models: list[PrivacyModel],
    *,
    seed: Seed = None,
    score: str = "min",
    provider_order: str = "id",
    alpha: float = ALPHA_SPLIT,
    verifier: str = "exact",
    providers: Providers | None = None,
    stats: dict[str, Any] | None = None,
) -> Release:
    """Provider-aware anonymization (paper 003 Algorithm 2,
    ``docs/theory/m-privacy.md#provider-aware``): per node one balanced
    cut per QI plus one provider cut; a cut is allowable when both halves are m-private
    w.r.t. C; the allowable cut with the best split score (Eq. 1, ``alpha``) is taken. Models,
    errors, ``providers`` and ``stats`` as :func:`mondrian_mprivacy`. ``seed`` is unused."""
    return _run(
        "provider-aware", table, models, provider_aware=True, providers=providers, stats=stats,
        score=score, provider_order=provider_order, alpha=float(alpha), verifier=verifier,
    )  # fmt: skip


__all__ = [
    "Setting",
    "coordinate",
    "mondrian_mprivacy",
    "provider_aware",
    "setting_from_models",
]
