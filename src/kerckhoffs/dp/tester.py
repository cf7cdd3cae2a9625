"""Stochastic DP tester: a statistical LOWER bound on the epsilon a shipped DP release function
really has (paper 004, Defs. 10 and 11; ``docs/theory/choices.md#opendp``: the noise is OpenDP's,
the counting is ours, and a stochastic tester checks that our sensitivities are right).

Why: OpenDP's privacy map certifies the noise for the sensitivity ``Δ`` *we* tell it. Whether
``Δ`` is right, and whether the counts that reach the noise are the ones the map was computed
for, depends on our code: under substitution neighbours (one person's record changes, ``n``
fixed) one cell goes down by one and another up by one, so ``Δ = 2``; a scale of ``1/ε`` (the
add/remove value) would really give ``2ε``; a count published beside the noisy ones, a domain
read from the data or a row dropped for a missing value would give no epsilon at all.

So the tester runs the SHIPPED function, the one ``kerckhoffs anonymize`` calls
(:func:`anonymizer`, or the library function it wraps: ``dp_histogram``, ``dp_marginals``,
``dp_rr``), once per sample, on a pair of NEIGHBOURING tables ``D, D'``
(:func:`neighbouring_tables`, checked by :func:`check_neighbours` under the notion the
release records), reads what the release publishes (its counts; for ``levels=auto`` the
choice of levels) and looks for an output event ``E`` with ``P(E | D) > e^ε P(E | D') + δ``,
the violation Def. 10/11 forbids. Nothing of the pipeline is re-implemented here: a patch of
the release function that publishes true counts, halves the noise or uses the wrong
sensitivity changes what is sampled, and is caught. Each call costs about 0.5 ms on a small
table (the OpenDP measurements and the public cell layout are remembered by the release code
itself: :func:`kerckhoffs.dp.counts.cached_layout`).

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
2. *Test part* (independent of the choice): exact Clopper-Pearson bounds, a lower bound
   ``p_lo`` on ``P(E | D)`` and an upper bound ``q_hi`` on ``P(E | D')``, each at one-sided level
   ``α/2``. The reported bound is ``ln((p_lo - δ) / q_hi)`` (0 if not positive).

If the mechanism is ``(ε, δ)``-DP, the bound exceeds ``ε`` with probability at most ``α`` (the
union of the two intervals' failures; the event was fixed before the test part was read).
So "bound > claimed ε" is a violation found at false-alarm rate ``α``; "bound <= ε" is no
proof of privacy, only the absence of evidence against it.

A choice of levels with DP (``levels=auto``, the default) is audited as the mechanism of its
own it is (the noisy-max rounds and stop of :mod:`kerckhoffs.dp.select`, then counts at
those levels): its published choice (:func:`level_choice`) against the loss the
release records for the choice (:func:`selection_loss`); the counts at a fixed choice are a
``dp_histogram`` audit, and the two compose.
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
from kerckhoffs.dp.counts import COUNT, DPRelease
from kerckhoffs.dp.mechanisms import Mechanism, Neighbours, parse_neighbours
from kerckhoffs.errors import InternalError, ParameterError
from kerckhoffs.models.base import PrivacyModel


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
    if best is None:  # some event is considered whenever there is a cell to test
        raise InternalError("the tester's event search considered no event")
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
    ``row`` (a position) given the values in ``changes``; under sensitive-value the same, and
    ``changes`` may name the sensitive column only; under add/remove ``D'`` is ``df`` without
    that row (``changes`` must then be empty)."""
    nb = parse_neighbours(neighbours)
    if not 0 <= row < len(df):
        raise ParameterError(f"row {row} is not a row position of the table (0..{len(df) - 1})")
    changed = df.reset_index(drop=True).copy()
    if nb == Neighbours.ADD_REMOVE:
        if changes:
            raise ParameterError("an add/remove neighbour removes the row: give no changes")
        changed = changed.drop(index=row).reset_index(drop=True)
        return Table.encode(df, schema), Table.encode(changed, schema)
    if not changes:
        raise ParameterError(f"a {nb.value} neighbour needs changes={{column: new value}}")
    sa = schema.sensitive.name
    if nb == Neighbours.SENSITIVE_VALUE and set(changes) != {sa}:
        raise ParameterError(f"a sensitive-value neighbour changes column {sa!r} only")
    for name, value in changes.items():
        if name not in changed.columns:
            raise ParameterError(f"changes: no column {name!r} in the table")
        changed[name] = changed[name].astype(object)
        changed.at[row, name] = value
    return Table.encode(df, schema), Table.encode(changed, schema)


