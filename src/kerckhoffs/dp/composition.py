"""The arithmetic of a privacy ledger (:mod:`kerckhoffs.dp.ledger`): neighbour notions,
budgets, and what a release costs each person by basic composition and group privacy
(Dwork and Roth 2014, Theorems 2.2 and 3.16), or by zero-concentrated DP (Bun and Steinke,
"Concentrated Differential Privacy: Simplifications, Extensions, and Lower Bounds", TCC 2016:
composition adds rho, Lemma 2.3; a group of ``k`` costs ``k² rho``, Prop. 1.9; pure
``epsilon``-DP is ``epsilon²/2``-zCDP, Prop. 1.4). A rho total becomes ``(epsilon, delta)``
once, by OpenDP's conversion (:func:`zcdp_epsilon`). Totals saturate (never NaN; an overflow
is ``inf``, over any budget) and decisions allow :data:`TOLERANCE` of floating-point slack.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, fields

import numpy as np

from kerckhoffs.dp import opendp_core
from kerckhoffs.dp.loss import Measure
from kerckhoffs.dp.mechanisms import as_float, shown_number
from kerckhoffs.errors import ParameterError
from kerckhoffs.tolerance import TOLERANCE

SUBSTITUTION = "substitution"
ADD_REMOVE = "add-remove"
UNKNOWN = "unknown"
"""The notion of an entry read from a version-1 ledger (not recorded then)."""
NOTIONS = (SUBSTITUTION, ADD_REMOVE)
"""The neighbour notions a ledger accounts for (module docstring)."""


class BudgetExceeded(ParameterError):
    """A release would take someone over their privacy budget; it was not recorded (and the
    command line wrote nothing)."""


# -- neighbour notions ---------------------------------------------------------------------------
def notion_text(value: object) -> str:
    text = str(getattr(value, "value", value)).strip().lower()
    return text.replace("_", "-").replace("/", "-")


def parse_notion(value: object) -> str:
    """``substitution`` or ``add-remove`` from a string or an enum member (``add_remove`` and
    ``add/remove`` accepted); any other notion is a one-line
    :class:`~kerckhoffs.errors.ParameterError`: the ledger cannot account for it."""
    text = notion_text(value)
    if text in NOTIONS:
        return text
    raise ParameterError(
        f"neighbours {getattr(value, 'value', value)!r}: a privacy ledger accounts only for "
        "releases that are DP under substitution or add-remove neighbours (a whole record "
        "changing); a release DP under any other notion bounds less than what one record "
        "reveals"
    )


def steps_per_row(entry_notion: str, ledger_notion: str) -> int:
    """How many of the ledger's neighbouring steps one row of an entry counts for: 1 for the
    same notion, 2 for an add-remove (or unknown) entry on a substitution ledger (a
    substitution is a removal and an addition); a substitution entry on an add-remove ledger
    is refused (module docstring)."""
    if entry_notion == ledger_notion:
        return 1
    if ledger_notion == SUBSTITUTION and entry_notion in (ADD_REMOVE, UNKNOWN):
        return 2
    if ledger_notion == ADD_REMOVE and entry_notion == SUBSTITUTION:
        raise ParameterError(
            "a release DP under substitution neighbours cannot be charged to a ledger whose "
            "budget is under add-remove neighbours (it may publish the number of rows exactly, "
            "which no add-remove guarantee allows); use a substitution ledger or publish under "
            "add-remove (-O neighbours=add-remove)"
        )
    raise ParameterError(
        f"an entry under {entry_notion!r} neighbours cannot be charged to a ledger under "
        f"{ledger_notion!r} neighbours"
    )


# -- budgets -----------------------------------------------------------------------------------
def budget_number(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str | np.number):
        raise ParameterError(f"{what} {value!r}: expected a number")
    try:
        return as_float(value)  # an integer beyond a float is inf, refused as too large
    except ValueError:
        raise ParameterError(f"{what} {shown_number(value)}: not a number in range") from None


def parse_budget(budget: float | str | tuple[float, float]) -> tuple[float, float]:
    """A budget ``(epsilon, delta)`` from ``1``, ``"1"``, ``"1,1e-6"`` or ``(1, 1e-6)``.

    ``delta`` defaults to 0: a pure-DP budget, which any release with ``delta > 0`` exceeds.
    """
    parts: list[object]
    if isinstance(budget, str):
        parts = [p.strip() for p in budget.split(",")]
    elif isinstance(budget, tuple | list):
        parts = list(budget)
    else:
        parts = [budget]
    shown = shown_number(budget)
    if len(parts) not in (1, 2):
        raise ParameterError(f"budget {shown}: expected EPSILON or EPSILON,DELTA")
    try:
        nums = [budget_number(p, "budget") for p in parts]
    except ParameterError:
        raise ParameterError(
            f"budget {shown}: expected EPSILON or EPSILON,DELTA (e.g. 1 or 1,1e-6)"
        ) from None
    eps, delta = nums[0], (nums[1] if len(nums) == 2 else 0.0)
    if eps == math.inf:
        raise ParameterError(
            f"budget {shown}: epsilon is too large (beyond the largest float, about 1.8e308, "
            "it is not a finite number)"
        )
    if not (math.isfinite(eps) and eps > 0):
        raise ParameterError(f"budget {shown}: epsilon must be a positive number")
    if not (math.isfinite(delta) and 0 <= delta < 1):
        raise ParameterError(f"budget {shown}: delta must be in [0, 1)")
    return eps, delta


def check_loss(epsilon: object, delta: object) -> tuple[float, float]:
    eps, d = budget_number(epsilon, "epsilon"), budget_number(delta, "delta")
    if not (math.isfinite(eps) and eps >= 0):
        raise ParameterError(f"epsilon {epsilon!r}: must be a finite number >= 0")
    if not (math.isfinite(d) and 0 <= d < 1):
        raise ParameterError(f"delta {delta!r}: must be in [0, 1)")
    return eps, d


def group_delta_factor(rows: np.ndarray, epsilon: float) -> np.ndarray:
    """``1 + e^eps + ... + e^((k-1) eps)`` for each ``k`` in ``rows`` (0 for ``k = 0``, inf
    where it exceeds a float): the multiplier of delta for a person with ``k`` rows in one
    (eps, delta)-DP release (group privacy over ``k`` steps, Dwork and Roth 2014, Thm 2.2).

    ``(e^(k eps) - 1)/(e^eps - 1)`` where that is a float; beyond, in log space,
    ``(k-1) eps + log(1 - e^(-k eps)) - log(1 - e^(-eps))``, so an epsilon of 710 or more
    (``e^eps`` is no float) gives ``inf``, not an error."""
    k = np.asarray(rows, dtype=np.float64)
    eps = float(epsilon)
    if eps == 0:
        return k.copy()
    out = np.zeros(k.shape)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        direct = (k > 0) & (k * eps <= 700.0)
        out[direct] = np.expm1(k[direct] * eps) / math.expm1(min(eps, 700.0))
        far = (k > 0) & ~direct
        tail = np.log(-np.expm1(-k[far] * eps)) - math.log(-math.expm1(-eps))
        out[far] = np.exp((k[far] - 1) * eps + tail)
    return out


def group_loss(rows: np.ndarray, epsilon: float, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """``(k eps, delta * group_delta_factor(k, eps))`` for each ``k`` in ``rows``, saturating:
    a zero ``delta`` or ``k`` costs exactly 0, an overflow is ``inf``, never NaN."""
    k = np.asarray(rows, dtype=np.float64)
    with np.errstate(over="ignore"):
        eps_out = np.where(k > 0, k * float(epsilon), 0.0)
        d_out = np.zeros(k.shape)
        if delta > 0:
            some = k > 0
            d_out[some] = float(delta) * group_delta_factor(k[some], epsilon)
    return eps_out, d_out


def group_steps(
    rows: np.ndarray, neighbours: str, ledger_neighbours: str, contributions: int = 1
) -> np.ndarray:
    """How many of the ledger's neighbouring steps a person with ``rows[i]`` rows in a
    release is: the release's map covers any change of up to ``contributions`` rows of one
    person, so ``ceil(rows / contributions)`` groups of rows, each
    :func:`steps_per_row` of the ledger's steps (0 rows: 0 steps)."""
    r = np.asarray(rows, dtype=np.int64)
    groups = -(-r // max(int(contributions), 1))
    return groups * steps_per_row(neighbours, ledger_neighbours)


def charge(
    rows: np.ndarray,
    epsilon: float,
    delta: float,
    neighbours: str,
    ledger_neighbours: str,
    contributions: int = 1,
) -> tuple[np.ndarray, np.ndarray]:
    """What each person with ``rows[i]`` rows in a release at ``(epsilon, delta)`` DP under
    ``neighbours`` (its map computed at ``contributions`` rows) pays against a budget under
    ``ledger_neighbours`` by basic composition and group privacy (module docstring)."""
    steps = group_steps(rows, neighbours, ledger_neighbours, contributions)
    return group_loss(steps, epsilon, delta)


# -- zero-concentrated DP ----------------------------------------------------------------------
ZCDP_MAX_RHO = 50_000.0
"""Largest rho :func:`zcdp_epsilon` converts; OpenDP's conversion overflows past about 70,000
(a larger rho is charged ``inf``: over any budget)."""


def zcdp_epsilon(rho: float, delta: float) -> float:
    """The ``epsilon`` of a ``rho``-zCDP mechanism at ``delta``, as OpenDP converts it
    (``make_zCDP_to_approxDP``: the bound of Canonne, Kamath and Steinke, "The Discrete
    Gaussian for Differential Privacy", NeurIPS 2020, Prop. 12: the infimum over ``a > 1`` of
    ``a rho + (ln(1/delta) + (a-1) ln(1-1/a) - ln a)/(a-1)``, tighter than Bun and Steinke's
    ``rho + 2 sqrt(rho ln(1/delta))``). ``inf`` for ``delta`` 0 (zCDP is never pure) or a
    rho past :data:`ZCDP_MAX_RHO`; 0 for rho 0.

    >>> round(zcdp_epsilon(0.244, 1e-5), 4)
    3.1457
    """
    rho, delta = float(rho), float(delta)
    if rho <= 0:
        return 0.0
    if delta <= 0 or not rho <= ZCDP_MAX_RHO:
        return math.inf
    return _zcdp_epsilon(rho, delta)


@functools.lru_cache(maxsize=4096)
def _zcdp_epsilon(rho: float, delta: float) -> float:
    """OpenDP's conversion of a bare ``rho`` (:func:`zcdp_epsilon`): a Gaussian measurement of
    scale 1, whose zCDP map at ``d_in`` is ``d_in²/2``, at the smallest ``d_in`` OpenDP maps
    to ``rho`` or more (never less: the conversion is of a rho at least the one charged)."""
    dp = opendp_core.core()

    dp.enable_features("contrib")
    gauss = dp.m.make_gaussian(
        dp.atom_domain(T="f64", nan=False), dp.absolute_distance(T="f64"), scale=1.0
    )
    d_in = math.sqrt(2.0 * rho)
    while float(gauss.map(d_in)) < rho:
        d_in = float(np.nextafter(d_in, math.inf))
    approx = dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(gauss), delta)
    return float(approx.map(d_in)[0])


