"""The privacy models of issue 2, each computed from one per-group SA histogram.

- :class:`KAnonymity`: every group has at least k rows (Samarati, Sweeney).
- :class:`LDiversity`: the frequency form the papers use, ``|G| >= l * S_max(G)`` (paper 000
  Definition 2; paper 001's simplified l-diversity), subset-aware.
- :class:`DistinctLDiversity`, :class:`EntropyLDiversity`, :class:`RecursiveCLDiversity`:
  Machanavajjhala et al.'s forms; recursive (c, l) as paper 001 Table 2 states it,
  ``r_1 < c * (r_l + ... + r_q)``.
- :class:`TCloseness`: EMD between each group's SA distribution and the table's (Li et al.),
  equal ground distance for a categorical SA, ordered distance for a numeric SA.
- :class:`AlphaKAnonymity`: ``|G| >= k`` and every sensitive frequency ``<= alpha``
  (Wong et al. 2006).
- :class:`MConfidentiality`: the per-group part of m-confidentiality (paper 001 Definition 5,
  as MASK enforces it): at most ``floor(|G| / m)`` rows of any sensitive value (set).
  Full m-confidentiality also needs the algorithm to be safe; that is the attacks' business.
"""

from __future__ import annotations

import math

import numpy as np

from kerckhoffs.data.schema import Kind
from kerckhoffs.errors import ParameterError
from kerckhoffs.models.base import ModelResult, PrivacyModel, format_number
from kerckhoffs.models.histogram import GroupHistogram

_EPS = 1e-12


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den with x / 0 = inf (a group with nothing to bound is infinitely diverse)."""
    out = np.full(num.shape, np.inf)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _distinct_values(hist: GroupHistogram) -> int:
    return int(np.count_nonzero(hist.totals))


def _require(cond: bool, message: str) -> None:
    if not cond:
        raise ParameterError(message)


class KAnonymity(PrivacyModel):
    """Every group has at least ``k`` rows; achieved value: the smallest group."""

    name = "k-anonymity"

    def __init__(self, k: int) -> None:
        _require(int(k) == k and k >= 1, f"k must be a positive integer, got {k}")
        self.k = int(k)

    @property
    def parameter(self) -> str:
        return f"k={self.k}"

    def validate(self, hist: GroupHistogram, sa_name: str = "the sensitive attribute") -> None:
        _require(self.k <= hist.n, f"k={self.k} is larger than the table ({hist.n} rows)")

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


class LDiversity(PrivacyModel):
    """Frequency l-diversity: ``|G| >= l * c(G)``, ``c(G)`` the bounded count.

    ``c(G)`` is S_max(G) when every SA value is sensitive, else the sensitive count of the
    schema's subset (see :attr:`GroupHistogram.sensitive_count`). Achieved value:
    ``min_G |G| / c(G)``.
    """

    name = "l-diversity"

    def __init__(self, l: float) -> None:  # noqa: E741
        _require(l >= 1, f"l must be at least 1, got {l}")
        self.l = float(l)

    @property
    def parameter(self) -> str:
        return f"l={format_number(self.l)}"

    def validate(self, hist: GroupHistogram, sa_name: str = "the sensitive attribute") -> None:
        if hist.all_sensitive:
            distinct = _distinct_values(hist)
            _require(
                self.l <= distinct,
                f"l={format_number(self.l)} exceeds the number of distinct values of "
                f"{sa_name} ({distinct})",
            )

    def evaluate(self, hist: GroupHistogram) -> ModelResult:
        counts = hist.sensitive_count
        values = _ratio(hist.sizes.astype(float), counts.astype(float))
        ok = hist.sizes + _EPS >= self.l * counts
        return ModelResult(self.name, self.parameter, float(values.min()), values, ok, True)


class DistinctLDiversity(PrivacyModel):
    """Every group holds at least ``l`` distinct SA values."""

    name = "distinct l-diversity"

    def __init__(self, l: int) -> None:  # noqa: E741
        _require(int(l) == l and l >= 1, f"distinct l must be a positive integer, got {l}")
        self.l = int(l)

    @property
    def parameter(self) -> str:
        return f"l={self.l}"

    def validate(self, hist: GroupHistogram, sa_name: str = "the sensitive attribute") -> None:
        distinct = _distinct_values(hist)
        _require(
            self.l <= distinct,
            f"l={self.l} exceeds the number of distinct values of {sa_name} ({distinct})",
        )

    def evaluate(self, hist: GroupHistogram) -> ModelResult:
        d = hist.distinct
        return ModelResult(
            self.name, self.parameter, float(d.min()), d.astype(float), d >= self.l, True
        )


class EntropyLDiversity(PrivacyModel):
    """Every group's SA entropy is at least ``log(l)``; achieved value: ``exp(min entropy)``."""

    name = "entropy l-diversity"

    def __init__(self, l: float) -> None:  # noqa: E741
        _require(l >= 1, f"entropy l must be at least 1, got {l}")
        self.l = float(l)

    @property
    def parameter(self) -> str:
        return f"l={format_number(self.l)}"

    def validate(self, hist: GroupHistogram, sa_name: str = "the sensitive attribute") -> None:
        distinct = _distinct_values(hist)
        _require(
            self.l <= distinct,
            f"entropy l={format_number(self.l)} exceeds the number of distinct values of "
            f"{sa_name} ({distinct})",
        )

    @staticmethod
    def entropies(hist: GroupHistogram) -> np.ndarray:
        """Natural-log entropy of each group's SA distribution."""
        p = hist.counts / hist.sizes[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)
        return -terms.sum(axis=1)

    def evaluate(self, hist: GroupHistogram) -> ModelResult:
        h = self.entropies(hist)
        values = np.exp(h)
        ok = h + 1e-9 >= math.log(self.l)
        return ModelResult(self.name, self.parameter, float(values.min()), values, ok, True)