def check_neighbours(d: Table, d2: Table, neighbours: Neighbours | str) -> None:
    """Refuse a pair that are not neighbours under ``neighbours`` (multisets of decoded
    rows): substitution, one row changed (``n`` equal); sensitive-value, one row changed in
    its sensitive value only; add/remove, one row more or less."""
    nb = parse_neighbours(neighbours)
    a = d.to_frame().astype(str)
    b = d2.to_frame().astype(str)
    if list(a.columns) != list(b.columns):
        raise ParameterError("the two tables have different columns")
    key_a = pd.Series(list(map(tuple, a.to_numpy()))).value_counts()
    key_b = pd.Series(list(map(tuple, b.to_numpy()))).value_counts()
    diff = key_a.sub(key_b, fill_value=0)
    gone, came = diff[diff > 0], diff[diff < 0]
    only_a, only_b = int(gone.sum()), int(-came.sum())
    if nb == Neighbours.ADD_REMOVE:
        ok = abs(d.n - d2.n) == 1 and only_a + only_b == 1
    else:
        ok = d.n == d2.n and only_a <= 1 and only_b <= 1
        if ok and nb == Neighbours.SENSITIVE_VALUE and only_a == 1:
            sa = list(a.columns).index(d.sa_name)
            x, y = list(gone.index[0]), list(came.index[0])
            ok = x[:sa] + x[sa + 1 :] == y[:sa] + y[sa + 1 :]
    if not ok:
        raise ParameterError(
            f"the tables are not neighbours under {nb.value} ({d.n} and {d2.n} rows, "
            f"{only_a} and {only_b} rows differ"
            + (", beyond the sensitive value" if nb == Neighbours.SENSITIVE_VALUE else "")
            + ")"
        )


# -- the shipped release functions, sampled ----------------------------------------------------
ReleaseFunction = Callable[[Table], DPRelease]
"""One run of a shipped DP release function on a table, e.g.
``lambda t: dp_histogram(t, 1.0, levels="zip:1")`` or
:func:`anonymizer` ``("dp-rr", ["dp=1"])`` (what ``anonymize`` runs)."""
Observe = Callable[[DPRelease], np.ndarray]
"""What the tester reads of one release: a vector of numbers (default: its published
counts, :func:`published_counts`)."""
Claim = Callable[[DPRelease], tuple[float, float]]
"""The ``(epsilon, delta)`` the release claims for what is observed (default: its recorded
privacy loss, :func:`recorded_loss`)."""


def published_counts(release: DPRelease) -> np.ndarray:
    """The release's published count column, cells in domain order (int64)."""
    return release.counts[COUNT].to_numpy(dtype=np.int64)


def recorded_loss(release: DPRelease) -> tuple[float, float]:
    """The ``(epsilon, delta)`` the release records (OpenDP's privacy map)."""
    return release.privacy_loss()


def cell_labels(release: DPRelease) -> list[str]:
    """One label per published cell: its axis labels joined by ``|`` (with the marginal's
    name first in a dp-marginals release)."""
    cols = [c for c in release.counts.columns if c != COUNT]
    return ["|".join(map(str, r)) for r in release.counts[cols].itertuples(index=False)]


