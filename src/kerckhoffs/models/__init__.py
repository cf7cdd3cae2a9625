"""Privacy models checked on a release's per-group SA histogram."""

from kerckhoffs.models.base import ModelResult, PrivacyModel
from kerckhoffs.models.checks import (
    AlphaKAnonymity,
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    LDiversity,
    MConfidentiality,
    RecursiveCLDiversity,
    TCloseness,
    parse_model,
)
from kerckhoffs.models.histogram import GroupHistogram

__all__ = [
    "AlphaKAnonymity",
    "DistinctLDiversity",
    "EntropyLDiversity",
    "GroupHistogram",
    "KAnonymity",
    "LDiversity",
    "MConfidentiality",
    "ModelResult",
    "PrivacyModel",
    "RecursiveCLDiversity",
    "TCloseness",
    "parse_model",
]
