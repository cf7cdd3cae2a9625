"""What one DP release costs, as the privacy ledger accounts for it: its ``(epsilon, delta)``
guarantee, the *measure* it was proved under (pure epsilon-DP, zero-concentrated DP, or only
approximate DP), its neighbour notion and the number of rows per person its privacy map was
computed for.

The measure matters for composition: pure epsilon-DP releases compose by adding epsilons
(Dwork and Roth, "The Algorithmic Foundations of Differential Privacy", 2014, Thm. 3.16);
rho-zCDP releases (the Gaussian mechanism, AIM and MST) compose by adding rho and are turned
into ``(epsilon, delta)`` once, for the total (Bun and Steinke, "Concentrated Differential
Privacy: Simplifications, Extensions, and Lower Bounds", TCC 2016, Lemmas 2.3 and 3.5), which
is much tighter than adding the epsilons each release was converted to.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Measure(StrEnum):
    """The privacy measure a release's guarantee is stated in."""

    PURE = "max-divergence"
    """Pure epsilon-DP (Laplace, geometric, randomized response, report-noisy-max)."""
    ZCDP = "zero-concentrated"
    """rho-zCDP (Gaussian noise, AIM, MST); ``epsilon, delta`` is its conversion."""
    APPROXIMATE = "approximate"
    """Only an ``(epsilon, delta)`` guarantee is known."""


@dataclass(frozen=True)
class PrivacyLoss:
    """One release's privacy loss for the ledger.

    ``epsilon, delta``: the guarantee under ``neighbours`` (``substitution``, ``add-remove``,
    or ``sensitive-value`` for label DP), for a person contributing at most ``contributions``
    rows (1 unless the release bounded each person's rows). ``rho`` is set for a
    ``Measure.ZCDP`` release: the ledger composes those by rho."""

    epsilon: float
    delta: float
    neighbours: str
    measure: Measure = Measure.PURE
    rho: float | None = None
    contributions: int = 1

    def __post_init__(self) -> None:
        if self.measure == Measure.ZCDP and self.rho is None:
            raise ValueError("a zCDP loss needs its rho")
        if self.contributions < 1:
            raise ValueError(f"contributions must be 1 or more, got {self.contributions}")


__all__ = ["Measure", "PrivacyLoss"]
