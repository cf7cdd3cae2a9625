"""Mondrian's allowable cuts: whether a group ``G`` may be cut into halves ``L`` and ``R``.

A rule is evaluated on the statistics of candidate cuts (:class:`CutStats`), vectorized over
all candidates, and declares which SA statistics it reads (``reads_*``): statistics of halves
that end up unpublished are what makes original Mondrian leak (paper 000 Theorem 5.1), so what
a rule reads is part of its contract. The safe variant (:class:`LookAheadCut`, Mondrian+)
differs from the original (:class:`LDiversityCut`) in that one condition. Every float
comparison uses the checkers' tolerance (:data:`kerckhoffs.tolerance.TOLERANCE`), so a cut the
rule allows yields groups the model's checker accepts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from kerckhoffs.errors import InternalError
from kerckhoffs.models.base import format_number
from kerckhoffs.models.l_diversity import entropy_of_counts
from kerckhoffs.models.t_closeness import emd_to
from kerckhoffs.tolerance import TOLERANCE

MEDIANS = ("lower", "upper")
CUTS = ("strict", "relaxed")


@dataclass(frozen=True, eq=False)
class CutStats:
    """Statistics of candidate cuts, one entry per candidate (a group cut on one dimension).

    ``size`` is ``|G|``, ``left`` is ``|L|`` (``right = |G| - |L|``). ``bounded`` is ``c(G)``,
    the count frequency l-diversity bounds (``S_max(G)`` when every SA value is sensitive, else
    the sensitive count of the schema's subset, as :attr:`GroupHistogram.sensitive_count`);
    ``bounded_left`` / ``bounded_right`` are ``c(L)`` / ``c(R)``; ``hist_left`` /
    ``hist_right`` the halves' full SA histograms ``[candidates, n_sa]`` (entropy l-diversity,
    t-closeness). The SA fields are ``None`` unless the rule declares that it reads them
    (``reads_group_sa`` / ``reads_halves_sa`` / ``reads_halves_hist``), so k-anonymity cuts
    never touch the SA.
    """

    size: np.ndarray
    left: np.ndarray
    bounded: np.ndarray | None = None
    bounded_left: np.ndarray | None = None
    bounded_right: np.ndarray | None = None
    hist_left: np.ndarray | None = None
    hist_right: np.ndarray | None = None

    @property
    def right(self) -> np.ndarray:
        """``|R| = |G| - |L|``."""
        return self.size - self.left


class CutRule:
    """Whether a candidate cut ``G -> (L, R)`` is allowed (vectorized over candidates).

    Subclasses set ``reads_group_sa`` / ``reads_halves_sa`` to the SA statistics they need
    (also an audit of what a rule reads: statistics of halves that end up unpublished are what
    makes original Mondrian leak, paper 000 Theorem 5.1) and implement :meth:`allowed`.

    **Mondrian+ is one different rule** (paper 000 Algorithm 1, global look-ahead;
    ``docs/theory/asap.md#mondrian-plus``),
    :class:`LookAheadCut`: a cut of ``G`` is allowed only when both halves have at least
    ``l * S_max(G)`` rows. It reads the SA of ``G`` only, which is always a union of published
    groups, so it never consults an unpublished statistic (equivalently, a k-anonymity cut
    with ``k = l * S_max(G)`` per group); :func:`mondrian_plus` is ``mondrian_groups(table,
    LookAheadCut(l))`` after the l-eligibility check.
    """

    reads_group_sa: bool = False
    reads_halves_sa: bool = False
    reads_halves_hist: bool = False

    def allowed(self, stats: CutStats) -> np.ndarray:
        """Boolean per candidate: may ``G`` be cut into these halves."""
        raise NotImplementedError

    def describe(self) -> str:
        """Short description for error messages and provenance."""
        return type(self).__name__


class KAnonymityCut(CutRule):
    """k-anonymity Mondrian (``docs/theory/asap.md#mondrian``): allowed iff ``|L| >= k`` and
    ``|R| >= k``."""

    def __init__(self, k: int) -> None:
        self.k = int(k)

    def allowed(self, stats: CutStats) -> np.ndarray:
        return (stats.left >= self.k) & (stats.right >= self.k)

    def describe(self) -> str:
        return f"k={self.k}"


class LDiversityCut(CutRule):
    """Frequency l-diversity Mondrian (paper 000 section 6.2.1,
    ``docs/theory/asap.md#mondrian``): allowed iff
    ``|L| >= l * c(L)`` and ``|R| >= l * c(R)``, ``c`` the subset-aware bounded count."""

    reads_halves_sa = True

    def __init__(self, l: float) -> None:  # noqa: E741
        self.l = float(l)

    def allowed(self, stats: CutStats) -> np.ndarray:
        if stats.bounded_left is None or stats.bounded_right is None:
            raise InternalError("LDiversityCut reads the halves' bounded counts: none given")
        return (stats.left + TOLERANCE >= self.l * stats.bounded_left) & (
            stats.right + TOLERANCE >= self.l * stats.bounded_right
        )

    def describe(self) -> str:
        return f"l={format_number(self.l)}"


class LookAheadCut(CutRule):
    """Mondrian+'s global look-ahead (paper 000, Algorithm 1 and Theorem 6.1;
    ``docs/theory/asap.md#mondrian-plus``): allowed iff ``|L| >= l * c(G)`` and ``|R| >= l * c(G)``,
    ``c(G)`` the bounded count of the group being cut (``S_max(G)`` when every SA value counts).

    The worst case, every copy of the most frequent value landing in one half, still leaves
    that half l-diverse: ``c(L) / |L| <= c(G) / |L| <= 1 / l`` (eq. 20). Unlike
    :class:`LDiversityCut` it never looks at the halves' SA, only at ``G``'s, and every group
    the recursion tests ends up a union of published groups, so the statistic is recomputable
    from the release (Theorem 5.3: algorithm-safe).
    """

    reads_group_sa = True

    def __init__(self, l: float) -> None:  # noqa: E741
        self.l = float(l)

    def allowed(self, stats: CutStats) -> np.ndarray:
        if stats.bounded is None:
            raise InternalError("LookAheadCut reads the group's bounded count: none given")
        need = self.l * stats.bounded - TOLERANCE
        return (stats.left >= need) & (stats.right >= need)

    def describe(self) -> str:
        return f"look-ahead l={format_number(self.l)}"


class AllCuts(CutRule):
    """Every one of ``rules`` must allow the cut (k-anonymity and l-diversity together)."""

    def __init__(self, rules: Sequence[CutRule]) -> None:
        self.rules = tuple(rules)
        self.reads_group_sa = any(r.reads_group_sa for r in self.rules)
        self.reads_halves_sa = any(r.reads_halves_sa for r in self.rules)
        self.reads_halves_hist = any(r.reads_halves_hist for r in self.rules)

    def allowed(self, stats: CutStats) -> np.ndarray:
        ok = np.ones(stats.size.shape, dtype=bool)
        for r in self.rules:
            ok &= r.allowed(stats)
        return ok

    def describe(self) -> str:
        return ", ".join(r.describe() for r in self.rules)


class EntropyLDiversityCut(CutRule):
    """Entropy l-diversity Mondrian (paper 004 Def. 4; ``docs/theory/composition.md#mondrian``):
    allowed iff both halves have SA entropy ``>= log l``."""

    reads_halves_sa = True
    reads_halves_hist = True

    def __init__(self, l: float) -> None:  # noqa: E741
        self.l = float(l)
        self.log_l = math.log(self.l)

    def allowed(self, stats: CutStats) -> np.ndarray:
        if stats.hist_left is None or stats.hist_right is None:
            raise InternalError("EntropyLDiversityCut reads the halves' histograms: none given")
        return (entropy_of_counts(stats.hist_left) + TOLERANCE >= self.log_l) & (
            entropy_of_counts(stats.hist_right) + TOLERANCE >= self.log_l
        )

    def describe(self) -> str:
        return f"entropy-l={format_number(self.l)}"


class TClosenessCut(CutRule):
    """t-closeness Mondrian (paper 004 Def. 5; ``docs/theory/composition.md#mondrian``): allowed iff
    both halves are within EMD ``t`` of the table's SA distribution ``totals``."""

    reads_halves_sa = True
    reads_halves_hist = True

    def __init__(self, t: float, totals: np.ndarray, ordered: bool) -> None:
        self.t = float(t)
        self.totals = np.asarray(totals)
        self.ordered = ordered

    def allowed(self, stats: CutStats) -> np.ndarray:
        if stats.hist_left is None or stats.hist_right is None:
            raise InternalError("TClosenessCut reads the halves' histograms: none given")
        near = self.t + TOLERANCE
        return (emd_to(stats.hist_left, self.totals, self.ordered) <= near) & (
            emd_to(stats.hist_right, self.totals, self.ordered) <= near
        )

    def describe(self) -> str:
        return f"t={format_number(self.t)}"


class FunctionCut(CutRule):
    """A plain callable ``f(CutStats) -> bool array`` as a rule (reads every SA statistic)."""

    reads_group_sa = True
    reads_halves_sa = True

    def __init__(self, fn: Callable[[CutStats], np.ndarray]) -> None:
        self.fn = fn

    def allowed(self, stats: CutStats) -> np.ndarray:
        return np.asarray(self.fn(stats), dtype=bool)

    def describe(self) -> str:
        return getattr(self.fn, "__name__", "custom rule")


def as_rule(rule: CutRule | Callable[[CutStats], np.ndarray]) -> CutRule:
    """``rule`` as a :class:`CutRule` (a callable is wrapped in :class:`FunctionCut`)."""
    return rule if isinstance(rule, CutRule) else FunctionCut(rule)
