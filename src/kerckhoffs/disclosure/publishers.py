"""The three publishers of paper 002 on one table: naive, inclusive and exclusive (spec
``exclusive.md`` 2.6-2.8 and 3.5-3.7). Skeleton: filled in by the next commit."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from kerckhoffs.disclosure.chk import Chk
from kerckhoffs.disclosure.per import DEFAULT_LIMIT
from kerckhoffs.disclosure.sequence import GeneralizationSequence


@dataclass(frozen=True, eq=False)
class Step:
    """One candidate a strategy examined: its index, ``|PER|``, the closed-form CHK on PER,
    the disclosure set's size, per-person value counts over it ``[n, n_sa]`` and its CHK."""

    index: int
    per_size: int
    per_passes: bool
    disclosure_size: int
    counts: np.ndarray
    passes: bool


@dataclass(frozen=True, eq=False)
class Outcome:
    """What one strategy does on one table.

    ``released``: index of the released generalization (0-based: 0 is the paper's g1) or None
    (release nothing, φ). ``disclosure_size`` / ``max_share``: the disclosure set of the
    *deciding* candidate (the released one; else the last one whose disclosure set the
    strategy computed; 0 / () when none) and, per person, the largest share of any value
    over it, exact. ``instances``: PER instances enumerated (the cost measure of spec 5).
    ``steps``: every candidate whose disclosure set was computed, in order.
    """

    strategy: str
    released: int | None
    disclosure_size: int
    max_share: tuple[Fraction, ...]
    instances: int
    steps: tuple[Step, ...]


def naive(
    seq: GeneralizationSequence, sa: np.ndarray, chk: Chk, limit: int = DEFAULT_LIMIT
) -> Outcome:
    """Release the first candidate whose PER passes CHK (spec 2.6); the disclosure set reported
    is the adversary's true knowledge ``{X in PER: naive(X) = i}``."""
    raise NotImplementedError


def inclusive(
    seq: GeneralizationSequence,
    sa: np.ndarray,
    chk: Chk,
    memo: bool = True,
    limit: int = DEFAULT_LIMIT,
) -> Outcome:
    """Release the first candidate whose inclusive disclosure set passes CHK (spec 2.7, 3.5)."""
    raise NotImplementedError


def exclusive(
    seq: GeneralizationSequence, sa: np.ndarray, chk: Chk, limit: int = DEFAULT_LIMIT
) -> Outcome:
    """Stop at the first candidate whose PER passes; release it iff its exclusive disclosure set
    passes CHK (spec 2.8, 3.6)."""
    raise NotImplementedError
