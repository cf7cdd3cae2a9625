"""The per-group part of m-confidentiality (paper 001 Definition 5, as MASK enforces it).

A group may hold at most ``floor(|G| / m)`` rows of any sensitive value (set). Full
m-confidentiality also needs an algorithm whose output does not leak through its choices;
that is what the attacks and the algorithm-safe variants are for.
"""

from __future__ import annotations

import numpy as np

from kerckhoffs.models.base import (
    ModelResult,
    PrivacyModel,
    ratio,
    require,
    require_within_domain,
)
from kerckhoffs.models.histogram import GroupHistogram


class MConfidentiality(PrivacyModel):
    """Per group, at most ``floor(|G| / m)`` rows of any sensitive value (set).

    Achieved value: the largest m every group allows, ``min_G floor(|G| / c(G))``.
    """

    name = "m-confidentiality (per group)"
    fields = ("m",)
    reads_subset = True

    def __init__(self, m: int) -> None:
        require(int(m) == m and m >= 1, f"m must be a positive integer, got {m}")
        self.m = int(m)

    @property
    def parameter(self) -> str:
        return f"m={self.m}"

    def validate(self, hist: GroupHistogram, sa_name: str = "the sensitive attribute") -> None:
        if hist.all_sensitive:
            require_within_domain(self.m, hist, sa_name, "m")

    def evaluate(self, hist: GroupHistogram) -> ModelResult:
        counts = hist.sensitive_count
        values = np.floor(ratio(hist.sizes.astype(float), counts.astype(float)))
        ok = counts <= hist.sizes // self.m
        return ModelResult(self.name, self.parameter, float(values.min()), values, ok, True)
