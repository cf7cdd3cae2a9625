"""The composition (intersection) attack of paper 004 (Ganta, Kasiviswanathan, Smith, KDD 2008):
an adversary who locates a target in several independent releases and intersects what each
publishes about them.

- :mod:`.intersection`: Algorithm 1 on grouped releases, with the paper's metrics;
- :mod:`.dp_intersection`: the same adversary against DP count tables.

Locating individuals in a release is shared with other attacks: :mod:`kerckhoffs.attacks.locate`.
"""

from __future__ import annotations

from kerckhoffs.attacks.composition.dp_intersection import (
    DEFAULT_TAU,
    FALSE_ALARM,
    chance_tail,
    dp_intersection_attack,
    held_counts,
    run_dp_intersection,
    thresholds,
)
from kerckhoffs.attacks.composition.intersection import (
    DP_REASON,
    LEVELS,
    Intersection,
    OverlappingReleases,
    attack_result,
    intersect,
    intersection_attack,
    make_subsets,
    max_values,
    meta_on_disk,
    overlapping_releases,
    presumed_anonymity,
    refuse_dp,
    run_intersection,
    sa_vocabulary,
    take_rows,
)

__all__ = [
    "DEFAULT_TAU",
    "DP_REASON",
    "FALSE_ALARM",
    "LEVELS",
    "Intersection",
    "OverlappingReleases",
    "attack_result",
    "chance_tail",
    "dp_intersection_attack",
    "held_counts",
    "intersect",
    "intersection_attack",
    "make_subsets",
    "max_values",
    "meta_on_disk",
    "overlapping_releases",
    "presumed_anonymity",
    "refuse_dp",
    "run_dp_intersection",
    "run_intersection",
    "sa_vocabulary",
    "take_rows",
    "thresholds",
]
