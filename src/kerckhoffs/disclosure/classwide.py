"""The class-wide engine: all three outcomes for every table of a multiset class at once
(kerckhoffs issue 13 item 3). Skeleton: filled in by a later commit."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kerckhoffs.disclosure.chk import Chk
from kerckhoffs.disclosure.per import DEFAULT_LIMIT
from kerckhoffs.disclosure.sequence import GeneralizationSequence

NOTHING = -1
"""Released index meaning "release nothing" (φ) in :class:`ClassOutcomes` arrays."""


@dataclass(frozen=True, eq=False)
class ClassOutcomes:
    """Outcomes over every distinct table with the given SA multiset.

    ``tables``: ``int [M, n]``; ``inclusive``, ``exclusive``, ``naive``: ``int8 [M]`` released
    index or -1; ``naive_unsafe``: ``bool [M]``, the naive release fails CHK on the
    adversary's true knowledge.
    """

    tables: np.ndarray
    inclusive: np.ndarray
    exclusive: np.ndarray
    naive: np.ndarray
    naive_unsafe: np.ndarray


def class_outcomes(
    seq: GeneralizationSequence, multiset_counts: np.ndarray, chk: Chk, limit: int = DEFAULT_LIMIT
) -> ClassOutcomes:
    """Enumerate the multiset class once and derive every table's three outcomes level by level."""
    raise NotImplementedError
