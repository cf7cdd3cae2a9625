"""Anonymization algorithms, each ``(Table, models, *, seed, **options) -> Release``.

Importing this package registers every algorithm in
:data:`kerckhoffs.algorithms.registry.REGISTRY` (the CLI's ``--algorithm`` names).
"""

from kerckhoffs.algorithms import (  # noqa: F401  (importing a module registers its algorithm)
    anatomy,
    dp,
    dp_synthetic,
    hilb,
    lattice,
    local_recoding,
    mask,
    mask_plus,
    mdav,
    mondrian,
    mprivacy_anonymize,
    pickup,
    sequence,
)
from kerckhoffs.algorithms.registry import REGISTRY, AlgorithmInfo, get, register

__all__ = ["REGISTRY", "AlgorithmInfo", "get", "register"]
