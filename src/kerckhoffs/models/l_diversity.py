"""l-diversity in the four forms the papers and peers use.

- :class:`LDiversity`: the frequency form of paper 000 Definition 2 and paper 001's
  simplified l-diversity, ``|G| >= l * S_max(G)``, subset-aware.
- :class:`DistinctLDiversity`, :class:`EntropyLDiversity`, :class:`RecursiveCLDiversity`:
  Machanavajjhala et al.'s forms; recursive (c, l) as paper 001 section 2.5 states it,
  ``r_1 < c * (r_l + ... + r_q)``.
"""

from __future__ import annotations

import math

import numpy as np

from kerckhoffs.models.base import (
    ModelResult,
    PrivacyModel,
    format_number,
    ratio,
    require,
    require_within_domain,
)
from kerckhoffs.models.histogram import GroupHistogram
from kerckhoffs.mprivacy.constraints import DistinctL, EntropyL, FrequencyL
from kerckhoffs.tolerance import TOLERANCE


class LDiversity(PrivacyModel):
    """Frequency l-diversity: ``|G| >= l * c(G)``, ``c(G)`` the bounded count.

    ``c(G)`` is S_max(G) when every SA value is sensitive, else the sensitive count of the
    schema's subset (see :attr:`GroupHistogram.sensitive_count`). Achieved value:
    ``min_G |G| / c(G)``.
    """

    name = "l-diversity"
    fields = ("l",)
    reads_subset = True

    def __init__(self, l: float) -> None:  # noqa: E741
        require(l >= 1, f"l must be at least 1, got {l}")
        self.l = float(l)

    @property
    def parameter(self) -> str:
        return f"l={format_number(self.l)}"

    def m_privacy_constraint(self) -> FrequencyL:
        return FrequencyL(self.l)

    def validate(self, hist: GroupHistogram, sa_name: str = "the sensitive attribute") -> None:
        if hist.all_sensitive:
            require_within_domain(self.l, hist, sa_name, "l")

    def evaluate(self, hist: GroupHistogram) -> ModelResult:
        counts = hist.sensitive_count
        values = ratio(hist.sizes.astype(float), counts.astype(float))
        ok = hist.sizes + TOLERANCE >= self.l * counts
        return ModelResult(self.name, self.parameter, float(values.min()), values, ok, True)


class DistinctLDiversity(PrivacyModel):
    """Every group holds at least ``l`` distinct SA values."""

    name = "distinct l-diversity"
    fields = ("l",)

    def __init__(self, l: int) -> None:  # noqa: E741
        require(int(l) == l and l >= 1, f"distinct l must be a positive integer, got {l}")
        self.l = int(l)

    @property
    def parameter(self) -> str:
        return f"l={self.l}"

    def m_privacy_constraint(self) -> DistinctL:
        return DistinctL(self.l)

    def validate(self, hist: GroupHistogram, sa_name: str = "the sensitive attribute") -> None:
        require_within_domain(self.l, hist, sa_name, "l")

    def evaluate(self, hist: GroupHistogram) -> ModelResult:
        d = hist.distinct
        return ModelResult(
            self.name, self.parameter, float(d.min()), d.astype(float), d >= self.l, True
        )


class EntropyLDiversity(PrivacyModel):
    """Every group's SA entropy is at least ``log(l)``; achieved value: ``exp(min entropy)``."""

    name = "entropy l-diversity"
    fields = ("l",)

    def __init__(self, l: float) -> None:  # noqa: E741
        require(l >= 1, f"entropy l must be at least 1, got {l}")
        self.l = float(l)

    @property
    def parameter(self) -> str:
        return f"l={format_number(self.l)}"

    def m_privacy_constraint(self) -> EntropyL:
        return EntropyL(self.l)

    def validate(self, hist: GroupHistogram, sa_name: str = "the sensitive attribute") -> None:
        require_within_domain(self.l, hist, sa_name, "entropy l")

    @staticmethod
    def entropies(hist: GroupHistogram) -> np.ndarray:
        """Natural-log entropy of each group's SA distribution."""
        return entropy_of_counts(hist.counts)

    def evaluate(self, hist: GroupHistogram) -> ModelResult:
        h = self.entropies(hist)
        values = np.exp(h)
        ok = h + TOLERANCE >= math.log(self.l)
        return ModelResult(self.name, self.parameter, float(values.min()), values, ok, True)


class RecursiveCLDiversity(PrivacyModel):
    """Recursive (c, l)-diversity: ``r_1 < c * (r_l + ... + r_q)`` in every group.

    ``r_1 >= r_2 >= ...`` are the group's SA counts. The per-group measure is
    ``r_1 / (r_l + ... + r_q)`` (inf with fewer than ``l`` distinct values); the release
    satisfies (c, l) iff every measure is below ``c``. Achieved value: the largest measure,
    i.e. the release is (c, l)-diverse for every c above it.
    """

    name = "recursive (c,l)-diversity"
    fields = ("c", "l")

    def __init__(self, c: float, l: int) -> None:  # noqa: E741
        require(c > 0, f"c must be positive, got {c}")
        require(int(l) == l and l >= 2, f"recursive l must be an integer >= 2, got {l}")
        self.c = float(c)
        self.l = int(l)

    @property
    def parameter(self) -> str:
        return f"c={format_number(self.c)}, l={self.l}"

    def validate(self, hist: GroupHistogram, sa_name: str = "the sensitive attribute") -> None:
        require_within_domain(self.l, hist, sa_name, "l")

    @staticmethod
    def ratios(hist: GroupHistogram, l: int) -> np.ndarray:  # noqa: E741
        """Per group ``r_1 / (r_l + ... + r_q)``."""
        r = -np.sort(-hist.counts, axis=1)
        tail = r[:, l - 1 :].sum(axis=1)
        return ratio(r[:, 0].astype(float), tail.astype(float))

    def evaluate(self, hist: GroupHistogram) -> ModelResult:
        values = self.ratios(hist, self.l)
        ok = values < self.c
        return ModelResult(
            self.name,
            self.parameter,
            float(values.max()),
            values,
            ok,
            False,
            f"needs c > {format_number(float(values.max()))} for l={self.l}",
        )

    def combined_detail(self, values: np.ndarray, sizes: np.ndarray, detail: str) -> str:
        return f"needs c > {format_number(float(values.max()))} for l={self.l}"


def entropy_of_counts(counts: np.ndarray) -> np.ndarray:
    """Natural-log entropy of each row of a count matrix ``[sets, n_sa]`` (0 for empty rows);
    shared by the model and by Mondrian's entropy l-diversity cut rule."""
    counts = np.asarray(counts, dtype=np.float64)
    sizes = counts.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(sizes > 0, counts / np.where(sizes > 0, sizes, 1.0), 0.0)
        terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    return -terms.sum(axis=1)
