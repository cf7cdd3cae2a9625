"""Adversaries that test releases: the random-worlds auditor (exact posteriors of an adversary
who knows the algorithm, small tables) and the information-flow audit (any size)."""

from kerckhoffs.attacks.composition import intersection_attack, overlapping_releases
from kerckhoffs.attacks.disclosure_set import disclosure_set_attack  # registers disclosure-set
from kerckhoffs.attacks.enumerating_rng import AuditTooLarge, EnumeratingRNG, enumerate_outcomes
from kerckhoffs.attacks.hilb_order import algorithm7, hilb_order_attack
from kerckhoffs.attacks.information_flow import FlowAudit, audit
from kerckhoffs.attacks.insider import insider_attack  # registers insider
from kerckhoffs.attacks.minimality import Requirement, minimality_attack, near_minimality_attack
from kerckhoffs.attacks.negative_association import negative_association_attack
from kerckhoffs.attacks.random_worlds import (
    WorldsAudit,
    at_least,
    audit_worlds,
    naive_worlds,
    random_worlds,
    release_key,
    row_not,
)
from kerckhoffs.attacks.seed_replay import seed_replay_attack  # registers seed-replay

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