@functools.lru_cache(maxsize=256)
def zcdp_rho_within(epsilon: float, delta: float) -> float:
    """The largest rho (to float resolution, from below) whose :func:`zcdp_epsilon` at
    ``delta`` is at most ``epsilon``: the most a zCDP release that states ``(epsilon, delta)``
    by OpenDP's conversion can spend (the conversion increases with rho). 0 for ``delta`` 0.
    Bisection on OpenDP's conversion (about 60 conversions, remembered)."""
    if delta <= 0 or epsilon <= 0:
        return 0.0
    lo, hi = 0.0, max(float(epsilon), 1e-300)  # epsilon >= rho for any conversion
    if zcdp_epsilon(hi, delta) <= epsilon:
        return hi
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        lo, hi = (mid, hi) if zcdp_epsilon(mid, delta) <= epsilon else (lo, mid)
    return lo


def zcdp_epsilons(rho: np.ndarray, delta: float) -> np.ndarray:
    """:func:`zcdp_epsilon` of each rho (one OpenDP conversion per distinct value)."""
    r = np.asarray(rho, dtype=np.float64)
    uniq, inverse = np.unique(r, return_inverse=True)
    return np.array([zcdp_epsilon(float(u), delta) for u in uniq])[inverse].reshape(r.shape)


