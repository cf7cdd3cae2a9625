"""Anonymization algorithms, each ``(Table, models, *, seed, **options) -> Release``.

Importing this package registers every algorithm in
:data:`kerckhoffs.algorithms.registry.REGISTRY` (the CLI's ``--algorithm`` names).
"""

from kerckhoffs.algorithms.registry import REGISTRY, AlgorithmInfo, get, register

__all__ = ["REGISTRY", "AlgorithmInfo", "get", "register"]
from kerckhoffs.algorithms import mondrian  # noqa: F401  (registers "mondrian")
