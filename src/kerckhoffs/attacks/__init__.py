"""Adversaries that test a release: the attacks of the papers, one subpackage per adversary
family, over the modules they share.

Shared: :mod:`.knowledge` (what the adversary brings, as data), :mod:`.knowledge_check` (that
knowledge checked against the release), :mod:`.locate` (which published group holds an
individual), :mod:`.result` (what every attack returns) and :mod:`.registry` (attacks by name).

Families: :mod:`.minimality` (paper 001), :mod:`.hilb` (paper 000's Algorithm 7),
:mod:`.composition` (paper 004, on grouped and on DP releases), :mod:`.insider` (paper 003),
:mod:`.disclosure_set` (paper 002), :mod:`.negative_association` (paper 000's attack on MASK)
and :mod:`.seed_replay` (a release that publishes its seed).

The audits of an algorithm (random worlds, the enumerating generator, information flow) are
in :mod:`kerckhoffs.audits`; their names below stay importable from here.

The names below are loaded on first use (PEP 562), so importing one attack module (the CLI's
knowledge reader, say) does not load them all: a command starts faster.
:func:`~kerckhoffs.attacks.registry.register_all` imports every module that registers an
attack.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "AuditTooLarge": "kerckhoffs.audits.enumerating_rng",
    "EnumeratingRNG": "kerckhoffs.audits.enumerating_rng",
    "FlowAudit": "kerckhoffs.audits.information_flow",
    "Requirement": "kerckhoffs.attacks.minimality.attack",
    "WorldsAudit": "kerckhoffs.audits.random_worlds",
    "algorithm7": "kerckhoffs.attacks.hilb.order",
    "at_least": "kerckhoffs.audits.random_worlds",
    "audit": "kerckhoffs.audits.information_flow",
    "audit_worlds": "kerckhoffs.audits.random_worlds",
    "disclosure_set_attack": "kerckhoffs.attacks.disclosure_set.attack",
    "dp_intersection_attack": "kerckhoffs.attacks.composition.dp_intersection",
    "enumerate_outcomes": "kerckhoffs.audits.enumerating_rng",
    "hilb_order_attack": "kerckhoffs.attacks.hilb.order",
    "insider_attack": "kerckhoffs.attacks.insider.attack",
    "intersection_attack": "kerckhoffs.attacks.composition.intersection",
    "minimality_attack": "kerckhoffs.attacks.minimality.attack",
    "naive_worlds": "kerckhoffs.audits.random_worlds",
    "near_minimality_attack": "kerckhoffs.attacks.minimality.attack",
    "negative_association_attack": "kerckhoffs.attacks.negative_association",
    "overlapping_releases": "kerckhoffs.attacks.composition.intersection",
    "random_worlds": "kerckhoffs.audits.random_worlds",
    "release_key": "kerckhoffs.audits.random_worlds",
    "row_not": "kerckhoffs.audits.random_worlds",
    "seed_replay_attack": "kerckhoffs.attacks.seed_replay",
    "register_all": "kerckhoffs.attacks.registry",
}
"""Each public name (and :func:`~kerckhoffs.attacks.registry.register_all`) and the module
that defines it."""


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'kerckhoffs.attacks' has no attribute {name!r}")
    return getattr(importlib.import_module(where), name)


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
