"""Stochastic DP tester: a statistical LOWER bound on the epsilon a count release really has
(paper 004, spec ``composition.md`` 2.9 Def. 10/11 and 3.8; DESIGN.md section 5: "counting is
ours, and a stochastic tester checks that our sensitivities are right").

Why: OpenDP's privacy map certifies the noise for the sensitivity ``Δ`` *we* tell it. Whether
``Δ`` is right depends on our counting code: under substitution neighbours (spec 2.9, AMB-6:
one person's record changes, ``n`` fixed) one cell goes down by one and another up by one, so
``Δ = 2``; a scale of ``1/ε`` (``Δ = 1``, the add/remove value) would really give ``2ε``.
The tester runs the whole pipeline (table -> public cell domain -> one ``bincount`` ->
OpenDP noise -> clamp and round) many times on a pair of NEIGHBOURING tables ``D, D'`` and
looks for an output event ``E`` with ``P(E | D) > e^ε P(E | D') + δ``, the violation Def. 10/11
forbids.

Method (the one of Ding et al., "Detecting violations of differential privacy", CCS 2018,
also used by Google's DP library stochastic tester and DP-Auditorium): the samples of each
side are split in two parts, a selection part (default 20%: the changed cells are easy to
find, and a larger test part gives tighter intervals; measured: the broken mechanism's mean
bound at 3000 samples rises from 1.26 with halves to 1.40) and a test part.

1. *Selection part*: candidate events are one-cell threshold events ``{s X_i >= t}`` and
   two-cell quadrant events ``{s_i X_i >= t_i and s_j X_j >= t_j}`` (signs ``s = ±1``) over the
   cells whose mean moves most between ``D`` and ``D'``, and both directions ``D / D'`` and
   ``D' / D``. A quadrant is needed: under substitution each of the two changed cells alone
   moves by one, so a one-cell event never shows more than ``ε`` even when the scale is wrong;
   the two together show ``2ε``. Further, over the ``k`` most-moved cells (``k`` up to
   ``max_cells``): orthant events (every cell past its threshold, signed by the direction its
   mean moves; Laplace/geometric tail ratios multiply, so an orthant through the ``2q`` cells
   a substitution moves in ``q`` marginals shows all ``q`` marginals' loss) and half-plane
   events ``sum_i s_i X_i >= t`` (the Gaussian's best events). The event with the best
   approximate (Wilson) bound wins.

Pipelines covered: :func:`audit_histogram` (dp-histogram: geometric, Laplace, Gaussian with
its delta), :func:`audit_marginals` (dp-marginals), :func:`audit_level_selection`
(``levels=auto``'s report-noisy-max choice, a mechanism of its own: its output is a one-hot
choice, events "level vector j chosen").
:func:`audit_rr` (dp-rr, k-ary randomized response under substitution of one record's SA
value or whole cell: the vector is that record's response, one-hot, or the published count
table; OpenDP's bits for ``runs x rows`` responses at once; a ``threshold`` hook replaces
the keep/replace threshold so tests can break it).
2. *Test part* (independent of the choice): exact Clopper-Pearson bounds, a lower bound
   ``p_lo`` on ``P(E | D)`` and an upper bound ``q_hi`` on ``P(E | D')``, each at one-sided level
   ``α/2``. The reported bound is ``ln((p_lo - δ) / q_hi)`` (0 if not positive).

If the mechanism is ``(ε, δ)``-DP, the bound exceeds ``ε`` with probability at most ``α`` (the
union of the two intervals' failures; the event was fixed before the test part was read).
So "bound > claimed ε" is a violation found at false-alarm rate ``α``; "bound <= ε" is no
proof of privacy, only the absence of evidence against it.

OpenDP draws per call and cannot be seeded; one call on a vector of ``cells * batch`` counts
(the count vector tiled ``batch`` times, same scale) gives ``batch`` independent noisy
histograms at once: that is the same per-coordinate noise as ``batch`` calls of the release's
own ``cells``-long measurement (checked: the scales must be equal).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs.data.schema import Schema
from kerckhoffs.data.table import Table
from kerckhoffs.dp.counts import (
    MAX_CELLS,
    CellDomain,
    cell_domain,
    dp_histogram,
    parse_levels,
    true_counts,
)
from kerckhoffs.dp.marginals import marginal_domain, parse_marginals, split_budget
from kerckhoffs.dp.mechanisms import (
    Mechanism,
    Neighbours,
    NoiseSpec,
    add_noise,
    check_budget,
    count_measurement,
    parse_mechanism,
    parse_neighbours,
    post_process,
)
from kerckhoffs.dp.randomized_response import PERTURB, randomize, replace_threshold
from kerckhoffs.dp.select import candidate_levels, noisy_max_measurement, utility
from kerckhoffs.errors import ParameterError

MeasurementFactory = Callable[[int, float, Mechanism, Neighbours, float], tuple[Any, NoiseSpec]]
"""``(cells, epsilon, mechanism, neighbours, delta) -> (OpenDP measurement, NoiseSpec)``, the
shape of :func:`kerckhoffs.dp.mechanisms.count_measurement` (the default; ``delta`` is 0 except
for the Gaussian). Tests pass a deliberately broken one to show the tester catches it."""

SelectionFactory = Callable[[int, float], tuple[Any, float, float]]
"""``(candidates, epsilon) -> (OpenDP measurement, scale, privacy map)``, the shape of
:func:`kerckhoffs.dp.select.noisy_max_measurement` (the default for
:func:`sample_level_choices`)."""

BATCH_ELEMENTS = 1_000_000
"""Largest noisy vector asked of OpenDP in one call (memory bound)."""


# -- Clopper-Pearson ---------------------------------------------------------------------------
def binomial_log_pmf(n: int, p: float) -> np.ndarray:
    """``ln P(Bin(n, p) = j)`` for ``j = 0..n`` (``0 < p < 1``)."""
    j = np.arange(n + 1, dtype=np.float64)
    log_fact = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, n + 1, dtype=np.float64)))])
    log_comb = log_fact[n] - log_fact - log_fact[::-1]
    return log_comb + j * math.log(p) + (n - j) * math.log1p(-p)


def _tail_at_least(k: int, n: int, p: float) -> float:
    """``P(Bin(n, p) >= k)``."""
    if p <= 0.0:
        return 0.0 if k > 0 else 1.0
    if p >= 1.0:
        return 1.0
    lp = binomial_log_pmf(n, p)[k:]
    top = float(lp.max())
    return float(min(1.0, math.exp(top) * np.exp(lp - top).sum()))


def clopper_pearson(k: int, n: int, level: float) -> tuple[float, float]:
    """Exact one-sided Clopper-Pearson bounds ``(lower, upper)`` on a binomial proportion from
    ``k`` successes in ``n`` trials: ``P(p < lower) <= level`` and ``P(p > upper) <= level``.

    ``lower`` solves ``P(Bin(n, lower) >= k) = level`` (0 when ``k = 0``); ``upper`` solves
    ``P(Bin(n, upper) <= k) = level`` (1 when ``k = n``). Found by bisection on the exact
    binomial tail (60 halvings: to about 1e-18).
    """
    if n < 1 or not 0 <= k <= n:
        raise ParameterError(f"clopper_pearson needs 0 <= k <= n and n >= 1, got k={k}, n={n}")
    if not 0 < level < 1:
        raise ParameterError(f"level must be in (0, 1), got {level}")

    def solve(tail_from: int, goal: float) -> float:
        # P(Bin(n, p) >= tail_from) increases in p: the p where it equals goal
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if _tail_at_least(tail_from, n, mid) < goal:
                lo = mid
            else:
                hi = mid
        return 0.5 * (lo + hi)

    lower = 0.0 if k == 0 else solve(k, level)
    # P(Bin(n, p) <= k) = level  <=>  P(Bin(n, p) >= k + 1) = 1 - level
    upper = 1.0 if k == n else solve(k + 1, 1.0 - level)
    return lower, upper


def _wilson(k: np.ndarray, n: int, z: float) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score bounds (vectorized; only to rank candidate events on the selection part)."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def _z(level: float) -> float:
    """Standard normal upper quantile ``z`` with ``P(Z > z) = level`` (bisection on erfc)."""
    lo, hi = 0.0, 40.0
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if 0.5 * math.erfc(mid / math.sqrt(2)) > level:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


# -- events ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Event:
    """An output event. ``combine="all"`` (a threshold or quadrant event): every listed cell
    ``i`` satisfies ``sign_i * X_i >= threshold_i``. ``combine="sum"`` (a half-plane event):
    ``sum_i sign_i * X_i >= thresholds[0]``, the signed sum over the listed cells (needed when
    one neighbour moves several cells: the Gaussian's best events are half-planes, and a
    marginals release moves two cells per marginal). ``forward`` says the ratio is
    ``P(E | D) / P(E | D')`` (else the reverse)."""

    cells: tuple[int, ...]
    signs: tuple[int, ...]
    thresholds: tuple[float, ...]
    forward: bool
    combine: str = "all"

    def occurs(self, samples: np.ndarray) -> np.ndarray:
        """Boolean per sample row."""
        if self.combine == "sum":
            total = samples[:, list(self.cells)] @ np.asarray(self.signs, dtype=np.float64)
            return np.asarray(total >= self.thresholds[0])
        hit = np.ones(samples.shape[0], dtype=bool)
        for c, s, t in zip(self.cells, self.signs, self.thresholds, strict=True):
            hit &= s * samples[:, c] >= t
        return hit

    def describe(self, labels: list[str] | None = None) -> str:
        """``count[M|10*] >= 21 and count[F|10*] <= 19`` or ``count[M|20*] - count[F|20*]
        >= 3`` (labels if given)."""

        def name(c: int) -> str:
            return f"count[{labels[c] if labels is not None else c}]"

        if self.combine == "sum":
            terms = " ".join(
                f"{'+' if s > 0 else '-'} {name(c)}"
                for c, s in zip(self.cells, self.signs, strict=True)
            )
            return f"{terms.removeprefix('+ ')} >= {self.thresholds[0]:g}"
        parts = []
        for c, s, t in zip(self.cells, self.signs, self.thresholds, strict=True):
            parts.append(f"{name(c)} {'>=' if s > 0 else '<='} {s * t:g}")
        return " and ".join(parts)


def _grid(values: np.ndarray, points: int) -> np.ndarray:
    """Candidate thresholds: distinct quantiles of ``values`` (all distinct values if few)."""
    distinct = np.unique(values)
    if len(distinct) <= points:
        return distinct
    return np.unique(np.quantile(values, np.linspace(0.0, 1.0, points), method="nearest"))


def _at_least_counts(a: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """``out[k] = #{a >= grid[k]}`` for sorted ``grid``."""
    below = np.searchsorted(np.sort(a), grid, side="left")
    return len(a) - below


def _pair_counts(
    a: np.ndarray, b: np.ndarray, grid_a: np.ndarray, grid_b: np.ndarray
) -> np.ndarray:
    """``out[k, l] = #{a >= grid_a[k] and b >= grid_b[l]}`` (one bincount + reverse cumsums)."""
    ia = np.searchsorted(grid_a, a, side="right")  # number of grid points <= a
    ib = np.searchsorted(grid_b, b, side="right")
    ka, kb = len(grid_a) + 1, len(grid_b) + 1
    h = np.bincount(ia * kb + ib, minlength=ka * kb).reshape(ka, kb)
    tail = h[::-1, ::-1].cumsum(0).cumsum(1)[::-1, ::-1]
    return tail[1:, 1:]  # a >= grid_a[k]  <=>  ia >= k + 1


def _orthant_counts(a: np.ndarray, grids: list[np.ndarray]) -> np.ndarray:
    """``out[k1, ..., km] = #{rows r : a[r, j] >= grids[j][kj] for every j}`` (the
    ``m``-dimensional :func:`_pair_counts`: one bincount over the grid cells, then reverse
    cumulative sums along every axis)."""
    shape = tuple(len(g) + 1 for g in grids)
    flat = np.zeros(a.shape[0], dtype=np.int64)
    for j, g in enumerate(grids):
        flat = flat * shape[j] + np.searchsorted(g, a[:, j], side="right")
    h = np.bincount(flat, minlength=math.prod(shape)).reshape(shape)
    for axis in range(len(grids)):
        h = np.flip(np.flip(h, axis).cumsum(axis), axis)
    return h[tuple(slice(1, None) for _ in grids)]


ORTHANT_CELLS = 20_000
"""Grid cells per orthant event family: ``m`` cells get ``ORTHANT_CELLS ** (1/m)``
thresholds each (4 cells: 11; 6 cells: 5)."""


def select_event(
    x: np.ndarray,
    y: np.ndarray,
    *,
    alpha: float = 1e-3,
    delta: float = 0.0,
    max_cells: int = 4,
    grid_points: int = 40,
) -> Event:
    """The candidate event with the largest approximate lower bound on the log ratio between
    samples ``x`` (from ``M(D)``) and ``y`` (from ``M(D')``): the ``max_cells`` cells whose
    standardized mean moves most, every one-cell threshold and every two-cell quadrant over
    them, both signs, both directions (see the module docstring)."""
    n_x, n_y = x.shape[0], y.shape[0]
    spread = np.sqrt(x.var(axis=0) / n_x + y.var(axis=0) / n_y) + 1e-12
    moved = np.abs(x.mean(axis=0) - y.mean(axis=0)) / spread
    top = [int(c) for c in np.argsort(-moved, kind="stable")[: min(max_cells, x.shape[1])]]
    z = _z(alpha / 2)
    best: tuple[float, Event] | None = None

    def score(kx: np.ndarray, ky: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Approximate bounds for both directions on a grid of counts."""
        lo_x, hi_x = _wilson(kx, n_x, z)
        lo_y, hi_y = _wilson(ky, n_y, z)
        with np.errstate(divide="ignore", invalid="ignore"):
            fwd = np.log(np.maximum(lo_x - delta, 0.0) / hi_y)
            bwd = np.log(np.maximum(lo_y - delta, 0.0) / hi_x)
        return np.nan_to_num(fwd, nan=-np.inf), np.nan_to_num(bwd, nan=-np.inf)

    def consider(
        values: np.ndarray,
        cells: tuple[int, ...],
        signs: tuple[int, ...],
        grids: list[np.ndarray],
        combine: str = "all",
    ) -> None:
        nonlocal best
        kx, ky = values
        for forward, s in zip((True, False), score(kx, ky), strict=True):
            at = np.unravel_index(int(np.argmax(s)), s.shape)
            value = float(s[at])
            if best is None or value > best[0]:
                thresholds = tuple(float(g[i]) for g, i in zip(grids, at, strict=True))
                best = (value, Event(cells, signs, thresholds, forward, combine))

    for sign in (1, -1):
        for c in top:
            grid = _grid(sign * np.concatenate([x[:, c], y[:, c]]), grid_points)
            counts = np.stack(
                [_at_least_counts(sign * x[:, c], grid), _at_least_counts(sign * y[:, c], grid)]
            )
            consider(counts, (c,), (sign,), [grid])
    for i_pos, i in enumerate(top):
        for j in top[i_pos + 1 :]:
            for si in (1, -1):
                for sj in (1, -1):
                    gi = _grid(si * np.concatenate([x[:, i], y[:, i]]), grid_points)
                    gj = _grid(sj * np.concatenate([x[:, j], y[:, j]]), grid_points)
                    counts = np.stack(
                        [
                            _pair_counts(si * x[:, i], sj * x[:, j], gi, gj),
                            _pair_counts(si * y[:, i], sj * y[:, j], gi, gj),
                        ]
                    )
                    consider(counts, (i, j), (si, sj), [gi, gj])
    # orthant events over the k most-moved cells (k = 3..max_cells), each cell signed by the
    # direction its mean moves and its opposite: under substitution a marginals release moves
    # two cells per marginal, and Laplace/geometric tail ratios multiply across cells, so an
    # orthant through all of them shows the whole loss where a quadrant shows two cells' worth
    direction = np.where(x.mean(axis=0) >= y.mean(axis=0), 1, -1)
    for k in range(3, len(top) + 1):
        cells = tuple(top[:k])
        points = max(2, int(ORTHANT_CELLS ** (1 / k)))
        for orient in (1, -1):
            signs = tuple(orient * int(direction[c]) for c in cells)
            w = np.asarray(signs, dtype=np.float64)
            sx, sy = x[:, list(cells)] * w, y[:, list(cells)] * w
            grids = [_grid(np.concatenate([sx[:, j], sy[:, j]]), points) for j in range(k)]
            counts = np.stack([_orthant_counts(sx, grids), _orthant_counts(sy, grids)])
            consider(counts, cells, signs, grids)
    # half-plane events: the signed sum over the k most-moved cells (k = 2..max_cells), each
    # cell signed by the direction its mean moves (from the selection part only)
    for k in range(2, len(top) + 1):
        cells = tuple(top[:k])
        signs = tuple(int(direction[c]) for c in cells)
        w = np.asarray(signs, dtype=np.float64)
        sx, sy = x[:, list(cells)] @ w, y[:, list(cells)] @ w
        for sign in (1, -1):
            grid = _grid(sign * np.concatenate([sx, sy]), grid_points)
            counts = np.stack(
                [_at_least_counts(sign * sx, grid), _at_least_counts(sign * sy, grid)]
            )
            consider(counts, cells, tuple(sign * v for v in signs), [grid], "sum")
    assert best is not None
    return best[1]


@dataclass(frozen=True)
class EpsilonBound:
    """What the tester found: the event chosen on the selection part, its counts on the test
    part (``hits_d`` of ``n_d`` samples of ``M(D)``, ``hits_d2`` of ``n_d2`` of ``M(D')``),
    the Clopper-Pearson bounds and ``lower_bound = max(0, ln((p_lo - δ) / q_hi))``, valid with
    probability ``1 - alpha``; ``point`` is the plain ratio estimate ``ln(p̂ / q̂)``."""

    lower_bound: float
    point: float
    event: Event
    hits_d: int
    n_d: int
    hits_d2: int
    n_d2: int
    p_lower: float
    q_upper: float
    alpha: float
    delta: float


def epsilon_lower_bound(
    x: np.ndarray,
    y: np.ndarray,
    *,
    alpha: float = 1e-3,
    delta: float = 0.0,
    max_cells: int = 4,
    grid_points: int = 40,
    selection: float = 0.2,
) -> EpsilonBound:
    """A ``1 - alpha`` statistical lower bound on the epsilon of a mechanism, from ``x``:
    samples of ``M(D)`` and ``y``: samples of ``M(D')`` (rows = runs, columns = output
    coordinates), ``D, D'`` neighbours.

    The first ``selection`` fraction of each side's rows selects the event
    (:func:`select_event`), the rest measures it with exact Clopper-Pearson bounds at
    ``alpha / 2`` each (module docstring). Works on any vector output, not only histograms.

    >>> import numpy as np
    >>> x = np.zeros((200, 1)); y = np.zeros((200, 1))  # a constant mechanism
    >>> epsilon_lower_bound(x, y).lower_bound
    0.0
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    if y.ndim == 1:
        y = y[:, None]
    if x.ndim != 2 or y.ndim != 2 or x.shape[1] != y.shape[1]:
        raise ParameterError(
            f"samples must be (runs, coordinates) alike, got {x.shape} and {y.shape}"
        )
    if min(x.shape[0], y.shape[0]) < 4:
        raise ParameterError("need at least 4 samples per side (two halves of two)")
    if not 0 < alpha < 1:
        raise ParameterError(f"alpha must be in (0, 1), got {alpha}")
    if not 0 <= delta < 1:
        raise ParameterError(f"delta must be in [0, 1), got {delta}")
    if not 0 < selection < 1:
        raise ParameterError(f"selection must be in (0, 1), got {selection}")
    hx, hy = int(x.shape[0] * selection), int(y.shape[0] * selection)
    if min(hx, hy, x.shape[0] - hx, y.shape[0] - hy) < 2:
        raise ParameterError("too few samples for a selection part and a test part")
    event = select_event(
        x[:hx], y[:hy], alpha=alpha, delta=delta, max_cells=max_cells, grid_points=grid_points
    )
    test_x, test_y = x[hx:], y[hy:]
    num, den = (test_x, test_y) if event.forward else (test_y, test_x)
    k_num, k_den = int(event.occurs(num).sum()), int(event.occurs(den).sum())
    p_lo, _ = clopper_pearson(k_num, num.shape[0], alpha / 2)
    _, q_hi = clopper_pearson(k_den, den.shape[0], alpha / 2)
    bound = math.log((p_lo - delta) / q_hi) if p_lo - delta > 0 else 0.0
    p_hat, q_hat = k_num / num.shape[0], k_den / den.shape[0]
    point = 0.0 if p_hat == 0 else math.inf if q_hat == 0 else math.log(p_hat / q_hat)
    k_d, k_d2 = (k_num, k_den) if event.forward else (k_den, k_num)
    return EpsilonBound(
        max(0.0, bound),
        point,
        event,
        k_d,
        test_x.shape[0],
        k_d2,
        test_y.shape[0],
        p_lo,
        q_hi,
        alpha,
        delta,
    )


# -- neighbouring tables -----------------------------------------------------------------------
def neighbouring_tables(
    df: pd.DataFrame,
    schema: Schema,
    row: int,
    changes: Mapping[str, object] | None = None,
    neighbours: Neighbours | str = Neighbours.SUBSTITUTION,
) -> tuple[Table, Table]:
    """``(D, D')`` encoded with ``schema``: under substitution ``D'`` is ``df`` with row
    ``row`` (a position) given the values in ``changes``; under add/remove ``D'`` is ``df``
    without that row (``changes`` must then be empty). Spec 2.9, AMB-6."""
    nb = parse_neighbours(neighbours)
    if not 0 <= row < len(df):
        raise ParameterError(f"row {row} is not a row position of the table (0..{len(df) - 1})")
    changed = df.reset_index(drop=True).copy()
    if nb == Neighbours.SUBSTITUTION:
        if not changes:
            raise ParameterError("a substitution neighbour needs changes={column: new value}")
        for name, value in changes.items():
            if name not in changed.columns:
                raise ParameterError(f"changes: no column {name!r} in the table")
            changed[name] = changed[name].astype(object)
            changed.at[row, name] = value
    else:
        if changes:
            raise ParameterError("an add/remove neighbour removes the row: give no changes")
        changed = changed.drop(index=row).reset_index(drop=True)
    return Table.encode(df, schema), Table.encode(changed, schema)


def _check_neighbours(d: Table, d2: Table, nb: Neighbours) -> None:
    """Refuse a pair that are not neighbours under ``nb`` (multisets of decoded rows)."""
    a = d.to_frame().astype(str)
    b = d2.to_frame().astype(str)
    if list(a.columns) != list(b.columns):
        raise ParameterError("the two tables have different columns")
    key_a = pd.Series(list(map(tuple, a.to_numpy()))).value_counts()
    key_b = pd.Series(list(map(tuple, b.to_numpy()))).value_counts()
    diff = key_a.sub(key_b, fill_value=0)
    only_a, only_b = int(diff[diff > 0].sum()), int(-diff[diff < 0].sum())
    if nb == Neighbours.SUBSTITUTION:
        ok = d.n == d2.n and only_a <= 1 and only_b <= 1
    else:
        ok = abs(d.n - d2.n) == 1 and only_a + only_b == 1
    if not ok:
        raise ParameterError(
            f"the tables are not neighbours under {nb.value} ({d.n} and {d2.n} rows, "
            f"{only_a} and {only_b} rows differ)"
        )


# -- the pipeline, sampled ---------------------------------------------------------------------
def _memo(measurement: MeasurementFactory) -> MeasurementFactory:
    """``measurement`` remembering its results by argument: one audit builds the same
    measurements for ``D`` and ``D'`` (the Gaussian's bisection on OpenDP's map takes about
    0.2 s a build). An OpenDP measurement draws afresh on every call, so reusing one is
    reusing the mechanism, not its noise."""
    built: dict[tuple[Any, ...], tuple[Any, NoiseSpec]] = {}

    def factory(
        cells: int, epsilon: float, mechanism: Mechanism, neighbours: Neighbours, delta: float
    ) -> tuple[Any, NoiseSpec]:
        key = (cells, epsilon, mechanism, neighbours, delta)
        if key not in built:
            built[key] = measurement(cells, epsilon, mechanism, neighbours, delta)
        return built[key]

    return factory


def _same_domain(a: CellDomain, b: CellDomain) -> bool:
    return (
        a.names == b.names
        and a.levels == b.levels
        and all(np.array_equal(x, y) for x, y in zip(a.labels, b.labels, strict=True))
    )


def sample_histograms(
    table: Table,
    epsilon: float,
    samples: int,
    *,
    levels: Mapping[str, int] | str | None = None,
    with_sa: bool = False,
    mechanism: Mechanism | str = Mechanism.GEOMETRIC,
    neighbours: Neighbours | str = Neighbours.SUBSTITUTION,
    measurement: MeasurementFactory = count_measurement,
    delta: float = 0.0,
) -> tuple[np.ndarray, NoiseSpec, CellDomain]:
    """``samples`` published count vectors of ``table`` (int64, ``(samples, cells)``), as
    :func:`~kerckhoffs.dp.counts.dp_histogram` publishes them: the public cell domain, the true
    counts (one bincount), OpenDP's noise, clamp and round. The noise comes from one
    measurement over ``cells * batch`` coordinates (``batch`` histograms per OpenDP call),
    whose scale must equal the release's own ``cells``-long measurement; returns the
    release's :class:`NoiseSpec` (its ``privacy_map`` is the claimed epsilon) and the domain.
    """
    if samples < 1:
        raise ParameterError(f"samples must be at least 1, got {samples}")
    mech, nb = parse_mechanism(mechanism), parse_neighbours(neighbours)
    domain, key = cell_domain(table, levels, with_sa=with_sa)
    out, spec = _sample_counts(
        true_counts(key, domain.size), epsilon, samples, mech, nb, delta, measurement
    )
    return out, spec, domain


def _sample_counts(
    counts: np.ndarray,
    epsilon: float,
    samples: int,
    mech: Mechanism,
    nb: Neighbours,
    delta: float,
    measurement: MeasurementFactory,
) -> tuple[np.ndarray, NoiseSpec]:
    """``samples`` noisy, clamped and rounded copies of the count vector ``counts``, drawn in
    batches of ``batch`` vectors per OpenDP call; the batched measurement must have the
    release's own scale (for the Gaussian too: its scale depends on ``Δ``, ``ε``, ``δ`` only,
    not on the vector's length)."""
    cells = len(counts)
    _, spec = measurement(cells, epsilon, mech, nb, delta)
    out = np.empty((samples, cells), dtype=np.int64)
    per_call = max(1, min(samples, BATCH_ELEMENTS // cells))
    done = 0
    while done < samples:
        batch = min(per_call, samples - done)
        meas, big = measurement(cells * batch, epsilon, mech, nb, delta)
        if big.scale != spec.scale or big.mechanism != spec.mechanism:
            raise ParameterError(  # pragma: no cover (scale depends on Δ, ε and δ only)
                f"batched measurement scale {big.scale} differs from the release's {spec.scale}"
            )
        noisy = post_process(add_noise(np.tile(counts, batch), meas, big))
        out[done : done + batch] = noisy.reshape(batch, cells)
        done += batch
    return out, spec


def sample_releases(
    table: Table,
    epsilon: float,
    samples: int,
    *,
    levels: Mapping[str, int] | str | None = None,
    with_sa: bool = False,
    mechanism: Mechanism | str = Mechanism.GEOMETRIC,
    neighbours: Neighbours | str = Neighbours.SUBSTITUTION,
    delta: float = 0.0,
) -> tuple[np.ndarray, NoiseSpec]:
    """``samples`` count vectors from :func:`~kerckhoffs.dp.counts.dp_histogram` itself, one
    release per sample (about 4 ms each: for slow tests that check the batched sampler draws
    what the release publishes)."""
    rows = []
    spec = None
    for _ in range(samples):
        r = dp_histogram(
            table,
            epsilon,
            levels=levels,
            with_sa=with_sa,
            mechanism=mechanism,
            neighbours=neighbours,
            delta=delta,
        )
        rows.append(r.counts["count"].to_numpy(dtype=np.int64))
        spec = r.noise
    if spec is None:
        raise ParameterError(f"samples must be at least 1, got {samples}")
    return np.stack(rows), spec


@dataclass(frozen=True)
class HistogramAudit:
    """One tester run on a DP histogram: the claimed epsilon (OpenDP's privacy map at the
    release's sensitivity), the bound found, and whether it stays within the claim."""

    claimed_epsilon: float
    claimed_delta: float
    bound: EpsilonBound
    mechanism: Mechanism
    neighbours: Neighbours
    samples: int
    cell_labels: list[str]
    what: str = "dp-histogram"
    """The pipeline audited: ``dp-histogram``, ``dp-marginals`` or ``level selection``
    (``levels=auto``'s noisy max; its coordinates are the candidates, one-hot)."""

    @property
    def lower_bound(self) -> float:
        """The ``1 - alpha`` lower bound on the true epsilon."""
        return self.bound.lower_bound

    @property
    def violated(self) -> bool:
        """True if the bound exceeds the claim: the release is not as private as it says
        (false alarm at most ``alpha`` for a correct mechanism)."""
        return self.bound.lower_bound > self.claimed_epsilon

    def summary(self) -> str:
        """One line for reports."""
        b = self.bound
        verdict = "VIOLATION" if self.violated else "ok"
        return (
            f"{self.what} {self.mechanism.value}/{self.neighbours.value}: claimed epsilon "
            f"{self.claimed_epsilon:g} (delta {self.claimed_delta:g}), lower bound "
            f"{b.lower_bound:.3f} (point {b.point:.3f}, "
            f"alpha {b.alpha:g}, {self.samples} samples per side) on "
            f"{b.event.describe(self.cell_labels)} [{'D/D′' if b.event.forward else 'D′/D'}]: "
            f"{verdict}"
        )


def audit_histogram(
    table: Table,
    neighbour: Table,
    epsilon: float,
    *,
    levels: Mapping[str, int] | str | None = None,
    with_sa: bool = False,
    mechanism: Mechanism | str = Mechanism.GEOMETRIC,
    neighbours: Neighbours | str = Neighbours.SUBSTITUTION,
    samples: int = 4000,
    alpha: float = 1e-3,
    measurement: MeasurementFactory = count_measurement,
    delta: float = 0.0,
) -> HistogramAudit:
    """Run the DP histogram pipeline ``samples`` times on ``table`` and on ``neighbour``
    (neighbours under ``neighbours``, checked) and bound its epsilon from below
    (:func:`epsilon_lower_bound`). ``measurement`` replaces the noise factory (tests pass a
    broken one). The domain must be the same public domain for both tables. ``delta`` is the
    Gaussian's (``mechanism="gaussian"``: the claim is ``(ε, δ)`` and the bound subtracts
    ``δ``, spec 2.9 Def. 11).

    A correct release gives ``violated == False`` except with probability ``alpha``.
    """
    nb = parse_neighbours(neighbours)
    _check_neighbours(table, neighbour, nb)
    kw: dict[str, Any] = dict(
        levels=levels,
        with_sa=with_sa,
        mechanism=mechanism,
        neighbours=nb,
        measurement=_memo(measurement),
        delta=delta,
    )
    x, spec, dom = sample_histograms(table, epsilon, samples, **kw)
    y, spec2, dom2 = sample_histograms(neighbour, epsilon, samples, **kw)
    if not _same_domain(dom, dom2) or spec2.scale != spec.scale:
        raise ParameterError("the neighbouring tables have different cell domains")
    frame = dom.frame()
    labels = ["|".join(map(str, r)) for r in frame.itertuples(index=False)]
    bound = epsilon_lower_bound(x, y, alpha=alpha, delta=spec.delta)
    return HistogramAudit(spec.privacy_map, spec.delta, bound, spec.mechanism, nb, samples, labels)


# -- dp-marginals -------------------------------------------------------------------------------
def sample_marginals(
    table: Table,
    epsilon: float,
    samples: int,
    marginals: str | Sequence[Sequence[str]],
    *,
    levels: Mapping[str, int] | str | None = None,
    weights: Sequence[float] | str | None = None,
    mechanism: Mechanism | str = Mechanism.GEOMETRIC,
    neighbours: Neighbours | str = Neighbours.SUBSTITUTION,
    delta: float = 0.0,
    measurement: MeasurementFactory = count_measurement,
) -> tuple[np.ndarray, list[NoiseSpec], list[str]]:
    """``samples`` published count vectors of :func:`~kerckhoffs.dp.marginals.dp_marginals`
    (the marginals stacked in the release's order, ``(samples, total cells)``), the
    :class:`NoiseSpec` of each marginal's measurement and a label per column
    (``sex+zip:M|10*``).

    The same pipeline as the release: each marginal's public domain (its own attributes at
    ``levels``, every other QI at its root), one bincount, the budget split equally or by
    ``weights`` (a Gaussian's delta too), one OpenDP measurement per marginal at scale
    ``Δ/ε_j`` (``measurement`` replaces the factory: tests pass sensitivity 1 per marginal),
    clamp and round; batched as :func:`sample_histograms`. The release's common-total
    post-processing reads only the noisy counts, so it cannot raise the loss and is left
    out. The claim is the sum of the marginals' maps (basic composition, spec 2.11).
    """
    if samples < 1:
        raise ParameterError(f"samples must be at least 1, got {samples}")
    eps, dlt = check_budget(epsilon, delta)
    mech, nb = parse_mechanism(mechanism), parse_neighbours(neighbours)
    sets = parse_marginals(marginals)
    lv = parse_levels(levels)
    known = [*(c.name for c in table.qi_columns), table.sa_name]
    for one in sets:
        for a in one:
            if a not in known:
                raise ParameterError(f"marginals: no attribute {a!r} (have {known})")
    shares = split_budget(eps, len(sets), weights)
    blocks, specs, labels = [], [], []
    for one, share in zip(sets, shares, strict=True):
        domain, key = marginal_domain(table, one, lv)
        block, spec = _sample_counts(
            true_counts(key, domain.size), share, samples, mech, nb, dlt * share / eps, measurement
        )
        blocks.append(block)
        specs.append(spec)
        frame = domain.frame()[list(one)] if one else domain.frame()
        name = "+".join(one)
        labels += [f"{name}:" + "|".join(map(str, r)) for r in frame.itertuples(index=False)]
    return np.concatenate(blocks, axis=1), specs, labels


def audit_marginals(
    table: Table,
    neighbour: Table,
    epsilon: float,
    marginals: str | Sequence[Sequence[str]],
    *,
    levels: Mapping[str, int] | str | None = None,
    weights: Sequence[float] | str | None = None,
    mechanism: Mechanism | str = Mechanism.GEOMETRIC,
    neighbours: Neighbours | str = Neighbours.SUBSTITUTION,
    delta: float = 0.0,
    samples: int = 4000,
    alpha: float = 1e-3,
    measurement: MeasurementFactory = count_measurement,
) -> HistogramAudit:
    """Bound the epsilon of a ``dp-marginals`` release from below on neighbouring tables
    (:func:`sample_marginals`, :func:`epsilon_lower_bound`).

    A substitution moves two cells in EVERY marginal (one down, one up): ``2q`` cells for
    ``q`` marginals, and the loss is the sum over marginals. So the event search looks at
    the ``2q`` most-moved cells (at least 4) and includes the half-plane events ``sum of the
    signed changed cells >= t`` (:class:`Event`, ``combine="sum"``), which see all marginals
    at once; a quadrant sees only two cells.
    """
    nb = parse_neighbours(neighbours)
    _check_neighbours(table, neighbour, nb)
    kw: dict[str, Any] = dict(
        levels=levels,
        weights=weights,
        mechanism=mechanism,
        neighbours=nb,
        delta=delta,
        measurement=_memo(measurement),
    )
    x, specs, labels = sample_marginals(table, epsilon, samples, marginals, **kw)
    y, specs2, labels2 = sample_marginals(neighbour, epsilon, samples, marginals, **kw)
    if labels != labels2 or [s.scale for s in specs] != [s.scale for s in specs2]:
        raise ParameterError("the neighbouring tables have different cell domains")
    claimed = math.fsum(s.privacy_map for s in specs)
    claimed_delta = math.fsum(s.delta for s in specs)
    bound = epsilon_lower_bound(
        x, y, alpha=alpha, delta=claimed_delta, max_cells=max(4, 2 * len(specs))
    )
    return HistogramAudit(
        claimed, claimed_delta, bound, specs[0].mechanism, nb, samples, labels, "dp-marginals"
    )


# -- levels=auto: the private choice of levels ---------------------------------------------------
CHOICE_BATCH = 2000
"""Noisy-max draws per OpenDP call (a composition of that many copies of the measurement)."""


@dataclass(frozen=True)
class LevelChoices:
    """Samples of ``levels=auto``'s choice: ``choices[r, j] = 1`` if run ``r`` chose
    ``candidates[j]`` (one-hot, so the event ``X_j >= 1`` is "level vector j chosen"), the
    selection's own epsilon and OpenDP's map for it (the claim)."""

    choices: np.ndarray
    candidates: list[dict[str, int]]
    epsilon: float
    privacy_map: float
    scale: float


def sample_level_choices(
    table: Table,
    epsilon: float,
    samples: int,
    *,
    levels: str = "auto",
    selection: float = 0.1,
    with_sa: bool = False,
    mechanism: Mechanism | str = Mechanism.GEOMETRIC,
    neighbours: Neighbours | str = Neighbours.SUBSTITUTION,
    delta: float = 0.0,
    max_cells: int = MAX_CELLS,
    measurement: SelectionFactory = noisy_max_measurement,
) -> LevelChoices:
    """``samples`` choices of level vector as ``dp_histogram(table, epsilon, levels="auto",
    selection=...)`` makes them (:func:`kerckhoffs.dp.select.choose_levels`): the selection
    budget ``selection * epsilon``, the threshold three times the count noise's scale at the
    rest of the budget, the candidates from the schema, one utility per candidate (one
    bincount each, computed once: the scores depend on the table only), then OpenDP's noisy
    max drawn ``samples`` times: OpenDP's ``make_composition`` of ``CHOICE_BATCH`` copies of
    the one measurement, called once on the scores, returns that many independent choices
    (about 0.03 ms each instead of 0.15 ms a call). ``measurement`` replaces
    :func:`~kerckhoffs.dp.select.noisy_max_measurement` (tests pass a broken one).
    """
    import opendp.prelude as dp

    if samples < 1:
        raise ParameterError(f"samples must be at least 1, got {samples}")
    dp.enable_features("contrib")
    head, _, rest = str(levels).strip().partition(",")
    if head.strip().lower() != "auto":
        raise ParameterError(f"levels must be auto or auto,NAME:LEVEL,..., got {levels!r}")
    if not 0 < float(selection) < 1:
        raise ParameterError(f"selection must be a fraction in (0, 1), got {selection!r}")
    pinned = parse_levels(rest)
    eps_total, _ = check_budget(epsilon, delta)
    eps_sel = eps_total * float(selection)
    eps_counts = (eps_total - eps_sel) * (1 - 1e-12)  # as dp_histogram
    _, probe = count_measurement(1, eps_counts, mechanism, neighbours, delta)
    tau = 3 * probe.scale
    sa_level = pinned.pop(table.sa_name, 0)
    cands = candidate_levels(table, max_cells, pinned)
    extra = {table.sa_name: sa_level} if with_sa else {}
    scores = []
    for lv in cands:  # a loop over candidates, one bincount each
        d, key = cell_domain(table, lv | extra, with_sa=with_sa, max_cells=max_cells)
        scores.append(utility(true_counts(key, d.size), tau))
    meas, scale, loss = measurement(len(cands), eps_sel)
    picked = np.empty(samples, dtype=np.int64)
    done = 0
    while done < samples:  # the same measurement, ``batch`` times in one OpenDP call
        batch = min(CHOICE_BATCH, samples - done)
        picked[done : done + batch] = np.asarray(dp.c.make_composition([meas] * batch)(scores))
        done += batch
    onehot = np.zeros((samples, len(cands)), dtype=np.int64)
    onehot[np.arange(samples), picked] = 1
    return LevelChoices(onehot, [c | extra for c in cands], eps_sel, loss, scale)


def audit_level_selection(
    table: Table,
    neighbour: Table,
    epsilon: float,
    *,
    levels: str = "auto",
    selection: float = 0.1,
    with_sa: bool = False,
    mechanism: Mechanism | str = Mechanism.GEOMETRIC,
    neighbours: Neighbours | str = Neighbours.SUBSTITUTION,
    delta: float = 0.0,
    samples: int = 2000,
    alpha: float = 1e-3,
    measurement: SelectionFactory = noisy_max_measurement,
) -> HistogramAudit:
    """Bound the epsilon of ``levels=auto``'s level selection from below, as a mechanism of
    its own (its output is a choice; the counts drawn after it are the histogram that
    :func:`audit_histogram` tests, and the two compose: spec 2.11). The events are "level
    vector ``j`` chosen" (one-hot coordinates, threshold 1) and unions of two
    (``combine="sum"`` over two coordinates). The claim is OpenDP's map for the selection
    budget ``selection * epsilon``."""
    nb = parse_neighbours(neighbours)
    _check_neighbours(table, neighbour, nb)
    kw: dict[str, Any] = dict(
        levels=levels,
        selection=selection,
        with_sa=with_sa,
        mechanism=mechanism,
        neighbours=nb,
        delta=delta,
        measurement=measurement,
    )
    a = sample_level_choices(table, epsilon, samples, **kw)
    b = sample_level_choices(neighbour, epsilon, samples, **kw)
    if a.candidates != b.candidates or a.scale != b.scale:  # pragma: no cover (schema only)
        raise ParameterError("the neighbouring tables have different candidate level vectors")
    labels = [",".join(f"{k}:{v}" for k, v in c.items()) for c in a.candidates]
    bound = epsilon_lower_bound(a.choices, b.choices, alpha=alpha)
    return HistogramAudit(
        a.privacy_map, 0.0, bound, parse_mechanism(mechanism), nb, samples, labels,
        "level selection",
    )  # fmt: skip


# -- dp-rr: randomized response ------------------------------------------------------------------
ThresholdFactory = Callable[[float, int], tuple[int, float, float]]
"""``(epsilon, k) -> (T, keep, privacy_map)``, the shape of
:func:`kerckhoffs.dp.randomized_response.replace_threshold` (the default for
:func:`sample_rr`): replace iff a uniform 64-bit integer is ``< T``; the third element is the
loss the release records (the claim). Tests pass a broken one."""

RR_OUTPUTS = ("response", "counts")
"""What :func:`sample_rr` returns per run: the changed record's response (one-hot over the
cells) or the published count table (every cell)."""


@dataclass(frozen=True)
class RRSamples:
    """Samples of the ``dp-rr`` pipeline: ``values[r]`` is run ``r``'s output vector (the
    changed record's response one-hot, or the whole count table), ``labels`` one per column,
    ``claimed`` the loss the release records (OpenDP's map at the realized keep probability),
    ``keep`` that probability, ``k`` the number of categories one response chooses from."""

    values: np.ndarray
    labels: list[str]
    claimed: float
    keep: float
    k: int


def _changed_row(key: np.ndarray, key2: np.ndarray, radix: int, mode: str) -> int:
    """The one row position whose cell differs between the aligned keys of ``D`` and ``D'``;
    under ``perturb=sa`` its QI cell must be the same (only the SA value changes)."""
    if key.shape != key2.shape:
        raise ParameterError("dp-rr audits substitution neighbours: the tables differ in size")
    rows = np.flatnonzero(key != key2)
    if rows.size != 1:
        raise ParameterError(
            f"the tables must differ in exactly one aligned row's cell, got {rows.size} "
            "(build them with neighbouring_tables)"
        )
    row = int(rows[0])
    if mode == "sa" and key[row] // radix != key2[row] // radix:
        raise ParameterError(
            "perturb=sa protects a change of the SA value only: the changed record's QI cell "
            "must stay the same"
        )
    return row


def sample_rr(
    table: Table,
    epsilon: float,
    samples: int,
    *,
    row: int,
    levels: Mapping[str, int] | str | None = None,
    perturb: str = "sa",
    output: str = "response",
    threshold: ThresholdFactory = replace_threshold,
) -> RRSamples:
    """``samples`` runs of the :func:`~kerckhoffs.dp.randomized_response.dp_rr` pipeline on
    ``table``: the public cell domain (QI cells x SA values), the threshold ``T`` for ``k``
    categories (``k`` SA values under ``perturb=sa``, every cell under ``perturb=cell``), then
    :func:`~kerckhoffs.dp.randomized_response.randomize` with OpenDP's bits on the codes
    tiled ``samples`` times (``samples x rows`` responses in one call: the rows of one run
    are independent, as are the runs). ``output="response"`` gives the one-hot response of
    record ``row`` (the natural event of a substitution of that record: "its response is
    ``v``", log ratio exactly ``ln(keep (k-1)/(1-keep))``); ``"counts"`` the published count
    table of every run (one bincount over ``run x cells``). ``threshold`` replaces
    :func:`~kerckhoffs.dp.randomized_response.replace_threshold` (tests pass a broken one).
    """
    if samples < 1:
        raise ParameterError(f"samples must be at least 1, got {samples}")
    mode = str(perturb).strip().lower()
    if mode not in PERTURB:
        raise ParameterError(f"perturb must be sa or cell, got {perturb!r}")
    if output not in RR_OUTPUTS:
        raise ParameterError(f"output must be response or counts, got {output!r}")
    eps, _ = check_budget(epsilon)
    domain, key = cell_domain(table, levels, with_sa=True)
    if not 0 <= row < key.size:
        raise ParameterError(f"row {row} is not a row position of the table (0..{key.size - 1})")
    k = domain.radix[-1] if mode == "sa" else domain.size
    if k < 2:
        raise ParameterError(
            f"randomized response needs at least 2 values, the {mode} domain has 1"
        )
    t, keep, claimed = threshold(eps, k)
    size = domain.size
    n = key.size
    per_call = max(1, min(samples, BATCH_ELEMENTS // max(1, n)))
    values = np.zeros((samples, size), dtype=np.int64)
    done = 0
    while done < samples:  # a loop over batches of runs, each one OpenDP-bits call
        batch = min(per_call, samples - done)
        tiled = np.tile(key, batch)
        if mode == "sa":
            response = (tiled // k) * k + randomize(tiled % k, k, t)
        else:
            response = randomize(tiled, k, t)
        runs = response.reshape(batch, n)
        if output == "counts":
            flat = np.arange(batch)[:, None] * size + runs
            values[done : done + batch] = np.bincount(flat.ravel(), minlength=batch * size).reshape(
                batch, size
            )
        else:
            values[done + np.arange(batch), runs[:, row]] = 1
        done += batch
    frame = domain.frame()
    labels = ["|".join(map(str, r)) for r in frame.itertuples(index=False)]
    return RRSamples(values, labels, claimed, keep, k)


def audit_rr(
    table: Table,
    neighbour: Table,
    epsilon: float,
    *,
    levels: Mapping[str, int] | str | None = None,
    perturb: str = "sa",
    output: str = "response",
    samples: int = 4000,
    alpha: float = 1e-3,
    threshold: ThresholdFactory = replace_threshold,
) -> HistogramAudit:
    """Bound the epsilon of a ``dp-rr`` release from below on substitution neighbours
    ``table, neighbour`` (row-aligned, as :func:`neighbouring_tables` builds them; one
    record's SA value changed under ``perturb=sa``, its cell under ``perturb=cell``).

    Only the changed record's response differs in distribution between ``D`` and ``D'`` (the
    other records' responses are identically distributed and independent of it), so its
    response is the sharpest output (``output="response"``, the default; the count table,
    ``"counts"``, is a post-processing of all responses and gives a weaker bound). The
    claim is the loss the release records (the third element of ``threshold``'s result).
    """
    _check_neighbours(table, neighbour, Neighbours.SUBSTITUTION)
    mode = str(perturb).strip().lower()
    dom, key = cell_domain(table, levels, with_sa=True)
    dom2, key2 = cell_domain(neighbour, levels, with_sa=True)
    if not _same_domain(dom, dom2):
        raise ParameterError("the neighbouring tables have different cell domains")
    row = _changed_row(key, key2, dom.radix[-1], mode)
    kw: dict[str, Any] = dict(
        row=row, levels=levels, perturb=perturb, output=output, threshold=threshold
    )
    a = sample_rr(table, epsilon, samples, **kw)
    b = sample_rr(neighbour, epsilon, samples, **kw)
    bound = epsilon_lower_bound(a.values, b.values, alpha=alpha)
    return HistogramAudit(
        a.claimed, 0.0, bound, Mechanism.RANDOMIZED_RESPONSE, Neighbours.SUBSTITUTION,
        samples, a.labels, "dp-rr",
    )  # fmt: skip


__all__ = [
    "BATCH_ELEMENTS",
    "CHOICE_BATCH",
    "RR_OUTPUTS",
    "EpsilonBound",
    "Event",
    "HistogramAudit",
    "LevelChoices",
    "MeasurementFactory",
    "RRSamples",
    "SelectionFactory",
    "ThresholdFactory",
    "audit_histogram",
    "audit_level_selection",
    "audit_marginals",
    "audit_rr",
    "binomial_log_pmf",
    "clopper_pearson",
    "epsilon_lower_bound",
    "neighbouring_tables",
    "sample_histograms",
    "sample_level_choices",
    "sample_marginals",
    "sample_releases",
    "sample_rr",
    "select_event",
]
