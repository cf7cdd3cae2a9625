"""Privacy models checked on a release's per-group SA histogram."""

from kerckhoffs.models.base import ModelResult, PrivacyModel
from kerckhoffs.models.differential_privacy import (
    DifferentialPrivacy,
    DPTarget,
    LabelDifferentialPrivacy,
)
from kerckhoffs.models.histogram import GroupHistogram
from kerckhoffs.models.k_anonymity import AlphaKAnonymity, KAnonymity
from kerckhoffs.models.l_diversity import (
    DistinctLDiversity,
    EntropyLDiversity,
    LDiversity,
    RecursiveCLDiversity,
)
from kerckhoffs.models.m_confidentiality import MConfidentiality
from kerckhoffs.models.m_privacy import MPrivacy, combine_m_privacy
from kerckhoffs.models.parse import parse_model
from kerckhoffs.models.t_closeness import TCloseness

__all__ = [
    "AlphaKAnonymity",
    "DPTarget",
    "DifferentialPrivacy",
    "DistinctLDiversity",
    "EntropyLDiversity",
    "GroupHistogram",
    "KAnonymity",
    "LDiversity",
    "LabelDifferentialPrivacy",
    "MConfidentiality",
    "MPrivacy",
    "ModelResult",
    "PrivacyModel",
    "RecursiveCLDiversity",
    "TCloseness",
    "combine_m_privacy",
    "parse_model",
]
