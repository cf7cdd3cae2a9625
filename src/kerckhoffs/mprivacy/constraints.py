"""The constraint C of m-privacy, read from our privacy-model objects (paper 003 section II.B).

A constraint checks one record set given only its size and SA histogram, ``check(count,
hist)``, so a coalition's remainder ``G \\ T_I`` is checked from counts alone. Each says
whether it is EG-monotonic (paper Definition 2.3: adding records to a group never breaks it):
k-anonymity, distinct l-diversity and any conjunction of them are (Observation 2.2); the
pruning verifiers of section III rely on that and refuse the others. Frequency l-diversity
(``|G| >= l * S_max(G)``, our ``l=``) and entropy l-diversity are not: two records ``a, b``
are 2-diverse, ``a, a, b`` are not.

**Merging groups.** An anonymizer may refuse a table up front ("the whole table is not
m-private, so no partition of it is") only if m-privacy w.r.t. C is *merge-closed*: the union
of two m-private groups is m-private, so a partition into m-private groups would make the
whole table m-private (the contrapositive is the refusal). :func:`m_privacy_merge_closed` says
when that holds:

- for an EG-monotonic C and any m: a coalition of at most ``m_eff`` providers of the union
  either leaves records of one of the two groups, whose remainder satisfies C (at most that
  group's ``m_eff`` of its providers are in the coalition), and then so does the union's
  remainder by EG-monotonicity; or it owns both groups whole, which needs more providers than
  ``m_eff``;
- for m = 0, when C itself is merge-closed (:attr:`Constraint.merge_closed`): k-anonymity,
  distinct l-diversity, frequency l-diversity (``|A| >= l a`` and ``|B| >= l b`` give
  ``|A| + |B| >= l (a + b) >= l max_v(A_v + B_v)``), entropy l-diversity (entropy is concave);
- *not* for frequency l-diversity with m >= 1: P1 holding ``a, a, a, b, b, b`` and P2 holding
  ``c, d`` are each 1-private 2-diverse groups (one provider each, so no coalition has a
  victim), while their union is not: P1 removing its ``a`` records and keeping its ``b``
  records leaves ``b, b, b, c, d``, three of five the same (Definition 2.1 lets a coalition
  remove any part of its records, and ``5 < 2 x 3``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from kerckhoffs.errors import ParameterError
from kerckhoffs.tolerance import TOLERANCE


@dataclass(frozen=True)
class Constraint:
    """Base of the group-based constraints: ``check`` and the fitness ``ratio`` (>= 1 iff
    the constraint holds, the per-component F_C of paper Definition 3.1)."""

    eg_monotonic = True
    merge_closed = True
    """Whether the union of two record sets that satisfy C satisfies C (module docstring)."""

    def check(self, count: int, hist: np.ndarray) -> bool:
        """Whether a record set of ``count`` rows with SA histogram ``hist`` satisfies C."""
        raise NotImplementedError

    def ratio(self, count: int, hist: np.ndarray) -> float:
        """Level of fulfilment F_C; ``>= 1`` exactly when :meth:`check` holds."""
        raise NotImplementedError

    def check_batch(self, counts: np.ndarray, hists: np.ndarray) -> np.ndarray:
        """:meth:`check` for many record sets at once (``hists`` is sets x values)."""
        return np.array([self.check(int(n), h) for n, h in zip(counts, hists, strict=True)])

    def ratio_batch(self, counts: np.ndarray, hists: np.ndarray) -> np.ndarray:
        """:meth:`ratio` for many record sets at once."""
        return np.array([self.ratio(int(n), h) for n, h in zip(counts, hists, strict=True)])

    @property
    def parts(self) -> tuple[Constraint, ...]:
        """The conjunction's components (a single constraint is its own only part)."""
        return (self,)


@dataclass(frozen=True)
class KAnon(Constraint):
    """k-anonymity: ``|S| >= k``. EG-monotonic."""

    k: int

    def check(self, count: int, hist: np.ndarray) -> bool:
        return count >= self.k

    def ratio(self, count: int, hist: np.ndarray) -> float:
        return count / self.k

    def check_batch(self, counts: np.ndarray, hists: np.ndarray) -> np.ndarray:
        return counts >= self.k

    def ratio_batch(self, counts: np.ndarray, hists: np.ndarray) -> np.ndarray:
        return counts / self.k