class RecursiveCLDiversity(PrivacyModel):
    """Recursive (c, l)-diversity: ``r_1 < c * (r_l + ... + r_q)`` in every group.

    ``r_1 >= r_2 >= ...`` are the group's SA counts. The per-group measure is
    ``r_1 / (r_l + ... + r_q)`` (inf with fewer than ``l`` distinct values); the release
    satisfies (c, l) iff every measure is below ``c``. Achieved value: the largest measure,
    i.e. the release is (c, l)-diverse for every c above it.
    """

    name = "recursive (c,l)-diversity"

    def __init__(self, c: float, l: int) -> None:  # noqa: E741
        _require(c > 0, f"c must be positive, got {c}")
        _require(int(l) == l and l >= 2, f"recursive l must be an integer >= 2, got {l}")
        self.c = float(c)
        self.l = int(l)

    @property
    def parameter(self) -> str:
        return f"c={format_number(self.c)}, l={self.l}"

    def validate(self, hist: GroupHistogram, sa_name: str = "the sensitive attribute") -> None:
        distinct = _distinct_values(hist)
        _require(
            self.l <= distinct,
            f"l={self.l} exceeds the number of distinct values of {sa_name} ({distinct})",
        )

    @staticmethod
    def ratios(hist: GroupHistogram, l: int) -> np.ndarray:  # noqa: E741
        """Per group ``r_1 / (r_l + ... + r_q)``."""
        r = -np.sort(-hist.counts, axis=1)
        tail = r[:, l - 1 :].sum(axis=1)
        return _ratio(r[:, 0].astype(float), tail.astype(float))

    def evaluate(self, hist: GroupHistogram) -> ModelResult:
        values = self.ratios(hist, self.l)
        ok = values < self.c
        return ModelResult(
            self.name, self.parameter, float(values.max()), values, ok, False,
            f"needs c > {format_number(float(values.max()))} for l={self.l}",
        )


class TCloseness(PrivacyModel):
    """EMD between each group's SA distribution and the whole table's is at most ``t``.

    Categorical SA: equal ground distance, EMD = half the L1 distance. Numeric SA: ordered
    distance, EMD = ``sum_i |cumsum(p - q)_i| / (m - 1)`` over the ``m`` ordered values.
    """

    name = "t-closeness"

    def __init__(self, t: float) -> None:
        _require(0 <= t <= 1, f"t must be in [0, 1], got {t}")
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
            self.name, self.parameter, float(values.max()), values, ok, False,
            f"{kind} ground distance",
        )


