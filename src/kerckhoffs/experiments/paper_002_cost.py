"""The cost study E-B of paper 002 (its section 3 recurrence for the inclusive strategy
against the exclusive strategy's polynomial cost): worst-case tables, the recurrence evaluated
on a table, and the exact number of PER instances the non-memoized inclusive publisher would
enumerate, computed without running it. The measure and the experiments are in
:mod:`.paper_002_exclusive`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from kerckhoffs.disclosure import (
    PAPER_CHK,
    Chk,
    GeneralizationSequence,
    enumerate_per,
    per_size,
    person_counts,
    signature,
    signatures,
)
from kerckhoffs.errors import ParameterError
from kerckhoffs.experiments.paper_002_random import random_sequence, random_table


def worst_case_instance(
    rng: np.random.Generator,
    n_rows: int,
    n_funcs: int,
    n_values: int,
    max_group: int,
    tries: int = 10_000,
) -> tuple[GeneralizationSequence, np.ndarray]:
    """A random (sequence, table) whose naive index is the **last** generalization (the sequence
    with the largest feasible groups, :func:`random_sequence` ``coarsest``): every earlier PER fails
    CHK, so (CHK being a share rule with l = 2, whose lemma is in
    ``docs/theory/disclosure-sets.md#chk``) every earlier disclosure set fails too and both safe
    strategies compute a disclosure set at every level, the worst case of the inclusive strategy's
    recurrence (``docs/theory/disclosure-sets.md#complexity``)."""
    for _ in range(tries):
        seq = random_sequence(rng, n_rows, n_funcs, max_group, coarsest=True)
        x = random_table(rng, n_rows, n_values)
        k = int(x.max()) + 1
        passes = [bool(PAPER_CHK.groups_pass(signature(seq, i, x, k))) for i in range(n_funcs)]
        if passes[-1] and not any(passes[:-1]):
            return seq, x
    raise ParameterError(f"no worst-case table found in {tries} tries")


def recurrence_estimate(seq: GeneralizationSequence, x: np.ndarray) -> int:
    """Paper 002 section 3's cost recurrence for the inclusive strategy without memoization,
    ``x_i = (sum_{j<i} x_j) * |PER(G_i)|``, solved (``S_n = |G_0| * prod_{j=2}^{n} (1 +
    y_j)``) and evaluated with this table's own PER sizes ``y_j = |PER(g_j(x))|``, in the
    paper's cost units (``x_1 = |G_0|``, so not an instance count at n = 1).

    Not an upper bound on the recursion's work: the recursion calls level ``j`` on the
    signatures of other instances, whose PER may be larger than the table's own (measured:
    one 5-generalization table of E-B needs 2.02e11 instances against 1.89e11 here). The
    paper's own worst case, ``O(|PER(G_max)|^n)`` with ``G_max`` the generalization with the
    most possible instances, is a bound; the table's own sizes do not give one.
    :func:`no_memo_instances` gives the exact count."""
    ys = [per_size(seq, j, signature(seq, j, x)) for j in range(len(seq))]
    return int(x.size) * math.prod(1 + y for y in ys[1:])


def no_memo_instances(
    seq: GeneralizationSequence, sa: np.ndarray | Sequence[int], chk: Chk = PAPER_CHK
) -> tuple[int, int | None]:
    """The exact number of PER instances the inclusive publisher **without** memoization
    (:func:`~kerckhoffs.disclosure.inclusive` with ``memo=False``, the algorithm of paper
    002's Table 3 that section 3 analyses) enumerates on ``sa``, and the index it releases
    (0-based, None = nothing), without running it.

    The non-memoized recursion computes ``DS_incl(i, s)`` afresh at every call, so its work
    is ``W(i, s) = |PER(i, s)| + sum_{j=1}^{i-1} sum_{X alive at j} W(j, g_j(X))``: every
    instance of ``PER(i, s)`` not yet released by an earlier level re-runs level ``j`` on its
    own signature (level 0 is decided in closed form, its disclosure set being its PER set, and
    enumerates nothing). ``W``
    and the verdict depend only on ``(i, s)``, so they are computed once per distinct
    signature and multiplied by how often it occurs: the count of an exponential run in the
    time of the memoized one. Equal to ``Outcome.instances`` of the run wherever the run is
    feasible (tested); E-B reports it where the run would take hours."""
    x = np.asarray(sa, dtype=np.int64)
    n_sa = int(x.max()) + 1
    seen: dict[tuple[int, bytes], tuple[int, bool]] = {}

    def work(i: int, sig: np.ndarray) -> tuple[int, bool]:
        key = (i, sig.tobytes())
        if key in seen:
            return seen[key]
        per = enumerate_per(seq, i, sig)
        total = int(per.shape[0])
        alive = np.ones(per.shape[0], dtype=bool)  # not released by levels 0..j-1
        for j in range(i):
            rows = np.flatnonzero(alive)
            if not rows.size:
                break
            sigs = signatures(seq, j, per[rows], n_sa)
            if j == 0:
                alive[rows[np.asarray(chk.groups_pass(sigs))]] = False
                continue
            uniq, inv, times = np.unique(
                sigs.reshape(rows.size, -1), axis=0, return_inverse=True, return_counts=True
            )
            below = [work(j, u.reshape(sigs.shape[1:])) for u in uniq]
            total += sum(w * int(t) for (w, _), t in zip(below, times, strict=True))
            ok = np.array([passes for _, passes in below])
            alive[rows[ok[inv.ravel()]]] = False
        ds = per[alive]
        passes = bool(ds.shape[0]) and bool(chk.people_pass(person_counts(ds, n_sa)))
        seen[key] = (total, passes)
        return total, passes

    total = 0
    for i in range(len(seq)):
        w, passes = work(i, signature(seq, i, x, n_sa))
        total += w
        if passes:
            return total, i
    return total, None


NO_MEMO_LIMIT = 20_000_000
"""The non-memoized inclusive publisher is run when its exact instance count
(:func:`no_memo_instances`) is at most this (about 15 s on the project's machine); above it
only the count is reported (the smallest count above it in E-B, 7.9e8 instances, would take
about 8 minutes, the largest, 2.1e12, weeks)."""

NO_MEMO = "inclusive (no memo)"
COUNTED = "inclusive (no memo), counted"
