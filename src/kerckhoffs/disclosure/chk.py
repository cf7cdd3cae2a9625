"""CHK, the privacy property of paper 002: a predicate on a *set* of possible instances
(``docs/theory/disclosure-sets.md#chk``; our implementations: ``#chk-implementations``),
pluggable.

Every instance of a set is equally likely (the paper assumes a uniform prior over the
distinct instances without saying so; we make it explicit:
``docs/theory/disclosure-sets.md#err-uniform``), so what an adversary holding the
set knows about person ``r`` is the share of the instances in which ``r`` takes each value:
the **per-person value counts** ``int64 [n, n_sa]``. A CHK is a rule on such a count matrix,
applied to every row (person) of it:

- on a **set of instances** (:func:`chk_instances`, :meth:`Chk.people_pass`): the rows are
  the people, the counts are over the instances. The empty set has all-zero counts and
  **fails** (the paper leaves CHK of the empty set undefined; we define it as failing, a case
  the publishers never reach: ``docs/theory/disclosure-sets.md#err-empty-chk``).
- on a **generalization** in closed form (:meth:`Chk.groups_pass`,
  ``docs/theory/disclosure-sets.md#chk-implementations``): in ``PER(G)`` person ``r`` of group ``g``
  takes value ``v`` in exactly the share ``n_{g,v} / |g|`` of the instances
  (``docs/theory/disclosure-sets.md#per``), so a CHK that depends only on shares gives the same
  verdict on the group's count row as on the person's. ``groups_pass`` therefore applies the same
  rule to the signature's group rows: no enumeration.

Implementations (exact integer arithmetic, no floating point,
``docs/theory/disclosure-sets.md#chk-implementations``):

- :class:`RecursiveCL`: recursive (c, l)-diversity, ``n_1 < c * (n_l + ... + n_m)``, strict.
  The paper's recursive (2,2)-diversity is ``RecursiveCL(2, 2)`` (our model
  ``recursive-cl=2,2``), equivalent to "max share < 2/3"
  (``docs/theory/disclosure-sets.md#chk``).
- :class:`MaxShare`: "no person takes any value in at least ``threshold`` of the instances"
  (strict ``<``), or at most (``strict=False``, frequency l-diversity's ``|G| >= l * max``).
- :class:`DistinctL`: every person takes at least ``l`` distinct values over the set.

:func:`chk_from_model` builds one from the toolkit's model objects.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Protocol, runtime_checkable

import numpy as np

from kerckhoffs.errors import ParameterError


@runtime_checkable
class Chk(Protocol):
    """A privacy property on sets of equally likely instances
    (``docs/theory/disclosure-sets.md#data-model``).

    Both methods take count matrices ``[..., rows, n_sa]`` (any leading batch axes) and return
    one bool per batch entry (True: every row passes). ``people_pass`` must return False for an
    all-zero matrix (the empty set). ``groups_pass`` is the closed form on ``PER`` and must
    equal ``people_pass`` of the enumerated ``PER`` (a tested property:
    ``docs/theory/disclosure-sets.md#properties``); for a rule on value *shares*
    it is the same function.
    """

    @property
    def name(self) -> str:
        """A short display name (``recursive-cl=2,2``)."""
        ...

    def people_pass(self, counts: np.ndarray) -> np.ndarray: ...

    def groups_pass(self, counts: np.ndarray) -> np.ndarray: ...


class ShareRule:
    """Base for CHKs that depend only on each row's value shares: ``groups_pass`` is ``people_pass``
    (closed form on PER, ``docs/theory/disclosure-sets.md#per``), and the subclass writes
    :meth:`rows_pass` (one bool per row, on integer counts)."""

    @property
    def name(self) -> str:
        return type(self).__name__

    def rows_pass(self, counts: np.ndarray) -> np.ndarray:
        """``int64 [..., rows, n_sa]`` -> ``bool [..., rows]``; an all-zero row fails."""
        raise NotImplementedError

    def people_pass(self, counts: np.ndarray) -> np.ndarray:
        c = np.asarray(counts, dtype=np.int64)
        return np.asarray(self.rows_pass(c).all(axis=-1))

    def groups_pass(self, counts: np.ndarray) -> np.ndarray:
        return self.people_pass(counts)

    def __repr__(self) -> str:
        return self.name


@dataclass(frozen=True, repr=False)
class RecursiveCL(ShareRule):
    """Recursive (c, l)-diversity per row: with the row's counts sorted ``n_1 >= n_2 >= ...``,
    pass iff ``n_1 < c * (n_l + ... + n_m)`` (strict; ``docs/theory/disclosure-sets.md#chk``). Fewer
    than ``l`` distinct values -> empty tail -> fail. ``c`` is exact (a Fraction); the comparison is
    ``n_1 * den < num * tail`` on integers.

    >>> chk = RecursiveCL(2, 2)
    >>> chk.people_pass(np.array([[2, 1, 0], [1, 1, 1]])).item()   # 2/3 is not < 2/3
    False
    >>> chk.people_pass(np.array([[2, 1, 1]])).item()
    True
    """

    c: Fraction = Fraction(2)
    l: int = 2  # noqa: E741

    def __post_init__(self) -> None:
        c = Fraction(self.c)
        if c <= 0:
            raise ParameterError(f"c must be positive, got {self.c}")
        if int(self.l) != self.l or self.l < 2:
            raise ParameterError(f"recursive l must be an integer >= 2, got {self.l}")
        object.__setattr__(self, "c", c)
        object.__setattr__(self, "l", int(self.l))

    @property
    def name(self) -> str:
        return f"recursive-cl={self.c},{self.l}"

    def rows_pass(self, counts: np.ndarray) -> np.ndarray:
        r = -np.sort(-counts, axis=-1)
        tail = r[..., self.l - 1 :].sum(axis=-1)
        c = Fraction(self.c)
        return np.asarray(r[..., 0] * c.denominator < c.numerator * tail)


@dataclass(frozen=True, repr=False)
class MaxShare(ShareRule):
    """Pass iff no row takes any value in ``threshold`` or more of the instances
    (``strict=True``: share < threshold, the paper's strict check:
    ``docs/theory/disclosure-sets.md#chk``), or in more than ``threshold``
    (``strict=False``: share <= threshold). An all-zero row (empty set) fails."""

    threshold: Fraction = Fraction(2, 3)
    strict: bool = True

    def __post_init__(self) -> None:
        t = Fraction(self.threshold)
        if not 0 < t <= 1:
            raise ParameterError(f"the share threshold must be in (0, 1], got {self.threshold}")
        object.__setattr__(self, "threshold", t)

    @property
    def name(self) -> str:
        return f"max-share{'<' if self.strict else '<='}{self.threshold}"

    def rows_pass(self, counts: np.ndarray) -> np.ndarray:
        top = counts.max(axis=-1)
        total = counts.sum(axis=-1)
        t = Fraction(self.threshold)
        lhs, rhs = top * t.denominator, t.numerator * total
        ok = lhs < rhs if self.strict else lhs <= rhs
        return np.asarray(ok & (total > 0))


@dataclass(frozen=True, repr=False)
class DistinctL(ShareRule):
    """Every row takes at least ``l`` distinct values (distinct l-diversity on the set)."""

    l: int = 2  # noqa: E741

    def __post_init__(self) -> None:
        if int(self.l) != self.l or self.l < 1:
            raise ParameterError(f"distinct l must be a positive integer, got {self.l}")

    @property
    def name(self) -> str:
        return f"distinct-l={self.l}"

    def rows_pass(self, counts: np.ndarray) -> np.ndarray:
        return np.asarray((counts > 0).sum(axis=-1) >= max(self.l, 1))


@dataclass(frozen=True, repr=False)
class AllOf(ShareRule):
    """Every share rule passes (the CHK of several l-diversity models at once)."""

    rules: tuple[ShareRule, ...]

    @property
    def name(self) -> str:
        return " and ".join(r.name for r in self.rules)

    def rows_pass(self, counts: np.ndarray) -> np.ndarray:
        out = np.ones(counts.shape[:-1], dtype=bool)
        for r in self.rules:
            out &= r.rows_pass(counts)
        return out


def least_group_size(chk: Chk) -> int:
    """The fewest rows a group needs for ``chk`` to pass on *any* set of tables consistent
    with a partition: a group with fewer fails on every such set, whatever the sensitive
    values. 1 for a CHK this function does not know (no claim).

    Why: in every table of a PER set (and of any subset of it, such as a disclosure set) a
    group of ``s`` rows holds the same multiset of ``s`` values, so each of its people takes
    at most ``s`` distinct values over the set and some value in at least ``1/s`` of it.
    Hence :class:`DistinctL` and :class:`RecursiveCL` (an empty tail below ``l`` distinct
    values) need ``s >= l``, and :class:`MaxShare` needs ``1/s`` below (or at most) its
    threshold. A conjunction needs the largest of its rules' sizes.

    >>> least_group_size(PAPER_CHK), least_group_size(MaxShare(Fraction(1, 3), strict=False))
    (2, 3)
    """
    if isinstance(chk, DistinctL | RecursiveCL):
        return max(int(chk.l), 1)
    if isinstance(chk, MaxShare):
        t = chk.threshold  # smallest s with 1/s < t (strict) or 1/s <= t
        inv = Fraction(1) / t
        return int(inv) + 1 if chk.strict else math.ceil(inv)
    if isinstance(chk, AllOf):
        return max((least_group_size(r) for r in chk.rules), default=1)
    return 1


def person_counts(instances: np.ndarray, n_sa: int) -> np.ndarray:
    """Per-person value counts over a set of instances ``int [m, n]`` -> ``int64 [n, n_sa]``
    (one bincount)."""
    x = np.asarray(instances, dtype=np.int64)
    m, n = x.shape
    if m == 0:
        return np.zeros((n, n_sa), dtype=np.int64)
    cell = np.arange(n, dtype=np.int64)[None, :] * n_sa + x
    return np.bincount(cell.ravel(), minlength=n * n_sa).reshape(n, n_sa)


def chk_instances(chk: Chk, instances: np.ndarray, n_sa: int) -> bool:
    """CHK on a set of distinct, equally likely instances ``int [m, n]`` (the enumerated
    form of ``docs/theory/disclosure-sets.md#chk-implementations``); False for the empty set."""
    x = np.asarray(instances)
    if x.shape[0] == 0:
        return False
    return bool(chk.people_pass(person_counts(x, n_sa)))


def chk_generalization(chk: Chk, sig: np.ndarray) -> bool:
    """CHK on ``PER(G)`` in closed form from the signature ``[groups, n_sa]`` (the closed
    form of ``docs/theory/disclosure-sets.md#chk-implementations``)."""
    return bool(chk.groups_pass(np.asarray(sig, dtype=np.int64)))


def chk_from_model(model: object) -> Chk:
    """The CHK of one of our privacy models, applied per person over a set of instances:

    - ``RecursiveCLDiversity(c, l)`` -> :class:`RecursiveCL` (same rule, strict, with ``c``
      read as the exact fraction of its decimal spelling);
    - ``LDiversity(l)`` (frequency form ``|G| >= l * max``) -> ``MaxShare(1/l, strict=False)``;
    - ``DistinctLDiversity(l)`` -> :class:`DistinctL`.

    Any other model is refused with one line (it is not a rule on per-person value shares).
    """
    from kerckhoffs.models.l_diversity import (
        DistinctLDiversity,
        LDiversity,
        RecursiveCLDiversity,
    )

    if isinstance(model, RecursiveCLDiversity):
        return RecursiveCL(Fraction(repr(model.c)), model.l)
    if isinstance(model, LDiversity):
        return MaxShare(1 / Fraction(repr(model.l)), strict=False)
    if isinstance(model, DistinctLDiversity):
        return DistinctL(model.l)
    raise ParameterError(
        f"no disclosure-set CHK for the model {getattr(model, 'name', model)!r}: use "
        "recursive (c,l)-diversity, l-diversity or distinct l-diversity"
    )


PAPER_CHK = RecursiveCL(Fraction(2), 2)
"""The paper's CHK: recursive (2,2)-diversity, i.e. every share < 2/3
(``docs/theory/disclosure-sets.md#chk``)."""
