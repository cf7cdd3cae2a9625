"""The three publishers of paper 002 on one table: naive, inclusive and exclusive
(``docs/theory/disclosure-sets.md#naive``, ``#inclusive``, ``#exclusive``; our
implementations: ``#inclusive-algorithm``, ``#exclusive-algorithm``, ``#naive-algorithm``).

Each takes the candidate sequence, the secret table's SA codes (one per row) and a CHK, and
returns an :class:`Outcome`: the released index (0-based, ``None`` = release nothing, φ) and
the disclosure set that decided, i.e. what the adversary who knows the publisher's algorithm
would know about each person.

- **naive** (``docs/theory/disclosure-sets.md#naive``): the first ``i`` with ``CHK(PER(g_i(T)))``.
  Unsafe: the adversary's true knowledge is ``{X in PER(G_i) : naive(X) = i}``, reported as its
  disclosure set, which may fail CHK (the running example's ``g2`` release: ``E`` and ``F``
  certainly have gastritis, c4).
- **inclusive** (paper 002 Table 3; ``docs/theory/disclosure-sets.md#inclusive``): the first ``i``
  whose disclosure set ``DS_incl(i, s) = {X in PER(i, s) : G_incl(X; g_1..g_{i-1}) = φ}`` passes
  CHK. Recursive: every instance re-runs the truncated algorithm. Memoized on ``(i, signature)``,
  which is sound because ``DS_incl`` depends only on its arguments
  (``docs/theory/disclosure-sets.md#inclusive-algorithm``); ``memo=False`` recomputes every
  disclosure set from scratch, the exponential cost the paper states for the inclusive strategy
  (``docs/theory/disclosure-sets.md#complexity``).
- **exclusive** (paper 002 Table 5; ``docs/theory/disclosure-sets.md#exclusive``): stop at the first
  ``i`` with ``CHK(PER(g_i(T)))``; release it iff ``DS_excl(i, s) = {X in PER(i, s) : no j < i has
  CHK(PER(g_j(X)))}`` passes CHK, else release nothing (do not try later candidates). Not recursive:
  the filter is the closed-form check, vectorized over the PER instances. ``DS_excl`` equals the
  naive adversary's knowledge (the key observation of ``docs/theory/disclosure-sets.md#exclusive``),
  so the exclusive publisher is "naive, released only if safe against an adversary who knows it".

Every PER enumeration is bounded by ``limit`` (raises
:class:`~kerckhoffs.disclosure.per.TooManyInstances`, fail closed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from kerckhoffs.disclosure.chk import Chk, person_counts
from kerckhoffs.disclosure.per import (
    DEFAULT_LIMIT,
    enumerate_checked,
    n_values,
    per_size,
    signatures,
)
from kerckhoffs.disclosure.sequence import GeneralizationSequence
from kerckhoffs.errors import ParameterError


@dataclass(frozen=True, eq=False)
class Step:
    """One candidate whose disclosure set a strategy computed.

    ``index`` (0-based), ``per_size`` (``|PER|``), ``per_passes`` (closed-form CHK on PER),
    ``disclosure_size``, ``counts`` (``int64 [n, n_sa]``: in how many instances of the
    disclosure set each person takes each value) and ``passes`` (CHK on the disclosure set).
    """

    index: int
    per_size: int
    per_passes: bool
    disclosure_size: int
    counts: np.ndarray
    passes: bool

    @property
    def max_share(self) -> tuple[Fraction, ...]:
        """Per person, the largest share of any one value over the disclosure set (exact)."""
        return max_shares(self.counts, self.disclosure_size)

    def share(self, person: int, value: int) -> Fraction:
        """The share of the disclosure set in which ``person`` takes ``value`` (paper 002's
        ``ratio(r, v)``: ``docs/theory/disclosure-sets.md#chk``)."""
        if not self.disclosure_size:
            return Fraction(0)
        return Fraction(int(self.counts[person, value]), self.disclosure_size)


@dataclass(frozen=True, eq=False)
class Outcome:
    """What one strategy does on one table.

    ``released``: index of the released generalization (0-based: 0 is the paper's g1) or None
    (release nothing, φ). ``disclosure_size`` / ``max_share``: the disclosure set of the *deciding*
    candidate (the released one; else the last one whose disclosure set the strategy computed; ``0``
    / ``()`` when none) and, per person, the largest share of any value over it, exact.
    ``instances``: PER instances enumerated during the run (the cost measure of
    ``docs/theory/disclosure-sets.md#complexity``). ``steps``: the top-level candidates whose
    disclosure sets were computed, in order (the inclusive recursion's inner sets are not listed).
    """

    strategy: str
    released: int | None
    disclosure_size: int
    max_share: tuple[Fraction, ...]
    instances: int
    steps: tuple[Step, ...] = field(default=())

    @property
    def safe(self) -> bool:
        """CHK holds on the released generalization's disclosure set (always for inclusive
        and exclusive; the naive publisher may fail it). Releasing nothing is safe (the
        information leaked by φ is out of scope: the paper ignores that publishing nothing also
        leaks, and so do we, ``docs/theory/disclosure-sets.md#err-phi-leak``)."""
        return self.released is None or self.steps[-1].passes


def max_shares(counts: np.ndarray, size: int) -> tuple[Fraction, ...]:
    """Per row of ``counts [n, n_sa]``, ``max / size`` as exact fractions (``()`` if empty)."""
    if not size:
        return ()
    return tuple(Fraction(int(c), size) for c in np.asarray(counts).max(axis=1))


class _Run:
    """Shared state of one publisher run: the table's domain, the CHK, the bound, the counter
    of enumerated instances and the inclusive memo."""

    def __init__(self, seq: GeneralizationSequence, sa: np.ndarray, chk: Chk, limit: int) -> None:
        self.seq = seq
        self.x = seq.check_sa(sa)
        self.n_sa = n_values(self.x)
        self.chk = chk
        self.limit = limit
        self.instances = 0
        self.memo: dict[tuple[int, bytes], Step] = {}

    def sig(self, i: int) -> np.ndarray:
        return signatures(self.seq, i, self.x[None, :], self.n_sa)[0]

    def per(self, i: int, sig: np.ndarray) -> np.ndarray:
        per = enumerate_checked(self.seq, i, sig, self.limit)
        self.instances += per.shape[0]
        return per

    def per_pass(self, i: int, tables: np.ndarray) -> np.ndarray:
        """Closed-form CHK on ``PER(g_i(X))`` for every table ``X`` (bool per table)."""
        return np.asarray(self.chk.groups_pass(signatures(self.seq, i, tables, self.n_sa)))

    def step(self, i: int, sig: np.ndarray, per: np.ndarray, keep: np.ndarray) -> Step:
        ds = per[keep]
        counts = person_counts(ds, self.n_sa)
        passes = bool(ds.shape[0]) and bool(self.chk.people_pass(counts))
        return Step(
            i,
            per_size(self.seq, i, sig),
            bool(self.chk.groups_pass(sig)),
            int(ds.shape[0]),
            counts,
            passes,
        )

    # -- exclusive / naive: DS_excl (docs/theory/disclosure-sets.md#exclusive-algorithm) -----
    def ds_exclusive(self, i: int, sig: np.ndarray) -> Step:
        per = self.per(i, sig)
        keep = np.ones(per.shape[0], dtype=bool)
        for j in range(i):
            keep &= ~self.per_pass(j, per)
        return self.step(i, sig, per, keep)

    # -- inclusive: DS_incl (docs/theory/disclosure-sets.md#inclusive-algorithm) -------------
    def ds_inclusive(self, i: int, sig: np.ndarray, memo: bool) -> Step:
        key = (i, sig.tobytes())
        if memo and key in self.memo:
            return self.memo[key]
        per = self.per(i, sig)
        alive = np.ones(per.shape[0], dtype=bool)  # G_incl(X; g_1..g_j) is still φ
        for j in range(i):
            rows = np.flatnonzero(alive)
            if not rows.size:
                break
            sigs = signatures(self.seq, j, per[rows], self.n_sa)
            # DS_incl(g_1(X)) = PER(g_1(X)) (tested: the first disclosure sets of both
            # strategies equal PER): the closed form decides
            if j == 0:
                alive[rows[np.asarray(self.chk.groups_pass(sigs))]] = False
            elif memo:
                flat = sigs.reshape(rows.size, -1)
                uniq, inv = np.unique(flat, axis=0, return_inverse=True)
                ok = np.array(
                    [self.ds_inclusive(j, u.reshape(sigs.shape[1:]), memo).passes for u in uniq]
                )
                alive[rows[ok[inv.ravel()]]] = False
            else:  # the inclusive cost baseline (paper): every instance re-runs the recursion
                ok = np.array([self.ds_inclusive(j, s, memo).passes for s in sigs])
                alive[rows[ok]] = False
        out = self.step(i, sig, per, alive)
        if memo:
            self.memo[key] = out
        return out


def naive(
    seq: GeneralizationSequence,
    sa: np.ndarray | Sequence[int],
    chk: Chk,
    limit: int = DEFAULT_LIMIT,
) -> Outcome:
    """The naive publisher (``docs/theory/disclosure-sets.md#naive``): release the first
    candidate whose PER passes CHK.

    The reported disclosure set is the adversary's true knowledge ``{X in PER(G_i) :
    naive(X) = i}`` (= ``DS_excl``); :attr:`Outcome.safe` says whether CHK holds on it.

    >>> from kerckhoffs.disclosure.chk import PAPER_CHK
    >>> seq = GeneralizationSequence.from_labels([[0, 0, 1, 1], [0, 0, 0, 0]])
    >>> naive(seq, [0, 1, 2, 3], PAPER_CHK).released
    0
    """
    run = _Run(seq, np.asarray(sa), chk, limit)
    for i in range(len(seq)):
        sig = run.sig(i)
        if chk.groups_pass(sig):
            step = run.ds_exclusive(i, sig)
            return _outcome("naive", i, step, run)
    return Outcome("naive", None, 0, (), run.instances)


def exclusive(
    seq: GeneralizationSequence,
    sa: np.ndarray | Sequence[int],
    chk: Chk,
    limit: int = DEFAULT_LIMIT,
) -> Outcome:
    """The exclusive publisher (paper 002 Table 5 ``G_e``;
    ``docs/theory/disclosure-sets.md#exclusive``): at the first candidate whose PER passes CHK,
    release it if its disclosure set ``DS_excl`` passes CHK too, else release nothing. Later
    candidates are never examined (a tested property:
    ``docs/theory/disclosure-sets.md#properties``)."""
    run = _Run(seq, np.asarray(sa), chk, limit)
    for i in range(len(seq)):
        sig = run.sig(i)
        if chk.groups_pass(sig):
            step = run.ds_exclusive(i, sig)
            return _outcome("exclusive", i if step.passes else None, step, run)
    return Outcome("exclusive", None, 0, (), run.instances)


def inclusive(
    seq: GeneralizationSequence,
    sa: np.ndarray | Sequence[int],
    chk: Chk,
    memo: bool = True,
    limit: int = DEFAULT_LIMIT,
) -> Outcome:
    """The inclusive publisher (paper 002 Table 3 ``G`` and ``DS``;
    ``docs/theory/disclosure-sets.md#inclusive``): release the first candidate whose
    disclosure set ``DS_incl`` passes CHK, else nothing.

    ``memo`` caches ``DS_incl`` and its verdict per ``(i, signature)`` (results identical:
    the tests check that memoization changes nothing); ``memo=False`` recomputes them for
    every instance (cost experiment). In both modes the first candidate's disclosure set is
    its PER (tested: the first disclosure sets of both strategies equal PER), so inside the
    recursion its CHK is the closed form and its PER is not enumerated.
    """
    run = _Run(seq, np.asarray(sa), chk, limit)
    steps: list[Step] = []
    for i in range(len(seq)):
        step = run.ds_inclusive(i, run.sig(i), memo)
        steps.append(step)
        if step.passes:
            return _outcome("inclusive", i, step, run, steps)
    if not steps:
        return Outcome("inclusive", None, 0, (), run.instances)
    return _outcome("inclusive", None, steps[-1], run, steps)


def disclosure_set(
    seq: GeneralizationSequence,
    sa: np.ndarray | Sequence[int],
    i: int,
    chk: Chk,
    strategy: str = "exclusive",
    memo: bool = True,
    limit: int = DEFAULT_LIMIT,
) -> Step:
    """The disclosure set of the table ``sa``'s generalization under candidate ``i``, as the
    adversary of ``strategy`` computes it, whether or not the strategy would reach ``i``
    (the paper's examples tabulate them all:
    ``docs/theory/disclosure-sets.md#worked-examples``): ``"exclusive"`` (``DS_excl``, also
    the naive publisher's true knowledge) or ``"inclusive"`` (``DS_incl``)."""
    run = _Run(seq, np.asarray(sa), chk, limit)
    if not 0 <= i < len(seq):
        raise ParameterError(f"generalization index {i} outside 0..{len(seq) - 1}")
    if strategy == "exclusive":
        return run.ds_exclusive(i, run.sig(i))
    if strategy == "inclusive":
        return run.ds_inclusive(i, run.sig(i), memo)
    raise ParameterError(f"strategy must be exclusive or inclusive, got {strategy!r}")


def _outcome(
    strategy: str, released: int | None, step: Step, run: _Run, steps: list[Step] | None = None
) -> Outcome:
    return Outcome(
        strategy,
        released,
        step.disclosure_size,
        step.max_share,
        run.instances,
        tuple(steps) if steps is not None else (step,),
    )
