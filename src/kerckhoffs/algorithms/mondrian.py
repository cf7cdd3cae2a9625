"""Mondrian: strict multidimensional median partitioning (LeFevre, DeWitt, Ramakrishnan 2006).

Top-down recursion (spec ``asap.md`` 2.1 and 2.3): a group ``G`` is cut on one quasi-identifier
at its median into ``L = {t : t[dim] <= split}`` and ``R = G - L``; the dimensions are tried in
order of decreasing *normalized range* ``(max code - min code over G) / W_dim`` (``W_dim`` the
width of the column's code domain; ties go to the lower column index), falling back to the next
dimension when the cut is not allowed; a group with no allowed cut is published whole.

- **Median** (``median="lower"``, the spec's default): the smallest value ``v`` with
  ``|{t in G : t[dim] <= v}| >= ceil(|G|/2)``. ``median="upper"`` takes the value at sorted
  position ``floor(|G|/2)`` (0-based) and sends the rows equal to it to the right half, so the
  two options mirror each other (with ``<= upper median`` the cut of two distinct values would
  never be possible).
- **Cuts** (``cuts="strict"``, the default): rows with equal values stay on one side.
  ``cuts="relaxed"`` (LeFevre's relaxed partitioning) splits the rows equal to the median
  between the halves, so that ``|L| = ceil(|G|/2)`` (lower) or ``floor(|G|/2)`` (upper); ties
  are broken by row id, deterministically. A dimension with a single value in ``G`` is never
  cut, in either mode.
- **Categorical** quasi-identifiers are cut along their hierarchy-ordered codes (depth-first
  leaf order, :mod:`kerckhoffs.data.table`), so a group spans a code interval and publishes
  its lowest common hierarchy node (:meth:`kerckhoffs.release.Release.generalized_cells`).
- **Allowable cuts** are a parameter, a :class:`CutRule` evaluated on the statistics of the
  candidate halves (:class:`CutStats`), vectorized over all candidate cuts. Built in:
  :class:`KAnonymityCut` (``|L| >= k and |R| >= k``, spec 2.3) and :class:`LDiversityCut`
  (frequency l-diversity ``|L| >= l * c(L)`` and ``|R| >= l * c(R)``, spec 2.1, with ``c`` the
  subset-aware bounded count of :attr:`~kerckhoffs.models.GroupHistogram.sensitive_count`).
  Given both models, both must hold (:class:`AllCuts`).

Speed: the recursion runs level by level. All groups of one depth are processed at once with
numpy: the active rows are kept, per quasi-identifier, in an order sorted by (group, code, row
id) (and one more order by (group, SA, row id) for the SA statistics). Each group is a
contiguous segment of every order, so medians are one gather, the halves' sizes one
``searchsorted`` and the halves' SA histograms one ``bincount`` over (group, SA) pairs. A cut
splits every order stably in O(n) (no re-sorting), and finished groups leave the arrays.
Nothing loops over rows or groups in Python; the loops are over depths and dimensions.

Original Mondrian for l-diversity is *not* algorithm-safe (spec 2.1, Theorem 5.1): a rejected
cut consults ``S_max`` of halves that are never published. Mondrian+ (paper 000 Algorithm 1,
spec 2.2) fixes that with one different cut rule, see :class:`CutRule`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kerckhoffs.algorithms.pickup import pickup
from kerckhoffs.algorithms.registry import parse_scheme, pick, refuse_others, register
from kerckhoffs.algorithms.sa_reads import SAReadLog
from kerckhoffs.data.schema import Kind, SensitiveMode
from kerckhoffs.data.table import Table
from kerckhoffs.errors import ParameterError
from kerckhoffs.models.base import PrivacyModel, format_number
from kerckhoffs.models.histogram import GroupHistogram
from kerckhoffs.models.k_anonymity import KAnonymity
from kerckhoffs.models.l_diversity import EntropyLDiversity, LDiversity, entropy_of_counts
from kerckhoffs.models.t_closeness import TCloseness, emd_to
from kerckhoffs.randomness import Seed, generator
from kerckhoffs.release import Partition, Provenance, Release, Scheme

EPS = 1e-9
"""Tolerance when comparing ``l * count`` (l may be fractional) with a row count."""

MEDIANS = ("lower", "upper")
CUTS = ("strict", "relaxed")


# -- allowable-cut rules -------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class CutStats:
    """Statistics of candidate cuts, one entry per candidate (a group cut on one dimension).

    ``size`` is ``|G|``, ``left`` is ``|L|`` (``right = |G| - |L|``). ``bounded`` is ``c(G)``,
    the count frequency l-diversity bounds (``S_max(G)`` when every SA value is sensitive, else
    the sensitive count of the schema's subset, as :attr:`GroupHistogram.sensitive_count`);
    ``bounded_left`` / ``bounded_right`` are ``c(L)`` / ``c(R)``; ``hist_left`` /
    ``hist_right`` the halves' full SA histograms ``[candidates, n_sa]`` (entropy l-diversity,
    t-closeness). The SA fields are ``None`` unless the rule declares that it reads them
    (``reads_group_sa`` / ``reads_halves_sa`` / ``reads_halves_hist``), so k-anonymity cuts
    never touch the SA.
    """

    size: np.ndarray
    left: np.ndarray
    bounded: np.ndarray | None = None
    bounded_left: np.ndarray | None = None
    bounded_right: np.ndarray | None = None
    hist_left: np.ndarray | None = None
    hist_right: np.ndarray | None = None

    @property
    def right(self) -> np.ndarray:
        """``|R| = |G| - |L|``."""
        return self.size - self.left


class CutRule:
    """Whether a candidate cut ``G -> (L, R)`` is allowed (vectorized over candidates).

    Subclasses set ``reads_group_sa`` / ``reads_halves_sa`` to the SA statistics they need
    (also an audit of what a rule reads: statistics of halves that end up unpublished are what
    makes original Mondrian leak, spec 2.1) and implement :meth:`allowed`.

    **Mondrian+ is one different rule** (paper 000 Algorithm 1; spec ``asap.md`` 2.2, global
    look-ahead),
    :class:`LookAheadCut`: a cut of ``G`` is allowed only when both halves have at least
    ``l * S_max(G)`` rows. It reads the SA of ``G`` only, which is always a union of published
    groups, so it never consults an unpublished statistic (equivalently, a k-anonymity cut
    with ``k = l * S_max(G)`` per group); :func:`mondrian_plus` is ``mondrian_groups(table,
    LookAheadCut(l))`` after the l-eligibility check.
    """

    reads_group_sa: bool = False
    reads_halves_sa: bool = False
    reads_halves_hist: bool = False

    def allowed(self, stats: CutStats) -> np.ndarray:
        """Boolean per candidate: may ``G`` be cut into these halves."""
        raise NotImplementedError

    def describe(self) -> str:
        """Short description for error messages and provenance."""
        return type(self).__name__


class KAnonymityCut(CutRule):
    """k-anonymity Mondrian (spec ``asap.md`` 2.3): allowed iff ``|L| >= k`` and ``|R| >= k``."""

    def __init__(self, k: int) -> None:
        self.k = int(k)

    def allowed(self, stats: CutStats) -> np.ndarray:
        return (stats.left >= self.k) & (stats.right >= self.k)

    def describe(self) -> str:
        return f"k={self.k}"


class LDiversityCut(CutRule):
    """Frequency l-diversity Mondrian (spec ``asap.md`` 2.1): allowed iff
    ``|L| >= l * c(L)`` and ``|R| >= l * c(R)``, ``c`` the subset-aware bounded count."""

    reads_halves_sa = True

    def __init__(self, l: float) -> None:  # noqa: E741
        self.l = float(l)

    def allowed(self, stats: CutStats) -> np.ndarray:
        assert stats.bounded_left is not None and stats.bounded_right is not None
        return (stats.left + EPS >= self.l * stats.bounded_left) & (
            stats.right + EPS >= self.l * stats.bounded_right
        )

    def describe(self) -> str:
        return f"l={format_number(self.l)}"


class LookAheadCut(CutRule):
    """Mondrian+'s global look-ahead (paper 000, Algorithm 1 and Theorem 6.1; spec ``asap.md``
    2.2): allowed iff ``|L| >= l * c(G)`` and ``|R| >= l * c(G)``, ``c(G)`` the bounded count
    of the group being cut (``S_max(G)`` when every SA value counts).

    The worst case, every copy of the most frequent value landing in one half, still leaves
    that half l-diverse: ``c(L) / |L| <= c(G) / |L| <= 1 / l`` (eq. 20). Unlike
    :class:`LDiversityCut` it never looks at the halves' SA, only at ``G``'s, and every group
    the recursion tests ends up a union of published groups, so the statistic is recomputable
    from the release (Theorem 5.3: algorithm-safe).
    """

    reads_group_sa = True

    def __init__(self, l: float) -> None:  # noqa: E741
        self.l = float(l)

    def allowed(self, stats: CutStats) -> np.ndarray:
        assert stats.bounded is not None
        need = self.l * stats.bounded - EPS
        return (stats.left >= need) & (stats.right >= need)

    def describe(self) -> str:
        return f"look-ahead l={format_number(self.l)}"


class AllCuts(CutRule):
    """Every one of ``rules`` must allow the cut (k-anonymity and l-diversity together)."""

    def __init__(self, rules: Sequence[CutRule]) -> None:
        self.rules = tuple(rules)
        self.reads_group_sa = any(r.reads_group_sa for r in self.rules)
        self.reads_halves_sa = any(r.reads_halves_sa for r in self.rules)
        self.reads_halves_hist = any(r.reads_halves_hist for r in self.rules)

    def allowed(self, stats: CutStats) -> np.ndarray:
        ok = np.ones(stats.size.shape, dtype=bool)
        for r in self.rules:
            ok &= r.allowed(stats)
        return ok

    def describe(self) -> str:
        return ", ".join(r.describe() for r in self.rules)


class EntropyLDiversityCut(CutRule):
    """Entropy l-diversity Mondrian (paper 004 Def. 4; spec ``composition.md`` 3.4): allowed
    iff both halves have SA entropy ``>= log l``."""

    reads_halves_sa = True
    reads_halves_hist = True

    def __init__(self, l: float) -> None:  # noqa: E741
        self.l = float(l)
        self.log_l = math.log(self.l)

    def allowed(self, stats: CutStats) -> np.ndarray:
        assert stats.hist_left is not None and stats.hist_right is not None
        return (entropy_of_counts(stats.hist_left) + 1e-9 >= self.log_l) & (
            entropy_of_counts(stats.hist_right) + 1e-9 >= self.log_l
        )

    def describe(self) -> str:
        return f"entropy-l={format_number(self.l)}"


class TClosenessCut(CutRule):
    """t-closeness Mondrian (paper 004 Def. 5; spec ``composition.md`` 3.4): allowed iff both
    halves are within EMD ``t`` of the table's SA distribution ``totals``."""

    reads_halves_sa = True
    reads_halves_hist = True

    def __init__(self, t: float, totals: np.ndarray, ordered: bool) -> None:
        self.t = float(t)
        self.totals = np.asarray(totals)
        self.ordered = ordered

    def allowed(self, stats: CutStats) -> np.ndarray:
        assert stats.hist_left is not None and stats.hist_right is not None
        near = self.t + 1e-12
        return (emd_to(stats.hist_left, self.totals, self.ordered) <= near) & (
            emd_to(stats.hist_right, self.totals, self.ordered) <= near
        )

    def describe(self) -> str:
        return f"t={format_number(self.t)}"


