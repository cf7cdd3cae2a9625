"""(epsilon, delta)-differential privacy as a release's target (paper 004, Defs. 10 and 11),
and its weaker relative, label differential privacy.

Unlike the syntactic models, DP is not a property of a release's groups: it is a property of
the mechanism that made the release, for one *neighbour notion* (which pairs of databases it
must not tell apart; :class:`~kerckhoffs.dp.mechanisms.Neighbours`). What a DP release can
show is the privacy loss OpenDP's privacy map reported for the release's sensitivity and the
notion it was computed for, both recorded in ``release.json``; the check compares them with
the target and fails closed when the loss is larger or the notion does not give the target's.

* :class:`DifferentialPrivacy` (``dp=EPS[,DELTA]``): the standard claim. Met by a release that
  is DP under *substitution* (one person's record changes) or *add/remove* (one person joins
  or leaves); the verdict says which. A release that protects only a change of one person's
  sensitive value fails it, with a reason saying what it does meet.
* :class:`LabelDifferentialPrivacy` (``label-dp=EPS[,DELTA]``): DP for a change of one
  person's sensitive value, their QI cell and the number of people fixed (Chaudhuri and Hsu,
  COLT 2011; Ghazi et al., NeurIPS 2021). ``dp-rr`` with ``perturb=sa`` meets it and no more.
  Substitution DP at ``ε`` gives it at ``ε``; add/remove DP at ``ε`` at ``2ε``
  (:func:`~kerckhoffs.dp.mechanisms.implied_loss`).

On a release that is not DP (a generalization or bucketization) the check is a one-line error:
no table of groups has a privacy loss to compare.
"""

from __future__ import annotations

from abc import abstractmethod

import numpy as np

from kerckhoffs.dp.mechanisms import (
    STANDARD_NEIGHBOURS,
    Neighbours,
    check_budget,
    implied_loss,
    parse_neighbours,
)
from kerckhoffs.errors import ParameterError
from kerckhoffs.models.base import (
    ModelResult,
    PrivacyModel,
    format_apart,
    format_exact,
    format_number,
)
from kerckhoffs.models.histogram import GroupHistogram


class DPTarget(PrivacyModel):
    """What the DP targets share: an ``(epsilon, delta)`` budget checked against a release's
    recorded loss and neighbour notion (:meth:`evaluate_loss`), never against groups."""

    fields = ("epsilon", "delta")
    syntax = "dp"

    def __init__(self, epsilon: float, delta: float = 0.0) -> None:
        self.epsilon, self.delta = check_budget(epsilon, delta)

    @property
    def parameter(self) -> str:
        """``epsilon=E[, delta=D]``, each number as given (every digit it has: a verdict
        compares the loss with exactly this)."""
        eps = f"epsilon={format_exact(self.epsilon)}"
        return eps if self.delta == 0 else f"{eps}, delta={format_exact(self.delta)}"

    def evaluate(self, hist: GroupHistogram) -> ModelResult:
        """Refused: a table of groups has no privacy loss (use :meth:`evaluate_loss` on a
        DP release's recorded loss)."""
        raise ParameterError(
            f"{self.syntax} ({self.parameter}) is checked on a differentially private release "
            "(scheme dp, e.g. -a dp-histogram); this release publishes groups, not noisy counts"
        )

    @abstractmethod
    def evaluate_loss(self, loss: tuple[float, float], neighbours: Neighbours | str) -> ModelResult:
        """Compare a release's recorded loss ``(epsilon', delta')``, computed under
        ``neighbours``, with the target."""

    def _result(self, eps: float, delta: float, ok: bool, detail: str) -> ModelResult:
        return ModelResult(
            self.name,
            self.parameter,
            eps,
            np.array([eps]),
            np.array([ok]),
            False,
            detail,
            per_group=False,
            shown=format_apart(eps, self.epsilon) if eps > self.epsilon else "",
        )

    def _delta_text(self, delta: float) -> str:
        """``delta D``, with the digits that show it above the target when it is."""
        if delta > self.delta:
            return f"delta {format_apart(delta, self.delta)} (above {format_exact(self.delta)})"
        return f"delta {delta:g}"


class DifferentialPrivacy(DPTarget):
    """The release must be ``(epsilon, delta)``-DP under substitution or add/remove
    neighbours: its recorded loss ``(epsilon', delta')`` has ``epsilon' <= epsilon`` and
    ``delta' <= delta``, and its recorded notion is one of the two (the verdict's detail names
    it). A release DP only for a change of one sensitive value (``dp-rr perturb=sa``) fails,
    whatever its epsilon: it publishes each QI cell's total exactly.

    >>> DifferentialPrivacy(1).parameter, DifferentialPrivacy(1, 1e-6).parameter
    ('epsilon=1', 'epsilon=1, delta=1e-06')
    >>> DifferentialPrivacy(1).evaluate_loss((1.0, 0.0), "add-remove").satisfied
    True
    >>> DifferentialPrivacy(1).evaluate_loss((0.5, 0.0), "sensitive-value").satisfied
    False
    """

    name = "differential-privacy"
    syntax = "dp"

    def evaluate_loss(self, loss: tuple[float, float], neighbours: Neighbours | str) -> ModelResult:
        """One 'group' (the release): satisfied iff the notion is substitution or add/remove
        and both numbers are within the target."""
        nb = parse_neighbours(neighbours)
        eps, delta = float(loss[0]), float(loss[1])
        if nb not in STANDARD_NEIGHBOURS:
            return self._result(
                eps,
                delta,
                False,
                f"delta {delta:g}; DP only for a change of one sensitive value: label-dp",
            )
        ok = eps <= self.epsilon and delta <= self.delta
        return self._result(eps, delta, ok, f"{self._delta_text(delta)}, under {nb.value}")


class LabelDifferentialPrivacy(DPTarget):
    """The release must be ``(epsilon, delta)``-DP for a change of one person's sensitive
    value, their QI cell and the number of people fixed (label DP; Chaudhuri and Hsu, COLT
    2011; Ghazi et al., NeurIPS 2021). A weaker claim than :class:`DifferentialPrivacy`: it
    says nothing about whether a person is in the data or where their QIs put them.

    Met by a release recorded under ``sensitive-value`` neighbours at the loss it records,
    under substitution at its loss, under add/remove at twice its epsilon
    (:func:`~kerckhoffs.dp.mechanisms.implied_loss`); the achieved value is the implied
    epsilon.

    >>> LabelDifferentialPrivacy(1).evaluate_loss((0.5, 0.0), "add-remove").achieved
    1.0
    """

    name = "label-differential-privacy"
    syntax = "label-dp"

    def evaluate_loss(self, loss: tuple[float, float], neighbours: Neighbours | str) -> ModelResult:
        """The recorded loss carried over to sensitive-value neighbours, then compared."""
        nb = parse_neighbours(neighbours)
        implied = implied_loss(loss, nb, Neighbours.SENSITIVE_VALUE)
        if implied is None:  # pragma: no cover (every notion implies this one)
            raise ParameterError(f"neighbours {nb.value} imply nothing about label DP")
        eps, delta = implied
        ok = eps <= self.epsilon and delta <= self.delta
        how = (
            "for a change of one sensitive value"
            if nb == Neighbours.SENSITIVE_VALUE
            else f"from DP under {nb.value} at epsilon {format_number(float(loss[0]))}"
        )
        return self._result(eps, delta, ok, f"{self._delta_text(delta)}, {how}")


__all__ = ["DPTarget", "DifferentialPrivacy", "LabelDifferentialPrivacy"]
