"""The insider attack of paper 003 (Goryczka, Xiong, Fung, "m-Privacy for Collaborative Data
Publishing"): a coalition of data providers subtracts its own records from the published groups.

- :mod:`.attack`: the attack and its registry adapter;
- :mod:`.placement`: placing the coalition's records in the published groups (a transportation
  problem);
- :mod:`.claim`: groups the records fit in more than one way, decided with the release's
  recorded m-privacy check.
"""

from __future__ import annotations

from kerckhoffs.attacks.insider.attack import (
    MAX_COALITIONS,
    CoalitionRows,
    InsiderResult,
    coalition_rows,
    insider_attack,
    remainder_posteriors,
)

__all__ = [
    "MAX_COALITIONS",
    "CoalitionRows",
    "InsiderResult",
    "coalition_rows",
    "insider_attack",
    "remainder_posteriors",
]
