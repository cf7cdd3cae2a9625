"""The minimality attack (Wong, Fu, Wang, Pei, paper 001 sections 4, 5 and 7.1): an adversary who
knows only that the anonymizer generalizes no more than its requirement needs.

- :mod:`.attack`: the public entry points and the adapter that registers the attack;
- :mod:`.driver`: the whole-release attack (requirement, credibility of every individual, report);
- :mod:`.structure`: which original classes each published class covers, and how many tuples;
- :mod:`.credibility`: the exact credibility of one generalized class (rational arithmetic);
- :mod:`.batch`: the same credibility for every generalized class of a table at once;
- :mod:`.possible_worlds`: the attack for any per-class requirement, by enumerating worlds;
- :mod:`.mechanism`: attacks by mechanism (section 5.2), an adversary who knows the whole
  algorithm, read off the random-worlds auditor.
"""

from __future__ import annotations

from kerckhoffs.attacks.minimality.attack import (
    Requirement,
    credibility_sets,
    minimality_attack,
    near_minimality_attack,
    requirement_of,
    run_minimality,
)

__all__ = [
    "Requirement",
    "credibility_sets",
    "minimality_attack",
    "near_minimality_attack",
    "requirement_of",
    "run_minimality",
]
