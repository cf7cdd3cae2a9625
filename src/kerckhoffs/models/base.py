"""What a privacy model is and what checking one returns.

A model reads a :class:`~kerckhoffs.models.histogram.GroupHistogram` and returns a
:class:`ModelResult`: the value the release achieves (the largest k, the smallest t, ...),
one measure and one verdict per group, and whether the requested parameter holds.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kerckhoffs.errors import ParameterError
from kerckhoffs.models.histogram import GroupHistogram

if TYPE_CHECKING:
    from kerckhoffs.mprivacy.constraints import Constraint


@dataclass(frozen=True, eq=False)
class ModelResult:
    """Outcome of checking one model on one release.

    ``group_values[g]`` is the model's measure on group ``g`` (its size for k-anonymity, its
    EMD for t-closeness, ...); ``achieved`` is the release-wide value (the worst group's);
    ``group_ok[g]`` says whether group ``g`` meets the requested parameter. ``scope`` names
    the sensitive values the verdict was computed on when the schema names a subset of them
    (``on {Preschool, 1st-4th}``; empty when every value counts):
    :func:`kerckhoffs.models.scope.with_scope`.
    """

    model: str
    parameter: str
    achieved: float
    group_values: np.ndarray
    group_ok: np.ndarray
    higher_is_better: bool
    detail: str = ""
    scope: str = ""
    per_group: bool = True
    """False for a model of the whole release (differential privacy): its one 'group' is the
    release, so there are no violating groups to count."""
    shown: str = ""
    """How to print :attr:`achieved` when the compact form would hide the verdict (a loss
    above its target by less than the 4 digits :func:`format_number` shows:
    :func:`format_apart`); empty: :func:`format_number`."""

    @property
    def achieved_text(self) -> str:
        """:attr:`achieved` as printed: :attr:`shown`, else :func:`format_number`."""
        return self.shown or format_number(self.achieved)

    @property
    def satisfied(self) -> bool:
        """Whether every group meets the requested parameter."""
        return bool(self.group_ok.all())

    @property
    def violating(self) -> int:
        """Number of groups that do not meet the parameter."""
        return int(self.group_ok.size - np.count_nonzero(self.group_ok))

    def worst_groups(self, n: int = 5) -> np.ndarray:
        """Ids of the ``n`` groups with the worst measure (worst first, ties by group id)."""
        key = self.group_values if self.higher_is_better else -self.group_values
        return np.argsort(key, kind="stable")[:n]

    def summary(self) -> str:
        """One line: model, requested parameter, achieved value, verdict."""
        if self.satisfied:
            verdict = "ok"
        elif self.per_group:
            verdict = f"VIOLATED in {self.violating:,} group(s)"
        else:
            verdict = "VIOLATED"
        extra = f", {self.detail}" if self.detail else ""
        achieved = self.achieved_text
        scope = f" {self.scope}" if self.scope else ""
        return f"{self.model} ({self.parameter}{scope}): achieved {achieved}{extra} — {verdict}"


class PrivacyModel(ABC):
    """A per-group privacy requirement checked from the SA histogram.

    ``fields`` names the constructor's arguments, which are also the model's attributes:
    :meth:`to_dict` records them as data (``{"model": "k-anonymity", "k": 5}``, what a release's
    provenance holds) and :meth:`from_dict` rebuilds the model, so nothing reads a model back
    from its display string :attr:`parameter`."""

    name: str = "model"
    fields: tuple[str, ...] = ()
    needs_providers: bool = False
    reads_subset: bool = False
    """Whether the model bounds only the schema's sensitive subset when one is named (its
    verdict then names the subset: :mod:`kerckhoffs.models.scope`)."""
    """Whether checking the model needs each row's data provider (m-privacy), which the
    published files do not hold."""

    def m_privacy_constraint(self) -> Constraint:
        """This model as (a part of) m-privacy's constraint C (paper 003 section II.B:
        :mod:`kerckhoffs.mprivacy.constraints`). k, frequency, distinct and entropy
        l-diversity give theirs; any other model is refused with a one-line
        :class:`~kerckhoffs.errors.ParameterError`."""
        raise ParameterError(
            f"m-privacy cannot use {self.name} ({self.parameter}) as its constraint; it takes "
            "k, l, distinct-l and entropy-l"
        )

    def to_dict(self) -> dict[str, Any]:
        """The model as JSON-ready data: its :attr:`name` under ``"model"`` and its fields."""
        return {"model": self.name} | {f: getattr(self, f) for f in self.fields}

    @staticmethod
    def from_dict(data: dict[str, Any]) -> PrivacyModel:
        """The model :meth:`to_dict` recorded; an unknown model or a wrong field is a one-line
        :class:`~kerckhoffs.errors.ParameterError`."""
        if not isinstance(data, dict) or "model" not in data:
            raise ParameterError(f"a recorded model needs a 'model' name, got {data!r}")
        name = data["model"]
        cls = model_classes().get(name)
        if cls is None:
            raise ParameterError(f"unknown recorded model {name!r}")
        args = {k: v for k, v in data.items() if k != "model"}
        if set(args) != set(cls.fields):
            raise ParameterError(
                f"recorded model {name!r} needs {', '.join(cls.fields)}, got "
                f"{', '.join(sorted(args)) or 'nothing'}"
            )
        return cls(**args)

    @staticmethod
    def from_legacy(name: str, text: str) -> PrivacyModel:
        """A model recorded the old way (release.json format_version 2: lattice provenance
        held ``{model name: display string}``, e.g. ``"(alpha,k)-anonymity": "alpha=0.5,
        k=2"``): the ``field=number`` pairs of the string, read for compatibility only."""
        values: dict[str, Any] = {}
        for part in str(text).split(","):
            key, sep, raw = part.partition("=")
            try:
                num = float(raw)
            except ValueError:
                raise ParameterError(f"recorded model {name!r}: cannot read {text!r}") from None
            if not sep:
                raise ParameterError(f"recorded model {name!r}: cannot read {text!r}")
            values[key.strip()] = int(num) if num.is_integer() else num
        return PrivacyModel.from_dict({"model": name, **values})

    @abstractmethod
    def evaluate(self, hist: GroupHistogram) -> ModelResult:
        """Check the model on every group of ``hist``."""

    def combine(self, parts: Sequence[ModelResult], sizes: np.ndarray) -> ModelResult:
        """The result on all groups from :meth:`evaluate` on consecutive slices of them, in
        order (a distributed check evaluates each slice where its histograms are; the slices
        share the table-wide statistics, such as the SA totals t-closeness reads). ``sizes``:
        every group's rows. The per-group arrays are concatenated and the achieved value is
        the worst group's, as :meth:`evaluate` computes it on the whole; models whose detail
        line is a table-wide count override this to recount it."""
        if not parts:
            raise ParameterError(f"{self.name}: no group to check")
        first = parts[0]
        values = np.concatenate([p.group_values for p in parts])
        ok = np.concatenate([p.group_ok for p in parts])
        achieved = values.min() if first.higher_is_better else values.max()
        return ModelResult(
            first.model,
            first.parameter,
            float(achieved),
            values,
            ok,
            first.higher_is_better,
            self.combined_detail(values, sizes, first.detail),
        )

    def combined_detail(self, values: np.ndarray, sizes: np.ndarray, detail: str) -> str:
        """The detail line of :meth:`evaluate` on the whole, from every group's measure and
        size; ``detail`` is the first slice's (the default keeps it: a detail that does not
        depend on the groups)."""
        return detail

    def validate(  # noqa: B027 (a model with nothing to validate keeps this default)
        self, hist: GroupHistogram, sa_name: str = "the sensitive attribute"
    ) -> None:
        """Raise :class:`~kerckhoffs.errors.ParameterError` if no release of this table can
        satisfy the parameter (k above the table size, l above the SA domain, ...)."""

    @property
    @abstractmethod
    def parameter(self) -> str:
        """The requested parameter as text, e.g. ``k=5``."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.parameter})"


def model_classes() -> dict[str, type[PrivacyModel]]:
    """Every concrete model class by :attr:`PrivacyModel.name` (subclasses, recursively).

    Complete without importing them here: this module is only reachable through the package
    :mod:`kerckhoffs.models`, whose ``__init__`` imports every model module before any caller
    can run this function."""
    out: dict[str, type[PrivacyModel]] = {}
    todo = list(PrivacyModel.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if not getattr(cls, "__abstractmethods__", None):
            out.setdefault(cls.name, cls)
    return out


def format_number(x: float) -> str:
    """A compact rendering: integers without decimals (up to 10^16; beyond, an exponent, as
    ``1e+308``, never 309 digits), others to 4 significant digits."""
    if x == np.inf:
        return "inf"
    if float(x).is_integer() and abs(x) < 1e16:
        return str(int(x))
    return f"{x:.4g}"


def format_exact(x: float) -> str:
    """``x`` with every digit it has, in the shortest form that reads back as the same float
    (``0.5``, ``4.99999``, ``1e-06``, ``1e+308``; an integral value without ``.0``): for a
    parameter a verdict compares with."""
    text = repr(float(x))
    return text[:-2] if text.endswith(".0") else text


def format_apart(value: float, bound: float) -> str:
    """``value`` with as many digits as it takes to differ from ``bound`` in print (up to
    the 17 that tell any two floats apart), for a verdict that ``value`` exceeds ``bound``:
    a loss of ``5.000000000000001`` against a target of 5 must not read "achieved 5".

    >>> format_apart(5.000000000000001, 5.0), format_apart(7.5, 5.0)
    ('5.000000000000001', '7.5')
    """
    text = format_number(value)
    if value == bound or text != format_exact(bound):
        return text
    for digits in range(5, 18):
        text = f"{value:.{digits}g}"
        if text != f"{bound:.{digits}g}":
            return text
    return repr(float(value))  # pragma: no cover (17 digits tell any two floats apart)


def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den with x / 0 = inf (a group with nothing to bound is infinitely diverse)."""
    out = np.full(num.shape, np.inf)
    np.divide(num, den, out=out, where=den > 0)
    return out


def distinct_values(hist: GroupHistogram) -> int:
    """Number of SA values that occur in the table."""
    return int(np.count_nonzero(hist.totals))


def require_within_domain(value: float, hist: GroupHistogram, sa_name: str, label: str) -> None:
    """Refuse a diversity parameter above the number of distinct SA values: no grouping of
    the table can then satisfy it, so it is refused before any work rather than failing the
    final check)."""
    distinct = distinct_values(hist)
    require(
        value <= distinct,
        f"{label}={format_number(value)} exceeds the number of distinct values of {sa_name} "
        f"({distinct})",
    )


def require(cond: bool, message: str) -> None:
    """Raise :class:`ParameterError` with ``message`` unless ``cond``."""
    if not cond:
        raise ParameterError(message)
