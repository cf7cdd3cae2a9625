"""The disclosure-set attack of paper 002 (Zhang, Wang, Jajodia and Brodsky): what a naive
publisher's release discloses to an adversary who knows its candidate generalizations.

- :mod:`.attack`: the attack and its registry adapter;
- :mod:`.candidates`: what the adversary re-derives from the release (the candidates laid on
  the people, the released candidate, the privacy check).
"""

from __future__ import annotations

from kerckhoffs.attacks.disclosure_set.attack import (
    ATTACK,
    disclosure_set_attack,
    lattice_candidates,
    sequence_candidates,
)

__all__ = [
    "ATTACK",
    "disclosure_set_attack",
    "lattice_candidates",
    "sequence_candidates",
]
