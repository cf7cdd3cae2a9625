"""Adversaries that test releases: the random-worlds auditor (exact posteriors of an adversary
who knows the algorithm, small tables), the information-flow audit (any size) and the attacks
of the papers, each registered by name (:mod:`.registry`).

The names below are loaded on first use (PEP 562), so importing one attack module (the CLI's
knowledge reader, say) does not load them all: a command starts faster.
:func:`register_all` imports every module that registers an attack.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "AuditTooLarge": "enumerating_rng",
    "EnumeratingRNG": "enumerating_rng",
    "FlowAudit": "information_flow",
    "Requirement": "minimality",
    "WorldsAudit": "random_worlds",
    "algorithm7": "hilb_order",
    "at_least": "random_worlds",
    "audit": "information_flow",
    "audit_worlds": "random_worlds",
    "disclosure_set_attack": "disclosure_set",
    "dp_intersection_attack": "dp_intersection",
    "enumerate_outcomes": "enumerating_rng",
    "hilb_order_attack": "hilb_order",
    "insider_attack": "insider",
    "intersection_attack": "composition",
    "minimality_attack": "minimality",
    "naive_worlds": "random_worlds",
    "near_minimality_attack": "minimality",
    "negative_association_attack": "negative_association",
    "overlapping_releases": "composition",
    "random_worlds": "random_worlds",
    "release_key": "random_worlds",
    "row_not": "random_worlds",
    "seed_replay_attack": "seed_replay",
}
"""Each public name and the module that defines it."""

ATTACK_MODULES = (
    "composition",
    "disclosure_set",
    "dp_intersection",
    "hilb_order",
    "insider",
    "minimality",
    "negative_association",
    "seed_replay",
)
"""The modules whose import registers an attack."""


def register_all() -> None:
    """Import every module that registers an attack (the registry calls it before a lookup)."""
    for name in ATTACK_MODULES:
        importlib.import_module(f"kerckhoffs.attacks.{name}")


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'kerckhoffs.attacks' has no attribute {name!r}")
    return getattr(importlib.import_module(f"kerckhoffs.attacks.{where}"), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])


__all__ = [
    "AuditTooLarge",
    "EnumeratingRNG",
    "FlowAudit",
    "Requirement",
    "WorldsAudit",
    "algorithm7",
    "at_least",
    "audit",
    "audit_worlds",
    "disclosure_set_attack",
    "dp_intersection_attack",
    "enumerate_outcomes",
    "hilb_order_attack",
    "insider_attack",
    "intersection_attack",
    "minimality_attack",
    "naive_worlds",
    "near_minimality_attack",
    "negative_association_attack",
    "overlapping_releases",
    "random_worlds",
    "release_key",
    "row_not",
    "seed_replay_attack",
]
