"""The arithmetic of a privacy ledger (:mod:`kerckhoffs.dp.ledger`): neighbour notions,
budgets, and what a release costs each person by basic composition and group privacy
(Dwork and Roth 2014, Theorems 2.2 and 3.16). Totals saturate (never NaN; an overflow is
``inf``, over any budget) and decisions allow :data:`TOLERANCE` of floating-point slack.
"""

from __future__ import annotations

import math

import numpy as np

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


def charge(
    rows: np.ndarray, epsilon: float, delta: float, neighbours: str, ledger_neighbours: str
) -> tuple[np.ndarray, np.ndarray]:
    """What each person with ``rows[i]`` rows in a release at ``(epsilon, delta)`` DP under
    ``neighbours`` pays against a budget under ``ledger_neighbours`` (module docstring)."""
    steps = steps_per_row(neighbours, ledger_neighbours)
    return group_loss(np.asarray(rows, dtype=np.int64) * steps, epsilon, delta)


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
    "budget_number",
    "charge",
    "check_loss",
    "exceeds",
    "group_delta_factor",
    "group_loss",
    "notion_text",
    "parse_budget",
    "parse_notion",
    "saturated_sum",
    "steps_per_row",
]