def anonymizer(
    algorithm: str, models: Sequence[str | PrivacyModel], **options: Any
) -> ReleaseFunction:
    """The release function ``kerckhoffs anonymize`` runs: the registered ``algorithm`` with
    ``models`` and ``options`` on an encoded table, through
    :func:`kerckhoffs.api.anonymize_table` as the command line calls it (the independent
    check left to the writer, as there). About 0.5 ms more a run than the library function
    it wraps."""
    from kerckhoffs.api import anonymize_table
    from kerckhoffs.models import parse_model

    chosen = [parse_model(m) if isinstance(m, str) else m for m in models]

    def run(table: Table) -> DPRelease:
        release = anonymize_table(table, algorithm, chosen, options=options, verify=False)
        if not isinstance(release, DPRelease):
            raise ParameterError(f"{algorithm} does not make a DP release")
        return release

    return run


def level_choice(candidates: Sequence[Mapping[str, int]]) -> Observe:
    """An :data:`Observe` for levels chosen with DP: the one-hot vector of the level vector
    the release chose among ``candidates`` (every vector it can choose; read from its
    published axes), so the event "candidate ``j`` chosen" is ``X_j >= 1``."""
    keys = [tuple(sorted(c.items())) for c in candidates]

    def observe(release: DPRelease) -> np.ndarray:
        chosen = {a["name"]: int(a["level"]) for a in release.axes if a["role"] == "quasi"}
        out = np.zeros(len(keys), dtype=np.int64)
        out[keys.index(tuple(sorted(chosen.items())))] = 1
        return out

    return observe


def selection_loss(release: DPRelease, part_name: str = "level selection") -> tuple[float, float]:
    """The ``(epsilon, delta)`` a release whose levels were chosen with DP records for its
    choice (the ``level selection`` part: the claim :func:`level_choice` is audited against;
    ``part_name="level selection: stop"`` the stop's alone, for a table whose path is forced)."""
    part = next((p for p in release.noise.parts if p.get("name") == part_name), None)
    if part is None:
        raise ParameterError(f"the release records no {part_name!r} (levels chosen with DP)")
    return float(part["privacy_map"]), float(part["delta"])


@dataclass(frozen=True)
class ReleaseSamples:
    """``samples`` runs of a release function on one table: ``values[r]`` is run ``r``'s
    observed vector, ``labels`` one per column (from the first run), the claim and the
    neighbour notion every run recorded, and the mechanism."""

    values: np.ndarray
    labels: list[str]
    claimed_epsilon: float
    claimed_delta: float
    neighbours: Neighbours
    mechanism: Mechanism


def sample_release(
    release: ReleaseFunction,
    table: Table,
    samples: int,
    *,
    observe: Observe = published_counts,
    claim: Claim = recorded_loss,
    labels: Callable[[DPRelease], list[str]] = cell_labels,
) -> ReleaseSamples:
    """Run ``release(table)`` ``samples`` times (one call per sample: the shipped function
    itself, nothing batched or re-implemented) and stack what ``observe`` reads of each. The
    claim and the neighbour notion must be the same in every run (they are what the release
    says about itself; one that moved with the noise would itself be a leak)."""
    if samples < 1:
        raise ParameterError(f"samples must be at least 1, got {samples}")
    first = release(table)
    claimed, nb, mech = claim(first), first.noise.neighbours, first.noise.mechanism
    rows = [np.asarray(observe(first), dtype=np.int64)]
    for _ in range(samples - 1):
        r = release(table)
        if claim(r) != claimed or r.noise.neighbours != nb:
            raise ParameterError(
                f"the release's recorded claim changed between runs ({claimed} under {nb.value}, "
                f"then {claim(r)} under {r.noise.neighbours.value})"
            )
        rows.append(np.asarray(observe(r), dtype=np.int64))
    if len({row.shape for row in rows}) != 1:
        raise ParameterError("the observed vectors differ in length between runs")
    names = labels(first)
    return ReleaseSamples(np.stack(rows), names, claimed[0], claimed[1], nb, mech)


