"""k-anonymity (Samarati, Sweeney) and (alpha, k)-anonymity (Wong et al. 2006).

Both read group sizes; (alpha, k) also bounds the frequency of the sensitive value (set) in
every group, subset-aware through :attr:`GroupHistogram.sensitive_count`.
"""

from __future__ import annotations

import numpy as np

from kerckhoffs.models.base import (
    ModelResult,
    PrivacyModel,
    format_number,
    require,
)
from kerckhoffs.models.histogram import GroupHistogram
from kerckhoffs.mprivacy.constraints import KAnon
from kerckhoffs.tolerance import TOLERANCE


class KAnonymity(PrivacyModel):
    """Every group has at least ``k`` rows; achieved value: the smallest group."""

    name = "k-anonymity"
    fields = ("k",)

    def __init__(self, k: int) -> None:
        require(int(k) == k and k >= 1, f"k must be a positive integer, got {k}")
        self.k = int(k)

    @property
    def parameter(self) -> str:
        return f"k={self.k}"

    def m_privacy_constraint(self) -> KAnon:
        return KAnon(self.k)

    def validate(self, hist: GroupHistogram, sa_name: str = "the sensitive attribute") -> None:
        require(self.k <= hist.n, f"k={self.k} is larger than the table ({hist.n} rows)")

    def evaluate(self, hist: GroupHistogram) -> ModelResult:
        sizes = hist.sizes
        singles = int(sizes[sizes == 1].sum())
        return ModelResult(
            self.name,
            self.parameter,
            float(sizes.min()),
            sizes.astype(float),
            sizes >= self.k,
            True,
            f"{singles:,} row(s) unique on their QIs",
        )

    def combined_detail(self, values: np.ndarray, sizes: np.ndarray, detail: str) -> str:
        return f"{int(sizes[sizes == 1].sum()):,} row(s) unique on their QIs"


class AlphaKAnonymity(PrivacyModel):
    """``|G| >= k`` and the sensitive frequency in every group is at most ``alpha``.

    Achieved value: the largest sensitive frequency; the smallest group is in the detail.
    """

    name = "(alpha,k)-anonymity"
    fields = ("alpha", "k")
    reads_subset = True

    def __init__(self, alpha: float, k: int) -> None:
        require(0 < alpha <= 1, f"alpha must be in (0, 1], got {alpha}")
        require(int(k) == k and k >= 1, f"k must be a positive integer, got {k}")
        self.alpha = float(alpha)
        self.k = int(k)

    @property
    def parameter(self) -> str:
        return f"alpha={format_number(self.alpha)}, k={self.k}"

    def m_privacy_constraint(self) -> KAnon:
        return KAnon(self.k)

    def validate(self, hist: GroupHistogram, sa_name: str = "the sensitive attribute") -> None:
        require(self.k <= hist.n, f"k={self.k} is larger than the table ({hist.n} rows)")

    def evaluate(self, hist: GroupHistogram) -> ModelResult:
        freq = hist.sensitive_count / hist.sizes
        ok = (freq <= self.alpha + TOLERANCE) & (hist.sizes >= self.k)
        return ModelResult(
            self.name,
            self.parameter,
            float(freq.max()),
            freq,
            ok,
            False,
            f"smallest group {int(hist.sizes.min())}",
        )

    def combined_detail(self, values: np.ndarray, sizes: np.ndarray, detail: str) -> str:
        return f"smallest group {int(sizes.min())}"
