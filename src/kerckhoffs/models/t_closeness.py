"""t-closeness (Li, Li, Venkatasubramanian 2007) with the Earth Mover's Distance.

Equal ground distance for a categorical SA (EMD = half the L1 distance), ordered distance
for a numeric SA (EMD = sum of absolute cumulative differences over ``m - 1``).
"""

from __future__ import annotations

import numpy as np

from kerckhoffs.data.schema import Kind
from kerckhoffs.models.base import (
    ModelResult,
    PrivacyModel,
    format_number,
    require,
)
from kerckhoffs.models.histogram import GroupHistogram


class TCloseness(PrivacyModel):
    """EMD between each group's SA distribution and the whole table's is at most ``t``.

    Categorical SA: equal ground distance, EMD = half the L1 distance. Numeric SA: ordered
    distance, EMD = ``sum_i |cumsum(p - q)_i| / (m - 1)`` over the ``m`` ordered values.
    """

    name = "t-closeness"

    def __init__(self, t: float) -> None:
        require(0 <= t <= 1, f"t must be in [0, 1], got {t}")
        self.t = float(t)

    @property
    def parameter(self) -> str:
        return f"t={format_number(self.t)}"

    @staticmethod
    def distances(hist: GroupHistogram) -> np.ndarray:
        """EMD of every group to the table's SA distribution."""
        present = hist.totals > 0
        counts = hist.counts[:, present]
        q = hist.totals[present] / hist.n
        diff = counts / hist.sizes[:, None] - q
        if hist.sa_kind == Kind.NUMERIC:
            m = counts.shape[1]
            if m <= 1:
                return np.zeros(hist.n_groups)
            return np.abs(np.cumsum(diff, axis=1)[:, :-1]).sum(axis=1) / (m - 1)
        return 0.5 * np.abs(diff).sum(axis=1)

    def evaluate(self, hist: GroupHistogram) -> ModelResult:
        values = self.distances(hist)
        ok = values <= self.t + 1e-12
        kind = "ordered" if hist.sa_kind == Kind.NUMERIC else "equal"
        return ModelResult(
            self.name,
            self.parameter,
            float(values.max()),
            values,
            ok,
            False,
            f"{kind} ground distance",
        )