class AlphaKAnonymity(PrivacyModel):
    """``|G| >= k`` and the sensitive frequency in every group is at most ``alpha``.

    Achieved value: the largest sensitive frequency; the smallest group is in the detail.
    """

    name = "(alpha,k)-anonymity"

    def __init__(self, alpha: float, k: int) -> None:
        _require(0 < alpha <= 1, f"alpha must be in (0, 1], got {alpha}")
        _require(int(k) == k and k >= 1, f"k must be a positive integer, got {k}")
        self.alpha = float(alpha)
        self.k = int(k)

    @property
    def parameter(self) -> str:
        return f"alpha={format_number(self.alpha)}, k={self.k}"

    def validate(self, hist: GroupHistogram, sa_name: str = "the sensitive attribute") -> None:
        _require(self.k <= hist.n, f"k={self.k} is larger than the table ({hist.n} rows)")

    def evaluate(self, hist: GroupHistogram) -> ModelResult:
        freq = hist.sensitive_count / hist.sizes
        ok = (freq <= self.alpha + 1e-12) & (hist.sizes >= self.k)
        return ModelResult(
            self.name, self.parameter, float(freq.max()), freq, ok, False,
            f"smallest group {int(hist.sizes.min())}",
        )


class MConfidentiality(PrivacyModel):
    """Per group, at most ``floor(|G| / m)`` rows of any sensitive value (set).

    Achieved value: the largest m every group allows, ``min_G floor(|G| / c(G))``.
    """

    name = "m-confidentiality (per group)"

    def __init__(self, m: int) -> None:
        _require(int(m) == m and m >= 1, f"m must be a positive integer, got {m}")
        self.m = int(m)

    @property
    def parameter(self) -> str:
        return f"m={self.m}"

    def validate(self, hist: GroupHistogram, sa_name: str = "the sensitive attribute") -> None:
        if hist.all_sensitive:
            distinct = _distinct_values(hist)
            _require(
                self.m <= distinct,
                f"m={self.m} exceeds the number of distinct values of {sa_name} ({distinct})",
            )

    def evaluate(self, hist: GroupHistogram) -> ModelResult:
        counts = hist.sensitive_count
        values = np.floor(_ratio(hist.sizes.astype(float), counts.astype(float)))
        ok = counts <= hist.sizes // self.m
        return ModelResult(self.name, self.parameter, float(values.min()), values, ok, True)


def parse_model(spec: str) -> PrivacyModel:
    """Parse a model as written on the command line.

    ``k=5``, ``l=3`` (frequency), ``distinct-l=3``, ``entropy-l=2.5``, ``recursive-cl=C,L``,
    ``t=0.2``, ``alpha-k=ALPHA,K``, ``m=3``.
    """
    name, sep, raw = spec.partition("=")
    name = name.strip().lower()
    if not sep or not raw.strip():
        raise ParameterError(f"model {spec!r}: expected NAME=VALUE, e.g. k=5 or l=3")
    try:
        nums = [float(x) for x in raw.split(",")]
    except ValueError:
        raise ParameterError(f"model {spec!r}: {raw!r} is not a number") from None

    def one() -> float:
        if len(nums) != 1:
            raise ParameterError(f"model {spec!r}: expected one value")
        return nums[0]

    def two(what: str) -> tuple[float, float]:
        if len(nums) != 2:
            raise ParameterError(f"model {spec!r}: expected two values {what}")
        return nums[0], nums[1]

    if name == "k":
        return KAnonymity(_int(one(), spec))
    if name in {"l", "frequency-l"}:
        return LDiversity(one())
    if name == "distinct-l":
        return DistinctLDiversity(_int(one(), spec))
    if name == "entropy-l":
        return EntropyLDiversity(one())
    if name in {"recursive-cl", "recursive-l", "cl"}:
        c, l = two("C,L")  # noqa: E741
        return RecursiveCLDiversity(c, _int(l, spec))
    if name == "t":
        return TCloseness(one())
    if name in {"alpha-k", "alphak"}:
        a, k = two("ALPHA,K")
        return AlphaKAnonymity(a, _int(k, spec))
    if name == "m":
        return MConfidentiality(_int(one(), spec))
    raise ParameterError(
        f"unknown model {name!r} in {spec!r} (known: k, l, distinct-l, entropy-l, "
        "recursive-cl, t, alpha-k, m)"
    )


def _int(x: float, spec: str) -> int:
    if not float(x).is_integer():
        raise ParameterError(f"model {spec!r}: {format_number(x)} must be an integer")
    return int(x)