@dataclass
class Spend:
    """What people have spent, kept by composition rule so that the totals can be formed at
    any conversion delta (:meth:`totals`); one value per person in each array.

    ``epsilon, delta``: basic composition of every entry's own ``(epsilon, delta)`` with
    group privacy. ``rho``: zCDP entries' rho, ``k² rho`` for ``k`` group steps.
    ``pure_epsilon`` and ``pure_rho``: pure entries' ``k epsilon`` and ``(k epsilon)²/2``.
    ``approx_epsilon, approx_delta``: entries with only an ``(epsilon, delta)`` guarantee."""

    epsilon: np.ndarray
    delta: np.ndarray
    rho: np.ndarray
    pure_epsilon: np.ndarray
    pure_rho: np.ndarray
    approx_epsilon: np.ndarray
    approx_delta: np.ndarray

    @classmethod
    def zeros(cls, n: int) -> Spend:
        return cls(*(np.zeros(n) for _ in fields(cls)))

    def __add__(self, other: Spend) -> Spend:
        return Spend(
            *(saturated_sum(getattr(self, f.name), getattr(other, f.name)) for f in fields(self))
        )

    def take(self, idx: np.ndarray) -> Spend:
        """The people at ``idx`` (0 for an index of -1: someone not yet recorded)."""
        seen = idx >= 0
        out = Spend.zeros(len(idx))
        for f in fields(self):
            getattr(out, f.name)[seen] = getattr(self, f.name)[idx[seen]]
        return out

    def totals(self, delta: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Each person's ``(epsilon, delta)``: the smaller of the valid totals (module
        docstring of :mod:`kerckhoffs.dp.ledger`). Without a conversion ``delta`` (or at 0),
        basic composition; at ``delta > 0`` also (a) the zCDP entries' rho converted at
        ``delta`` plus the other entries by basic composition, and (b) the zCDP and pure
        entries' rho together (pure as ``epsilon²/2``-zCDP) converted at ``delta`` plus the
        approximate entries by basic composition. The route with the least epsilon among those
        whose delta is within ``delta`` is taken (the least epsilon when none is)."""
        eps, dlt = self.epsilon.copy(), self.delta.copy()
        if not delta or not eps.size:
            return eps, dlt
        with np.errstate(over="ignore", invalid="ignore"):
            routes = [
                (zcdp_epsilons(self.rho, delta) + self.pure_epsilon + self.approx_epsilon,
                 np.where(self.rho > 0, delta, 0.0) + self.approx_delta),
                (zcdp_epsilons(self.rho + self.pure_rho, delta) + self.approx_epsilon,
                 np.where(self.rho + self.pure_rho > 0, delta, 0.0) + self.approx_delta),
            ]  # fmt: skip
        for r_eps, r_delta in routes:
            r_eps = np.nan_to_num(r_eps, nan=math.inf)
            over, now_over = exceeds(r_delta, delta), exceeds(dlt, delta)
            better = (~over & now_over) | ((over == now_over) & (r_eps < eps))
            eps[better], dlt[better] = r_eps[better], r_delta[better]
        return eps, dlt


def entry_spend(
    rows: np.ndarray,
    epsilon: float,
    delta: float,
    neighbours: str,
    ledger_neighbours: str,
    *,
    measure: Measure | str = Measure.PURE,
    rho: float | None = None,
    contributions: int = 1,
) -> Spend:
    """What each person with ``rows[i]`` rows pays for one release, by composition rule
    (:class:`Spend`): basic composition with group privacy over ``k`` steps
    (:func:`group_steps`), and ``k² rho`` for a zCDP release or ``(k epsilon)²/2`` for a pure
    one (Bun and Steinke 2016, Props. 1.4 and 1.9)."""
    k = group_steps(rows, neighbours, ledger_neighbours, contributions).astype(np.float64)
    e, d = group_loss(k, epsilon, delta)
    zero = np.zeros(k.shape)
    out = Spend(e, d, zero, zero.copy(), zero.copy(), zero.copy(), zero.copy())
    m = Measure(measure)
    with np.errstate(over="ignore"):
        if m == Measure.ZCDP and rho is not None:
            out.rho = k * k * float(rho)
        elif m == Measure.PURE and delta == 0:
            out.pure_epsilon = e.copy()
            out.pure_rho = e * e / 2
        else:
            out.approx_epsilon, out.approx_delta = e.copy(), d.copy()
    return out


def saturated_sum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a + b`` of non-negative totals, ``inf`` where the sum passes the largest float (the
    intended saturation: over any budget), without numpy's overflow warning."""
    with np.errstate(over="ignore"):
        return np.add(a, b)


def exceeds(total: np.ndarray, budget: float) -> np.ndarray:
    return total > budget * (1 + TOLERANCE)


__all__ = [
    "ADD_REMOVE",
    "NOTIONS",
    "SUBSTITUTION",
    "TOLERANCE",
    "UNKNOWN",
    "BudgetExceeded",
    "Spend",
    "budget_number",
    "charge",
    "check_loss",
    "entry_spend",
    "exceeds",
    "group_delta_factor",
    "group_loss",
    "group_steps",
    "notion_text",
    "parse_budget",
    "parse_notion",
    "saturated_sum",
    "steps_per_row",
    "zcdp_epsilon",
    "zcdp_epsilons",
    "zcdp_rho_within",
]
