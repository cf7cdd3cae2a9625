"""Adversaries that test releases: the random-worlds auditor (exact posteriors of an adversary
who knows the algorithm, small tables) and the information-flow audit (any size)."""

from kerckhoffs.attacks.information_flow import FlowAudit, audit
from kerckhoffs.attacks.random_worlds import (
    AuditTooLarge,
    EnumeratingRNG,
    WorldsAudit,
    at_least,
    audit_worlds,
    enumerate_outcomes,
    naive_worlds,
    random_worlds,
    release_key,
    row_not,
)

__all__ = [
    "AuditTooLarge",
    "EnumeratingRNG",
    "FlowAudit",
    "WorldsAudit",
    "at_least",
    "audit",
    "audit_worlds",
    "enumerate_outcomes",
    "naive_worlds",
    "random_worlds",
    "release_key",
    "row_not",
]
