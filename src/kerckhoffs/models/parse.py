"""Parsing privacy models as written on the command line (``k=5``, ``l=3``, ...)."""

from __future__ import annotations

import math

from kerckhoffs.errors import ParameterError
from kerckhoffs.model_syntax import SYNTAX, model_names
from kerckhoffs.models.base import PrivacyModel, format_number
from kerckhoffs.models.differential_privacy import DifferentialPrivacy, LabelDifferentialPrivacy
from kerckhoffs.models.k_anonymity import AlphaKAnonymity, KAnonymity
from kerckhoffs.models.l_diversity import (
    DistinctLDiversity,
    EntropyLDiversity,
    LDiversity,
    RecursiveCLDiversity,
)
from kerckhoffs.models.m_confidentiality import MConfidentiality
from kerckhoffs.models.m_privacy import MPrivacy
from kerckhoffs.models.t_closeness import TCloseness


def parse_model(spec: str) -> PrivacyModel:
    """Parse a model as written on the command line.

    ``k=5``, ``l=3`` (frequency), ``distinct-l=3``, ``entropy-l=2.5``, ``recursive-cl=C,L``,
    ``t=0.2``, ``alpha-k=ALPHA,K``, ``m=3``, ``m-privacy=3`` (paper 003: with respect to the
    other models given; :func:`kerckhoffs.models.combine_m_privacy` joins them), ``dp=EPS`` or
    ``dp=EPS,DELTA`` ((epsilon, delta)-differential privacy under substitution or add/remove
    neighbours, paper 004), ``label-dp=EPS[,DELTA]`` (DP for a change of one record's
    sensitive value only: what ``dp-rr`` with ``perturb=sa`` meets).
    """
    name, sep, raw = spec.partition("=")
    name = name.strip().lower()
    if not sep or not raw.strip():
        raise ParameterError(f"model {spec!r}: expected NAME=VALUE, e.g. k=5 or l=3")
    try:
        nums = [float(x) for x in raw.split(",")]
    except ValueError:
        raise ParameterError(f"model {spec!r}: {raw!r} is not a number") from None
    if any(math.isinf(x) for x in nums):
        raise ParameterError(
            f"model {spec!r}: {raw!r} is too large (beyond the largest float, about 1.8e308, "
            "it is not a finite number)"
        )
    if not all(math.isfinite(x) for x in nums):
        raise ParameterError(f"model {spec!r}: {raw!r} is not a finite number")

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
    if name == "m-privacy":
        return MPrivacy(_int(one(), spec))
    if name in {"dp", "epsilon"}:
        if len(nums) not in {1, 2}:
            raise ParameterError(f"model {spec!r}: expected EPS or EPS,DELTA")
        return DifferentialPrivacy(*nums)
    if name in {"label-dp", "label-epsilon"}:
        if len(nums) not in {1, 2}:
            raise ParameterError(f"model {spec!r}: expected EPS or EPS,DELTA")
        return LabelDifferentialPrivacy(*nums)
    raise ParameterError(f"unknown model {name!r} in {spec!r} (known: {', '.join(model_names())})")


def _int(x: float, spec: str) -> int:
    if not float(x).is_integer():
        raise ParameterError(f"model {spec!r}: {format_number(x)} must be an integer")
    return int(x)


def written_model(model: PrivacyModel) -> str:
    """``model`` as users type it (``l=3``, ``distinct-l=2``, ``dp=1``, ``m-privacy=2``)."""
    name = SYNTAX.get(type(model).__name__, model.name)
    if name == "m-privacy":
        return f"{name}={format_number(model.m)}"  # type: ignore[attr-defined]
    values = [getattr(model, f) for f in model.fields]
    if name == "dp" and values[1:] == [0.0]:
        values = values[:1]  # pure DP: no delta
    return f"{name}=" + ",".join(format_number(float(v)) for v in values)


__all__ = ["SYNTAX", "parse_model", "written_model"]