class FunctionCut(CutRule):
    """A plain callable ``f(CutStats) -> bool array`` as a rule (reads every SA statistic)."""

    reads_group_sa = True
    reads_halves_sa = True

    def __init__(self, fn: Callable[[CutStats], np.ndarray]) -> None:
        self.fn = fn

    def allowed(self, stats: CutStats) -> np.ndarray:
        return np.asarray(self.fn(stats), dtype=bool)

    def describe(self) -> str:
        return getattr(self.fn, "__name__", "custom rule")


def as_rule(rule: CutRule | Callable[[CutStats], np.ndarray]) -> CutRule:
    """``rule`` as a :class:`CutRule` (a callable is wrapped in :class:`FunctionCut`)."""
    return rule if isinstance(rule, CutRule) else FunctionCut(rule)


# -- the partitioner -----------------------------------------------------------------------------
def _bounded_reducer(table: Table) -> tuple[np.ufunc, np.ndarray | None]:
    """How a (group, SA) count vector reduces to the bounded count c(group).

    Mirrors :attr:`GroupHistogram.sensitive_count`: max over all values when every value is
    sensitive; sum over the sensitive subset in ``set`` mode; max over it in ``each`` mode.
    Returns the ufunc and the per-SA-code weight mask (None = all values count).
    """
    sens = np.asarray(table.sensitive, dtype=bool)
    if sens.all():
        return np.maximum, None
    if table.schema.sensitive_mode == SensitiveMode.SET:
        return np.add, sens
    return np.maximum, sens