@dataclass(frozen=True)
class ReleaseAudit:
    """One tester run on a DP release function: the claimed ``(epsilon, delta)`` (what the
    release records for what was observed), the notion it was audited under, the bound found,
    and whether it stays within the claim."""

    claimed_epsilon: float
    claimed_delta: float
    bound: EpsilonBound
    mechanism: Mechanism
    neighbours: Neighbours
    samples: int
    cell_labels: list[str]
    what: str = "release"
    """The function audited, as the caller named it (``dp-histogram``, ``level selection``)."""

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
        verdict = "VIOLATION" if self.violated else "no violation found"
        labels = self.cell_labels if len(self.cell_labels) > max(b.event.cells) else None
        return (
            f"{self.what} {self.mechanism.value}/{self.neighbours.value}: claimed epsilon "
            f"{self.claimed_epsilon:g} (delta {self.claimed_delta:g}), lower bound "
            f"{b.lower_bound:.3f} (point {b.point:.3f}, "
            f"alpha {b.alpha:g}, {self.samples} samples per side) on "
            f"{b.event.describe(labels)} [{'D/D′' if b.event.forward else 'D′/D'}]: "
            f"{verdict}"
        )


def audit_release(
    release: ReleaseFunction,
    table: Table,
    neighbour: Table,
    *,
    samples: int = 2000,
    alpha: float = 1e-3,
    neighbours: Neighbours | str | None = None,
    observe: Observe = published_counts,
    claim: Claim = recorded_loss,
    labels: Callable[[DPRelease], list[str]] = cell_labels,
    max_cells: int = 4,
    what: str | None = None,
) -> ReleaseAudit:
    """Bound from below the epsilon of a shipped DP release function on the neighbouring
    tables ``table, neighbour`` (:func:`sample_release` on each, then
    :func:`epsilon_lower_bound`), against the claim the release records.

    ``neighbours``: the notion the pair is checked against (:func:`check_neighbours`);
    default, the one the release records, so the audit tests the release's own claim.
    Naming a stronger one tests a claim the release does not make (a ``sensitive-value``
    release audited under substitution, say). ``max_cells``: how many of the most-moved
    coordinates the event search combines (a substitution moves two cells per marginal: give
    at least twice the number of marginals). The claim and the labels must be the same on
    both sides.

    A release that meets its claim gives ``violated == False`` except with probability
    ``alpha``; "no violation found" is no proof of privacy, only the absence of evidence
    against it.
    """
    a = sample_release(release, table, samples, observe=observe, claim=claim, labels=labels)
    b = sample_release(release, neighbour, samples, observe=observe, claim=claim, labels=labels)
    if (a.claimed_epsilon, a.claimed_delta, a.neighbours) != (
        b.claimed_epsilon,
        b.claimed_delta,
        b.neighbours,
    ):
        raise ParameterError(
            f"the release claims differ between the neighbours: {a.claimed_epsilon:g} under "
            f"{a.neighbours.value} and {b.claimed_epsilon:g} under {b.neighbours.value}"
        )
    if a.labels != b.labels:
        raise ParameterError("the neighbouring tables give releases of different cells")
    nb = a.neighbours if neighbours is None else parse_neighbours(neighbours)
    check_neighbours(table, neighbour, nb)
    bound = epsilon_lower_bound(
        a.values, b.values, alpha=alpha, delta=a.claimed_delta, max_cells=max_cells
    )
    return ReleaseAudit(
        a.claimed_epsilon,
        a.claimed_delta,
        bound,
        a.mechanism,
        nb,
        samples,
        a.labels,
        what or "release",
    )


__all__ = [
    "Claim",
    "EpsilonBound",
    "Event",
    "Observe",
    "ReleaseAudit",
    "ReleaseFunction",
    "ReleaseSamples",
    "anonymizer",
    "audit_release",
    "binomial_log_pmf",
    "cell_labels",
    "check_neighbours",
    "clopper_pearson",
    "epsilon_lower_bound",
    "level_choice",
    "neighbouring_tables",
    "published_counts",
    "recorded_loss",
    "sample_release",
    "select_event",
    "selection_loss",
]
