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
from kerckhoffs.tolerance import TOLERANCE


class TCloseness(PrivacyModel):
    """EMD between each group's SA distribution and the whole table's is at most ``t``.

    Categorical SA: equal ground distance, EMD = half the L1 distance. Numeric SA: ordered
    distance, EMD = ``sum_i |cumsum(p - q)_i| / (m - 1)`` over the ``m`` ordered values.
    """

    name = "t-closeness"
    fields = ("t",)

    def __init__(self, t: float) -> None:
        require(0 <= t <= 1, f"t must be in [0, 1], got {t}")
        self.t = float(t)

    @property
    def parameter(self) -> str:
        return f"t={format_number(self.t)}"

    @staticmethod
    def distances(hist: GroupHistogram) -> np.ndarray:
        """EMD of every group to the table's SA distribution."""
        return emd_to(hist.counts, hist.totals, hist.sa_kind == Kind.NUMERIC)

    def evaluate(self, hist: GroupHistogram) -> ModelResult:
        values = self.distances(hist)
        ok = values <= self.t + TOLERANCE
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


def emd_to(counts: np.ndarray, totals: np.ndarray, ordered: bool) -> np.ndarray:
    """EMD of each row of ``counts`` ``[sets, n_sa]`` to the distribution of ``totals``
    (the table's SA counts), over the values the table holds: equal ground distance (half the
    L1 distance) or, ``ordered``, the ordered distance of a numeric SA. Shared by the model and
    by Mondrian's t-closeness cut rule."""
    present = np.asarray(totals) > 0
    counts = np.asarray(counts, dtype=np.float64)[:, present]
    q = totals[present] / totals[present].sum()
    sizes = counts.sum(axis=1, keepdims=True)
    diff = counts / np.where(sizes > 0, sizes, 1.0) - q
    if ordered:
        m = counts.shape[1]
        if m <= 1:
            return np.zeros(counts.shape[0])
        return np.abs(np.cumsum(diff, axis=1)[:, :-1]).sum(axis=1) / (m - 1)
    return 0.5 * np.abs(diff).sum(axis=1)