def _code_sort(codes: np.ndarray, size: int, dtype: type) -> np.ndarray:
    """Stable argsort of small non-negative codes (radix sort through uint16 when it fits)."""
    if size <= np.iinfo(np.uint16).max:
        return np.argsort(codes.astype(np.uint16), kind="stable").astype(dtype)
    return np.argsort(codes, kind="stable").astype(dtype)


def _exclusive_cumsum(x: np.ndarray) -> np.ndarray:
    out = np.zeros(x.size, dtype=np.int64)
    np.cumsum(x[:-1], out=out[1:])
    return out


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The positions ``starts[i] .. starts[i] + lengths[i] - 1`` of some segments, concatenated."""
    lengths = np.asarray(lengths, dtype=np.int64)
    offset = np.asarray(starts, dtype=np.int64) - _exclusive_cumsum(lengths)
    return np.arange(int(lengths.sum()), dtype=np.int64) + np.repeat(offset, lengths)


def _search(
    code_at: Callable[[np.ndarray], np.ndarray],
    lo: np.ndarray,
    hi: np.ndarray,
    value: np.ndarray,
    above: bool,
) -> np.ndarray:
    """Per segment, the first position in ``[lo, hi)`` whose code is ``> value`` (``above``)
    or ``>= value``, ``hi`` if none: a binary search run for all segments at once (codes are
    sorted inside each segment), dropping the segments that are done."""
    lo = lo.copy()
    hi = hi.copy()
    act = np.flatnonzero(lo < hi)
    while act.size:
        a, b = lo[act], hi[act]
        mid = (a + b) >> 1
        c = code_at(mid)
        before = c <= value[act] if above else c < value[act]
        lo[act] = np.where(before, mid + 1, a)
        hi[act] = np.where(before, b, mid)
        act = act[lo[act] < hi[act]]
    return lo


def mondrian_groups(
    table: Table,
    rule: CutRule | Callable[[CutStats], np.ndarray],
    *,
    median: str = "lower",
    cuts: str = "strict",
    sa_log: SAReadLog | None = None,
) -> np.ndarray:
    """Group id per row of Mondrian's partition of ``table`` under the cut ``rule``.

    The engine behind :func:`mondrian` (and Mondrian+ / MASK, which pass their own rules).
    No precondition is checked here: a table whose root violates the rule's model comes back
    as one group. Group ids are in order of first appearance in the rows.

    How (module docstring): every active group is a segment ``[start, start + size)`` of
    ``perms[j]``, the active row ids sorted by (group, code of QI ``j``, row id), for every
    ``j`` (and ``perms[d]`` sorted by (group, SA, row id) when the rule reads the SA). At
    each depth, for all groups at once: ranges and medians are gathers at segment positions;
    ``|L|`` is a binary search inside the segments; the rule is evaluated dimension by
    dimension in each group's order of normalized range, the halves' SA counts coming from
    one ``bincount`` over the (group, SA) pairs of the smaller half of the groups still
    undecided. Finished groups are dropped; each split group is split stably in every
    ``perms[j]`` (a cumulative sum gives each row its rank within its half), so the orders
    stay sorted without sorting again.

    ``sa_log`` (:mod:`~kerckhoffs.algorithms.sa_reads`) records the SA statistics the rule
    reads: ``c(G)`` of every group with a candidate cut (rules reading the group's SA) and
    ``c(L)``, ``c(R)`` of every candidate evaluated (rules reading the halves). Not touched
    when ``None``.
    """
    if median not in MEDIANS:
        raise ParameterError(
            f"mondrian: median must be one of {', '.join(MEDIANS)}, got {median!r}"
        )
    if cuts not in CUTS:
        raise ParameterError(f"mondrian: cuts must be one of {', '.join(CUTS)}, got {cuts!r}")
    rule = as_rule(rule)
    lower = median == "lower"
    strict = cuts == "strict"
    n, d = table.n, table.d
    # (typed Any: the index width is chosen at run time, which numpy's stubs cannot follow)
    idx: Any = np.int32 if n < np.iinfo(np.int32).max else np.int64
    qi = table.qi
    sa = table.sa
    widths = np.array([max(c.size - 1, 0) for c in table.qi_columns], dtype=np.float64)
    need_pairs = rule.reads_group_sa or rule.reads_halves_sa
    halves_sa = rule.reads_halves_sa
    reducer, sens_mask = _bounded_reducer(table)
    n_sa_hist = max(table.n_sa, 1)

    perms = [_code_sort(qi[:, j], table.qi_columns[j].size, idx) for j in range(d)]
    if need_pairs:
        perms.append(_code_sort(sa, max(table.n_sa, 1), idx))
    out = np.full(n, -1, dtype=np.int64)
    next_id = 0
    sizes = np.array([n], dtype=np.int64)
    is_left = np.zeros(n, dtype=bool)
    pair_of_row = np.zeros(n, dtype=idx) if halves_sa else None

    while sizes.size:
        n_groups = sizes.size
        n_act = int(sizes.sum())
        starts = _exclusive_cumsum(sizes)
        ends = starts + sizes
        every = np.arange(n_groups)

        # SA statistics of the groups, from the (group, SA) pairs of the SA order
        bounded = pair_tot = pair_first = pair_count = pair_w = pair_sa = None
        if need_pairs:
            s_sorted = sa[perms[d]]
            change = np.empty(n_act, dtype=bool)
            change[0] = True
            np.not_equal(s_sorted[1:], s_sorted[:-1], out=change[1:])
            change[starts[1:]] = True
            pair_start = np.flatnonzero(change)
            pair_tot = np.diff(np.append(pair_start, n_act))
            pair_pos = np.cumsum(change, dtype=idx)
            pair_pos -= 1
            pair_first = pair_pos[starts].astype(np.int64)
            pair_count = np.diff(np.append(pair_first, pair_start.size))
            if sens_mask is not None:
                pair_w = sens_mask[s_sorted[pair_start]]
            bounded = _reduce(pair_tot, pair_w, reducer, pair_first)
            if rule.reads_halves_hist:
                pair_sa = s_sorted[pair_start].astype(np.int64)
            if pair_of_row is not None:
                pair_of_row[perms[d]] = pair_pos
            del s_sorted, change, pair_pos

        # candidate cuts: normalized range and |L| of every group on every dimension
        norm = np.zeros((n_groups, d), dtype=np.float64)
        n_left = np.empty((n_groups, d), dtype=np.int64)
        for j in range(d):
            col, p = qi[:, j], perms[j]

            def code_at(pos: np.ndarray, col: np.ndarray = col, p: np.ndarray = p) -> np.ndarray:
                return col[p[pos]]

            spread = code_at(ends - 1) - code_at(starts)
            if widths[j] > 0:
                norm[:, j] = spread / widths[j]
            nl = sizes.copy()  # |L| = |G|: not a cut
            g = np.flatnonzero(spread > 0)
            if strict:
                s, e, m = starts[g], ends[g], sizes[g]
                if lower:  # L = {t <= v}, v the value at sorted position ceil(m/2) - 1
                    med = s + (m + 1) // 2 - 1
                    nl[g] = _search(code_at, med + 1, e, code_at(med), True) - s
                else:  # L = {t < v}, v the value at sorted position floor(m/2)
                    med = s + m // 2
                    nl[g] = _search(code_at, s, med, code_at(med), False) - s
            else:
                nl[g] = (sizes[g] + 1) // 2 if lower else sizes[g] // 2
            n_left[:, j] = nl
        cand = (n_left > 0) & (n_left < sizes[:, None])

        # allowed cuts
        allowed = np.zeros((n_groups, d), dtype=bool)
        if sa_log is not None and rule.reads_group_sa:
            _log_groups(sa_log, perms[0], starts, sizes, np.flatnonzero(cand.any(axis=1)))
        if not halves_sa:
            gi, ji = np.nonzero(cand)
            if gi.size:
                stats = CutStats(
                    sizes[gi], n_left[gi, ji], None if bounded is None else bounded[gi]
                )
                allowed[gi, ji] = rule.allowed(stats)
        else:
            # try each group's dimensions in its order, reading halves only when needed
            assert pair_of_row is not None and pair_tot is not None and bounded is not None
            assert pair_first is not None and pair_count is not None
            order = np.argsort(-np.where(cand, norm, -1.0), axis=1, kind="stable")
            n_cand = cand.sum(axis=1)
            undecided = n_cand > 0
            for r in range(d):
                todo = np.flatnonzero(undecided & (n_cand > r))
                if not todo.size:
                    break
                dims = order[todo, r]
                for j in range(d):
                    g = todo[dims == j]
                    if not g.size:
                        continue
                    nl, m = n_left[g, j], sizes[g]
                    small_left = nl <= m - nl
                    length = np.where(small_left, nl, m - nl)
                    pos = _ranges(np.where(small_left, starts[g], starts[g] + nl), length)
                    pid = pair_of_row[perms[j][pos]].astype(np.int64)
                    pf, pc = pair_first[g], pair_count[g]
                    local_first = _exclusive_cumsum(pc)
                    pid -= np.repeat(pf - local_first, length)
                    cnt = np.bincount(pid, minlength=int(pc.sum()))
                    pairs = _ranges(pf, pc)
                    w = None if pair_w is None else pair_w[pairs]
                    b_small = _reduce(cnt, w, reducer, local_first)
                    b_other = _reduce(pair_tot[pairs] - cnt, w, reducer, local_first)
                    h_left = h_right = None
                    if pair_sa is not None:  # full histograms of the halves
                        cand_of_pair = np.repeat(np.arange(g.size), pc)
                        small = np.zeros((g.size, n_sa_hist), dtype=np.int64)
                        small[cand_of_pair, pair_sa[pairs]] = cnt
                        other = np.zeros_like(small)
                        other[cand_of_pair, pair_sa[pairs]] = pair_tot[pairs] - cnt
                        h_left = np.where(small_left[:, None], small, other)
                        h_right = np.where(small_left[:, None], other, small)
                    stats = CutStats(
                        m,
                        nl,
                        bounded[g],
                        np.where(small_left, b_small, b_other),
                        np.where(small_left, b_other, b_small),
                        h_left,
                        h_right,
                    )
                    if sa_log is not None:
                        _log_halves(sa_log, perms[j], starts[g], m, nl)
                    ok = np.asarray(rule.allowed(stats), dtype=bool)
                    allowed[g[ok], j] = True
                    undecided[g[ok]] = False

        # first allowed dimension in order of decreasing normalized range (ties: lower index)
        best = np.argmax(np.where(allowed, norm, -1.0), axis=1)
        split = allowed[every, best]
        nl_best = n_left[every, best]

        # finished groups leave with their final ids
        if not split.all():
            done = np.flatnonzero(~split)
            pos = _ranges(starts[done], sizes[done])
            out[perms[0][pos]] = np.repeat(next_id + np.arange(done.size), sizes[done])
            next_id += done.size
            if not split.any():
                break
            keep = _ranges(starts[split], sizes[split])
            perms = [p[keep] for p in perms]
            sizes, nl_best, best = sizes[split], nl_best[split], best[split]
            starts = _exclusive_cumsum(sizes)
            n_act = int(sizes.sum())

        # which rows go left: the first |L| positions of the group in its chosen dimension
        for j in range(d):
            g = np.flatnonzero(best == j)
            if not g.size:
                continue
            pos = _ranges(starts[g], sizes[g])
            rank = pos - np.repeat(starts[g], sizes[g])
            is_left[perms[j][pos]] = rank < np.repeat(nl_best[g], sizes[g])

        # split every order stably: L keeps the group's start, R starts |L| further
        start_m1 = np.repeat((starts - 1).astype(idx), sizes)
        right_base = np.arange(n_act, dtype=idx)
        right_base += np.repeat(nl_best.astype(idx), sizes)
        has_prev = starts > 0
        for i, p in enumerate(perms):
            left = is_left[p]
            lefts = np.cumsum(left, dtype=idx)  # lefts in [0, pos]
            before = np.zeros(sizes.size, dtype=idx)
            before[has_prev] = lefts[starts[has_prev] - 1]
            lefts -= np.repeat(before, sizes)  # lefts in [start, pos]
            dest = np.where(left, start_m1 + lefts, right_base - lefts)
            new_p = np.empty_like(p)
            new_p[dest] = p
            perms[i] = new_p
        new_sizes = np.empty(2 * sizes.size, dtype=np.int64)
        new_sizes[0::2] = nl_best
        new_sizes[1::2] = sizes - nl_best
        sizes = new_sizes

    assert (out >= 0).all()
    return Partition.from_labels(out).group


def _log_groups(
    sa_log: SAReadLog, perm: np.ndarray, starts: np.ndarray, sizes: np.ndarray, g: np.ndarray
) -> None:
    """Record that ``c(G)`` was read for the groups ``g`` (segments of ``perm``)."""
    pos = _ranges(starts[g], sizes[g])
    sa_log.record(perm[pos], np.repeat(g, sizes[g]), "S_max of the group being cut")


def _log_halves(
    sa_log: SAReadLog, perm: np.ndarray, starts: np.ndarray, sizes: np.ndarray, nl: np.ndarray
) -> None:
    """Record that ``c(L)`` and ``c(R)`` were read for candidate cuts (groups are segments of
    ``perm``, the order of the cut dimension; ``L`` = the first ``nl`` positions)."""
    pos = _ranges(starts, sizes)
    rank = pos - np.repeat(starts, sizes)
    half = 2 * np.repeat(np.arange(sizes.size), sizes) + (rank >= np.repeat(nl, sizes))
    sa_log.record(perm[pos], half, "S_max of the candidate halves")


def _reduce(
    counts: np.ndarray, weight: np.ndarray | None, reducer: np.ufunc, first: np.ndarray
) -> np.ndarray:
    """Per-group bounded count from per-pair counts (pairs sorted by group)."""
    if weight is not None:
        counts = counts * weight
    return reducer.reduceat(counts, first)


# -- the registered algorithm --------------------------------------------------------------------
def _rule_from_models(
    table: Table, models: list[PrivacyModel], name: str
) -> tuple[CutRule, dict[str, Any]]:
    refuse_others(models, (KAnonymity, LDiversity, EntropyLDiversity, TCloseness), name)
    k_model = pick(models, KAnonymity, name)
    l_model = pick(models, LDiversity, name)
    e_model = pick(models, EntropyLDiversity, name)
    t_model = pick(models, TCloseness, name)
    if k_model is None and l_model is None and e_model is None and t_model is None:
        raise ParameterError(
            f"{name} needs a k-anonymity (k=K), l-diversity (l=L), entropy l-diversity "
            "(entropy-l=L) or t-closeness (t=T) model"
        )
    hist = GroupHistogram.from_codes(
        np.zeros(table.n, dtype=np.int64),
        table.sa,
        1,
        table.n_sa,
        table.sensitive,
        table.schema.sensitive_mode,
        table.sa_column.kind,
    )
    rules: list[CutRule] = []
    params: dict[str, Any] = {}
    if k_model is not None:
        k_model.validate(hist, table.sa_name)
        rules.append(KAnonymityCut(k_model.k))
        params["k"] = k_model.k
    if l_model is not None:
        l_model.validate(hist, table.sa_name)
        c = int(hist.sensitive_count[0])
        if table.n + EPS < l_model.l * c:
            what = "S_max" if hist.all_sensitive else "its sensitive count"
            raise ParameterError(
                f"{name}: the table is not l-eligible for l={format_number(l_model.l)}: "
                f"{table.n} rows < l * {what} ({c}) = {format_number(l_model.l * c)}"
            )
        rules.append(LDiversityCut(l_model.l))
        params["l"] = l_model.l
    if e_model is not None:
        e_model.validate(hist, table.sa_name)
        whole = e_model.evaluate(hist)
        if not whole.satisfied:
            raise ParameterError(
                f"{name}: the whole table is not entropy {format_number(e_model.l)}-diverse "
                f"(its entropy allows l = {format_number(whole.achieved)})"
            )
        rules.append(EntropyLDiversityCut(e_model.l))
        params["entropy_l"] = e_model.l
    if t_model is not None:
        rules.append(TClosenessCut(t_model.t, hist.totals, table.sa_column.kind == Kind.NUMERIC))
        params["t"] = t_model.t
    return (rules[0] if len(rules) == 1 else AllCuts(rules)), params


@register(
    "mondrian",
    summary="Mondrian multidimensional median partitioning (LeFevre et al. 2006)",
    models=("KAnonymity", "LDiversity", "EntropyLDiversity", "TCloseness"),
    options={
        "median": "lower (default) | upper: which median value splits a group",
        "cuts": "strict (default) | relaxed: may rows equal to the median go to both halves",
    },
)
def mondrian(
    table: Table,
    models: list[PrivacyModel],
    *,
    seed: Seed = None,
    median: str = "lower",
    cuts: str = "strict",
    sa_log: SAReadLog | None = None,
) -> Release:
    """Mondrian for k-anonymity, frequency l-diversity (spec ``asap.md`` 2.1, 2.3), entropy
    l-diversity and t-closeness (paper 004's constrained Mondrian, spec ``composition.md`` 3.4).

    Reads ``k`` from :class:`~kerckhoffs.models.KAnonymity`, ``l`` from
    :class:`~kerckhoffs.models.LDiversity`, entropy ``l`` from
    :class:`~kerckhoffs.models.EntropyLDiversity` and ``t`` from
    :class:`~kerckhoffs.models.TCloseness`; a cut is allowed only when both halves satisfy
    every model given (the last two read the halves' full SA histograms). Raises
    :class:`~kerckhoffs.errors.ParameterError` for other models, ``k`` above the table size, or
    a table that is not l-eligible (``|T| < l * c(T)``). Deterministic: ``seed`` is
    not used. Returns a generalization release whose every group satisfies the models.

    ``sa_log`` records the SA statistics read (information-flow audit, spec 1.10 item 2):
    under l-diversity, ``S_max`` of the whole table and of every candidate half; a rejected
    cut's halves are never published, so the audit fails wherever a cut was rejected on them.
    """
    rule, params = _rule_from_models(table, models, "mondrian")
    if sa_log is not None and "l" in params:
        sa_log.record(np.arange(table.n), 0, "S_max of the table (l-eligibility)")
    group = mondrian_groups(table, rule, median=median, cuts=cuts, sa_log=sa_log)
    params.update(median=median, cuts=cuts)
    return Release(
        table,
        Partition(group),
        Scheme.GENERALIZATION,
        table.sa,
        Provenance("mondrian", params),
    )


# -- Mondrian+ and Mondrian++ (paper 000 sections 6-7: the algorithm-safe variants) -------------
def _plus_rule_from_models(
    table: Table, models: list[PrivacyModel], name: str
) -> tuple[CutRule, dict[str, Any]]:
    """:func:`_rule_from_models` (same checks) with the l-diversity cut replaced by the
    look-ahead; an l-diversity model is required."""
    refuse_others(models, (KAnonymity, LDiversity), name)
    if not any(isinstance(m, LDiversity) for m in models):
        raise ParameterError(f"{name} needs an l-diversity model (l=L)")
    rule, params = _rule_from_models(table, models, name)
    rules = rule.rules if isinstance(rule, AllCuts) else (rule,)
    swapped = [LookAheadCut(r.l) if isinstance(r, LDiversityCut) else r for r in rules]
    return (swapped[0] if len(swapped) == 1 else AllCuts(swapped)), params


@register(
    "mondrian+",
    family="mondrian",
    base="mondrian",
    summary="Mondrian+ (global look-ahead, algorithm-safe): cut G only when both halves "
    "have >= l * S_max(G) rows (paper 000, Alg. 1)",
    models=("LDiversity", "KAnonymity"),
    options={
        "median": "lower (default) | upper: which median value splits a group",
        "cuts": "strict (default) | relaxed: may rows equal to the median go to both halves",
    },
)
def mondrian_plus(
    table: Table,
    models: list[PrivacyModel],
    *,
    seed: Seed = None,
    median: str = "lower",
    cuts: str = "strict",
    sa_log: SAReadLog | None = None,
) -> Release:
    """Mondrian+ (paper 000 Algorithm 1, Theorem 6.1; spec ``asap.md`` 2.2, interpretation A).

    Mondrian with ONE different cut rule, :class:`LookAheadCut`: a cut of ``G`` is allowed
    only when both halves have at least ``l * S_max(G)`` rows (``c(G)`` under a sensitive
    subset), instead of original Mondrian's "both halves are l-diverse". The only SA statistic
    read is ``S_max`` of the groups being cut (and of the table, for l-eligibility), each a
    union of published groups, so the release is algorithm-safe (Theorem 5.3) and ``sa_log``
    (information-flow audit) finds no violation. The printed Algorithm 1 is not executable
    (``G1, G2`` used before defined, ``InputSet`` never updated: spec ``asap.md`` section 8,
    A4); this is its canonical recursion (spec 2.2), whose output
    does not depend on the order groups are processed in.

    Requires :class:`~kerckhoffs.models.LDiversity`; a :class:`~kerckhoffs.models.KAnonymity`
    given on top also bounds every half by ``k``. Same checks and refusals as :func:`mondrian`
    (one-line :class:`~kerckhoffs.errors.ParameterError`, e.g. a table that is not
    l-eligible, spec 3.6 X8). Deterministic: ``seed`` is not used. Groups are
    coarser than Mondrian's (lower utility, paper 000 Figure 10i); Mondrian++ refines them.
    """
    rule, params = _plus_rule_from_models(table, models, "mondrian+")
    if sa_log is not None:
        sa_log.record(np.arange(table.n), 0, "S_max of the table (l-eligibility)")
    group = mondrian_groups(table, rule, median=median, cuts=cuts, sa_log=sa_log)
    params.update(median=median, cuts=cuts)
    return Release(
        table,
        Partition(group),
        Scheme.GENERALIZATION,
        table.sa,
        Provenance("mondrian+", params),
    )


@register(
    "mondrian++",
    family="mondrian",
    base="mondrian+",
    summary="Mondrian++: Mondrian+ then stratified pick-up (Anatomy inside each group of "
    ">= 2l rows, random choice), algorithm-safe (paper 000, Alg. 5/6)",
    models=("LDiversity", "KAnonymity"),
    schemes=(Scheme.GENERALIZATION, Scheme.BUCKETIZATION),
    randomized=True,
    options={
        "scheme": "generalization (default, Alg. 5) | bucketization (Alg. 6)",
        "median": "lower (default) | upper: which median value splits a group",
        "cuts": "strict (default) | relaxed: may rows equal to the median go to both halves",
    },
)
def mondrian_plus_plus(
    table: Table,
    models: list[PrivacyModel],
    *,
    seed: Seed = None,
    scheme: str | Scheme = Scheme.GENERALIZATION,
    median: str = "lower",
    cuts: str = "strict",
    sa_log: SAReadLog | None = None,
) -> Release:
    """Mondrian++ (paper 000 Algorithms 5 and 6; spec ``asap.md`` 2.9): :func:`mondrian_plus`,
    then stratified pick-up (:func:`kerckhoffs.algorithms.pickup.pickup`, seeded by ``seed``)
    inside every group of at least ``2 l`` rows.

    The pick-up groups hold pairwise distinct SA values and ``l' .. 2 l' - 1`` rows, with
    ``l' = max(ceil(l), k)`` (``k`` from a :class:`~kerckhoffs.models.KAnonymity` given on top,
    else 0), so they satisfy both models; the paper has no ``k`` and ``l' = l``. Pick-up reads
    only each Mondrian+ group's SA multiset, which stays published (the group is the union of
    its pick-up groups), so the release stays algorithm-safe (Theorem 7.2). Published by
    generalization (``scheme="generalization"``, each pick-up group with its own generalized
    QI) or bucketization (``scheme="bucketization"``, exact QIs + group ids and per-group SA
    counts). ``seed``: an int (tests, experiments), a :class:`numpy.random.Generator`, or None
    (default) for fresh randomness from the operating system (:mod:`kerckhoffs.randomness`).
    """
    scheme = parse_scheme(scheme, "mondrian++")
    rule, params = _plus_rule_from_models(table, models, "mondrian++")
    if sa_log is not None:
        sa_log.record(np.arange(table.n), 0, "S_max of the table (l-eligibility)")
    group = mondrian_groups(table, rule, median=median, cuts=cuts, sa_log=sa_log)
    l_pick = max(math.ceil(float(params["l"]) - EPS), int(params.get("k", 0)), 1)
    rng = generator(seed)
    part = pickup(table, group, l_pick, rng, sa_log=sa_log)
    params.update(median=median, cuts=cuts, scheme=scheme.value, pickup_l=l_pick)
    return Release(table, part, scheme, table.sa, Provenance("mondrian++", params))


__all__ = [
    "AllCuts",
    "CutRule",
    "CutStats",
    "FunctionCut",
    "KAnonymityCut",
    "LDiversityCut",
    "LookAheadCut",
    "as_rule",
    "mondrian",
    "mondrian_groups",
    "mondrian_plus",
    "mondrian_plus_plus",
]