@dataclass(frozen=True)
class DistinctL(Constraint):
    """Distinct l-diversity: at least ``l`` SA values occur. EG-monotonic."""

    l: int  # noqa: E741

    def check(self, count: int, hist: np.ndarray) -> bool:
        return int(np.count_nonzero(hist)) >= self.l

    def ratio(self, count: int, hist: np.ndarray) -> float:
        return int(np.count_nonzero(hist)) / self.l

    def check_batch(self, counts: np.ndarray, hists: np.ndarray) -> np.ndarray:
        return np.count_nonzero(hists, axis=1) >= self.l

    def ratio_batch(self, counts: np.ndarray, hists: np.ndarray) -> np.ndarray:
        return np.count_nonzero(hists, axis=1) / self.l


@dataclass(frozen=True)
class FrequencyL(Constraint):
    """Frequency l-diversity ``|S| >= l * S_max(S)`` (paper 000 Definition 2, every SA value
    sensitive). Not EG-monotonic; :mod:`kerckhoffs.mprivacy.exact` has its closed form."""

    l: float  # noqa: E741
    eg_monotonic = False

    def check(self, count: int, hist: np.ndarray) -> bool:
        return count > 0 and count + TOLERANCE >= self.l * int(hist.max())

    def ratio(self, count: int, hist: np.ndarray) -> float:
        top = int(hist.max()) if count else 0
        return math.inf if top == 0 else count / (self.l * top)


@dataclass(frozen=True)
class EntropyL(Constraint):
    """Entropy l-diversity: SA entropy ``>= log l``. Not EG-monotonic (paper section II.C);
    only the exhaustive verifier accepts it."""

    l: float  # noqa: E741
    eg_monotonic = False

    def _entropy(self, hist: np.ndarray) -> float:
        p = hist[hist > 0] / hist.sum()
        return float(-(p * np.log(p)).sum())

    def check(self, count: int, hist: np.ndarray) -> bool:
        return count > 0 and self._entropy(hist) + TOLERANCE >= math.log(self.l)

    def ratio(self, count: int, hist: np.ndarray) -> float:
        return math.exp(self._entropy(hist)) / self.l if count else 0.0


@dataclass(frozen=True)
class Conjunction(Constraint):
    """``C_1 and ... and C_w``; EG-monotonic when every component is (Observation 2.2)."""

    members: tuple[Constraint, ...]

    @property
    def eg_monotonic(self) -> bool:  # type: ignore[override]
        return all(c.eg_monotonic for c in self.members)

    @property
    def parts(self) -> tuple[Constraint, ...]:
        return self.members

    @property
    def merge_closed(self) -> bool:  # type: ignore[override]
        return all(c.merge_closed for c in self.members)

    def check(self, count: int, hist: np.ndarray) -> bool:
        return all(c.check(count, hist) for c in self.members)

    def ratio(self, count: int, hist: np.ndarray) -> float:
        return min(c.ratio(count, hist) for c in self.members)

    def check_batch(self, counts: np.ndarray, hists: np.ndarray) -> np.ndarray:
        out = np.ones(len(counts), dtype=bool)
        for c in self.members:
            out &= c.check_batch(counts, hists)
        return out


def m_privacy_merge_closed(constraint: Constraint, m: int) -> bool:
    """Whether the union of two groups m-private w.r.t. ``constraint`` is always m-private
    (module docstring), the condition under which a table that is not m-private has no
    partition into m-private groups."""
    return constraint.eg_monotonic or (m == 0 and constraint.merge_closed)


def conjunction(parts: Sequence[Constraint]) -> Constraint:
    """One constraint from ``parts`` (the part itself when there is one)."""
    flat = tuple(p for c in parts for p in c.parts)
    if not flat:
        raise ParameterError("m-privacy needs a constraint, e.g. k=5 or distinct-l=3")
    return flat[0] if len(flat) == 1 else Conjunction(flat)


class ConstraintSource(Protocol):
    """A privacy model that can be m-privacy's constraint: it names its own part of C
    (:meth:`kerckhoffs.models.base.PrivacyModel.m_privacy_constraint`), so this module needs
    no model class."""

    def m_privacy_constraint(self) -> Constraint: ...


def constraint_from_models(models: Sequence[ConstraintSource]) -> Constraint:
    """The constraint C of our model objects: ``KAnonymity``, ``DistinctLDiversity``,
    ``LDiversity`` (frequency) and ``EntropyLDiversity`` each give their part; any other model
    is refused (:class:`~kerckhoffs.errors.ParameterError`)."""
    return conjunction([m.m_privacy_constraint() for m in models])
