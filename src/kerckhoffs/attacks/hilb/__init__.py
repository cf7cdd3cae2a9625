"""The Hilbert-order attack on Hilb (paper 000, Jin, Zhang, Das, Algorithm 7, section 8.3.1): an
adversary who knows every individual's QIs reads off Hilb's greedy order which rows were skipped.

- :mod:`.order`: Algorithm 7, the attack and its registry adapter;
- :mod:`.align`: which individual is which row when the release is read from files.
"""

from __future__ import annotations

from kerckhoffs.attacks.hilb.order import (
    FRONTIER_ALGORITHMS,
    HILB_FAMILY,
    STRICT_ALGORITHMS,
    Algorithm7,
    algorithm7,
    hilb_order_attack,
)

__all__ = [
    "FRONTIER_ALGORITHMS",
    "HILB_FAMILY",
    "STRICT_ALGORITHMS",
    "Algorithm7",
    "algorithm7",
    "hilb_order_attack",
]
