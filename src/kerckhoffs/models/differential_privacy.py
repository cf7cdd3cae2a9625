"""(epsilon, delta)-differential privacy as a release's target (paper 004, Defs. 10 and 11;
spec ``composition.md`` 2.9).

Unlike the syntactic models, DP is not a property of a release's groups: it is a property of
the mechanism that made the release. What a DP release can show is the privacy loss OpenDP's
privacy map reported for the release's sensitivity (recorded in ``release.json``); the check
compares that with the target and fails closed when it is larger. On a release that is not
DP (a generalization or bucketization) the check is a one-line error: no table of groups
has a privacy loss to compare.
"""

from __future__ import annotations

import numpy as np

from kerckhoffs.dp.mechanisms import check_budget
from kerckhoffs.errors import ParameterError
from kerckhoffs.models.base import ModelResult, PrivacyModel, format_number
from kerckhoffs.models.histogram import GroupHistogram


class DifferentialPrivacy(PrivacyModel):
    """The release must be ``(epsilon, delta)``-DP: the recorded privacy loss
    ``(epsilon', delta')`` has ``epsilon' <= epsilon`` and ``delta' <= delta``.

    Neighbours are substitution by default (spec AMB-6); the release records its own notion.

    >>> DifferentialPrivacy(1).parameter, DifferentialPrivacy(1, 1e-6).parameter
    ('epsilon=1', 'epsilon=1, delta=1e-06')
    """

    name = "differential-privacy"
    fields = ("epsilon", "delta")

    def __init__(self, epsilon: float, delta: float = 0.0) -> None:
        self.epsilon, self.delta = check_budget(epsilon, delta)

    @property
    def parameter(self) -> str:
        eps = f"epsilon={format_number(self.epsilon)}"
        return eps if self.delta == 0 else f"{eps}, delta={self.delta:g}"

    def evaluate(self, hist: GroupHistogram) -> ModelResult:
        """Refused: a table of groups has no privacy loss (use :meth:`evaluate_loss` on a
        DP release's recorded loss)."""
        raise ParameterError(
            f"dp ({self.parameter}) is checked on a differentially private release (scheme "
            "dp, e.g. -a dp-histogram); this release publishes groups, not noisy counts"
        )

    def evaluate_loss(self, loss: tuple[float, float]) -> ModelResult:
        """Compare the recorded privacy loss ``(epsilon', delta')`` with the target: one
        'group' (the release), satisfied iff both are within the target."""
        eps, delta = float(loss[0]), float(loss[1])
        ok = eps <= self.epsilon and delta <= self.delta
        return ModelResult(
            self.name,
            self.parameter,
            eps,
            np.array([eps]),
            np.array([ok]),
            False,
            f"delta {delta:g}",
            per_group=False,
        )
