"""The minimality attack for any per-class requirement, by enumerating possible worlds (paper
001 section 5.1; ``docs/theory/minimality.md#possible-worlds``).

The dynamic program of :mod:`kerckhoffs.attacks.minimality.credibility` needs the requirement to be
a bound on the count of one sensitive set. Paper 001 shows the attack on other models too:
recursive (c, l)-diversity (Table XI), t-closeness (Table XII), (k, e)-anonymity (Table XIII)
and personalized privacy (Table XV), and on multi-valued sensitive attributes (Table III).
This engine is exact for any predicate and exponential in the size of the EC; it is also the
oracle the DP is checked against on binary instances.

A generalized EC publishes a multiset of sensitive values; the classes of ``T^q`` that
generalize into it own ``slots`` of its tuples each (plus, under local recoding, ``kept``
tuples published ungeneralized). A *world* splits the published multiset into one
sub-multiset ``d_i`` per class, ``|d_i| = slots_i``; it stands for ``prod_i multinomial(
slots_i; d_i)`` equally likely assignments of values to tuples (paper section 4.1.2). With the
minimality knowledge, a world survives only if some class, specialized back (its ``d_i`` plus
its kept values), violates the requirement. The credibility of an individual of class ``i``
for a set ``s`` is the expected number of values of ``s`` in its full class over the
surviving worlds, divided by its size.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Collection, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from kerckhoffs.errors import ParameterError

__all__ = [
    "Violates",
    "WorldClass",
    "WorldsInference",
    "ke_anonymity",
    "personalized_privacy",
    "possible_worlds",
    "recursive_cl_diversity",
    "simple_l_diversity",
    "t_closeness",
]


@dataclass(frozen=True)
class WorldClass:
    """One class of ``T^q`` that generalizes into the EC.

    ``size``: its individuals (``n_i``); ``slots``: its tuples inside the generalized EC;
    ``kept``: the SA values of its tuples published ungeneralized (local recoding); ``guards``:
    per individual, the set of SA values under its guarding node (personalized privacy;
    ``None`` = no constraint), when the requirement needs it.
    """

    size: int
    slots: int
    kept: tuple[Hashable, ...] = ()
    guards: tuple[frozenset | None, ...] = ()

    def __post_init__(self) -> None:
        if self.slots < 0 or self.size != self.slots + len(self.kept):
            raise ParameterError(
                f"a class of {self.size} individuals must hold its {self.slots} generalized "
                f"and {len(self.kept)} kept tuples exactly"
            )


Violates = Callable[[Counter, WorldClass], bool]
"""``violates(values, cls)``: the class, holding the SA multiset ``values``, breaks the
requirement (the negation of the model's predicate,
``docs/theory/minimality.md#requirements``)."""


@dataclass(frozen=True)
class WorldsInference:
    """Result of :func:`possible_worlds` (exact).

    ``credibility[i]``: credibility of an individual of class ``i`` for the target set;
    ``expected[i]``: expected number of target values in its full class; ``weight``: number of
    surviving assignments; ``worlds``: surviving splits; ``no_inference``: nothing survived the
    minimality knowledge, so the no-exclusion values are returned.
    """

    credibility: tuple[Fraction, ...]
    expected: tuple[Fraction, ...]
    weight: int
    worlds: int
    no_inference: bool


def _multinomial(counts: Sequence[int]) -> int:
    total = sum(counts)
    out = math.factorial(total)
    for c in counts:
        out //= math.factorial(c)
    return out


def _vectors(remaining: list[int], total: int, start: int = 0) -> Iterator[list[int]]:
    """Every count vector ``v <= remaining`` (componentwise) with ``sum v = total``."""
    if start == len(remaining) - 1:
        if total <= remaining[start]:
            yield [total]
        return
    rest = sum(remaining[start + 1 :])
    for c in range(max(0, total - rest), min(remaining[start], total) + 1):
        for tail in _vectors(remaining, total - c, start + 1):
            yield [c, *tail]


def possible_worlds(
    classes: Sequence[WorldClass],
    published: Sequence[Hashable],
    violates: Violates,
    target: Collection[Hashable] | Callable[[Hashable], bool],
    *,
    minimality: bool = True,
    max_worlds: int = 2_000_000,
) -> WorldsInference:
    """Exact credibility of each class for the ``target`` set (a collection of SA values or a
    predicate on one value), over the splits of the ``published`` multiset of the generalized
    EC (module docstring). With ``minimality=False`` nothing is excluded (Theorem 1). When no
    world survives (no class can violate: the first edge case of
    ``docs/theory/minimality.md#attack-edge-cases``) the no-exclusion values are returned with
    ``no_inference``. More than ``max_worlds`` splits raise
    :class:`~kerckhoffs.errors.ParameterError`.
    """
    if not classes:
        raise ParameterError("possible_worlds: needs at least one class")
    if sum(c.slots for c in classes) != len(published):
        raise ParameterError(
            f"possible_worlds: the classes hold {sum(c.slots for c in classes)} generalized "
            f"tuples but the EC publishes {len(published)} values"
        )
    in_target = target if callable(target) else (lambda v, t=frozenset(target): v in t)
    counts = Counter(published)
    values = list(counts)
    avail = [counts[v] for v in values]
    hits = [1 if in_target(v) else 0 for v in values]
    kept_hits = [sum(1 for v in c.kept if in_target(v)) for c in classes]
    kept = [Counter(c.kept) for c in classes]
    u = len(classes)
    weight = 0
    worlds = 0
    acc = [0] * u
    w_all = 0
    acc_all = [0] * u
    seen = 0

    def rec(i: int, remaining: list[int], w: int, split: list[list[int]]) -> None:
        nonlocal weight, worlds, w_all, seen
        if i == u:
            seen += 1
            if seen > max_worlds:
                raise ParameterError(f"possible_worlds: more than {max_worlds} splits")
            y = [sum(h * c for h, c in zip(hits, vec, strict=True)) for vec in split]
            w_all += w
            for j in range(u):
                acc_all[j] += w * y[j]
            if minimality:
                bad = False
                for j, vec in enumerate(split):
                    full = kept[j].copy()
                    for v, c in zip(values, vec, strict=True):
                        if c:
                            full[v] += c
                    if violates(full, classes[j]):
                        bad = True
                        break
                if not bad:
                    return
            weight += w
            worlds += 1
            for j in range(u):
                acc[j] += w * y[j]
            return
        for vec in _vectors(remaining, classes[i].slots):
            left = [r - c for r, c in zip(remaining, vec, strict=True)]
            rec(i + 1, left, w * _multinomial(vec), [*split, vec])

    rec(0, avail, 1, [])
    no_inf = weight == 0
    if no_inf:
        weight, acc = w_all, acc_all
    expected = tuple(Fraction(a, weight) + k for a, k in zip(acc, kept_hits, strict=True))
    cred = tuple(e / c.size for e, c in zip(expected, classes, strict=True))
    return WorldsInference(cred, expected, weight, worlds, no_inf)


# -- requirements (the negation of each model's predicate, docs/theory/minimality.md#requirements)
def simple_l_diversity(
    l: float,  # noqa: E741
    sets: Sequence[Collection[Hashable]] | None = None,
) -> Violates:
    """Simplified l-diversity: the class violates when it holds more than ``floor(n / l)``
    values of some sensitive set; ``sets=None``: every value is its own set (Table III)."""

    def violates(values: Counter, cls: WorldClass) -> bool:
        n = sum(values.values())
        cap = math.floor(n / l + 1e-9)
        if sets is None:
            return max(values.values(), default=0) > cap
        return any(sum(values[v] for v in s) > cap for s in sets)

    return violates


def recursive_cl_diversity(c: float, l: int) -> Violates:  # noqa: E741
    """Recursive (c, l)-diversity (``docs/theory/minimality.md#requirements``): with counts
    ``r_1 >= r_2 >= ...``, satisfied iff ``r_1 < c (r_l + ... + r_q)``; fewer than ``l`` distinct
    values violate."""

    def violates(values: Counter, cls: WorldClass) -> bool:
        r = sorted((x for x in values.values() if x), reverse=True)
        if len(r) < l:
            return True
        return not r[0] < c * sum(r[l - 1 :])

    return violates


def t_closeness(t: float, table_distribution: Mapping[Hashable, Fraction | float]) -> Violates:
    """t-closeness with the variational distance of paper 001 (``1/2 sum |p_v - q_v|``, EMD with
    equal ground distance) to the whole table's SA distribution ``Q``."""
    q = {v: Fraction(p) for v, p in table_distribution.items()}
    bound = Fraction(t)

    def violates(values: Counter, cls: WorldClass) -> bool:
        n = sum(values.values())
        keys = set(q) | set(values)
        dist = sum(abs(Fraction(values.get(v, 0), n) - q.get(v, Fraction(0))) for v in keys) / 2
        return dist > bound

    return violates


def ke_anonymity(k: int, e: float) -> Violates:
    """(k, e)-anonymity for a numeric SA (Zhang et al. 2007): at least ``k`` tuples and a
    range ``max - min`` of at least ``e``."""

    def violates(values: Counter, cls: WorldClass) -> bool:
        n = sum(values.values())
        present = [v for v, x in values.items() if x]
        return n < k or max(present) - min(present) < e

    return violates


def personalized_privacy(l: float) -> Violates:  # noqa: E741
    """Personalized privacy as paper 001 uses it (Table XV): for every individual of the class
    with a guarding node, at most a ``1/l`` fraction of the class's values lies under it
    (``WorldClass.guards``: one value set per individual, ``None`` = no constraint)."""

    def violates(values: Counter, cls: WorldClass) -> bool:
        n = sum(values.values())
        return any(g is not None and sum(values[v] for v in g) * l > n for g in cls.guards)

    return violates
