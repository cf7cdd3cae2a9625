"""Hilb: l-diverse groups along a Hilbert curve (Ghinita et al. 2007, as paper 000 describes it).

Spec ``asap.md`` 2.4, 2.5 (the algorithm), 3.4 and 3.5 (worked examples), section 6 (tests).

1. **Hilbert order.** Each row's encoded QI vector is mapped to its index ``Q_T`` on a Hilbert
   curve (:mod:`kerckhoffs.algorithms.hilbert_curve`: Skilling's transform over all rows at
   once, raw codes, convention documented there) and the rows are sorted by ``(Q_T, row id)``.
   A precomputed ``hilbert_index`` can be passed instead (the tests give ``Q_T`` directly).
2. **Buckets.** The sorted rows are split into buckets by SA value, each in ``Q_T`` order. The
   *frontier* ``F`` is the first remaining row of every non-empty bucket.
3. **Greedy step.** With ``s = l``: ``G1`` = the ``s`` frontier rows of lowest ``Q_T`` (``s``
   distinct SA values). ``G1`` is emitted iff the rest stays l-eligible,
   ``|G| - s >= l * S_max(G - G1)`` (:func:`greedy_allows`); otherwise ``s`` grows by one,
   until ``s`` exceeds the frontier (the paper: "until ``|G1|`` reaches the number of buckets").
4. **Roll-back step.** If no ``s`` passes, ``s`` restarts at ``l`` and ``G1`` = the heads of
   the ``s`` buckets with the most remaining rows (ties: lowest head ``Q_T``, the rule the spec
   reconstructs from paper 000's example), emitted under the same test, ``s`` growing until it
   passes. It passes at the latest at ``s = max(l, k)``, ``k`` the number of buckets holding
   ``S_max(G)`` rows: those ``s`` fullest buckets include all ``k``, so ``S_max`` drops by one,
   and ``|G| - s >= l * (S_max(G) - 1)`` follows from ``|G| >= l * S_max(G)`` and
   ``|G| >= k * S_max(G)``. Then the greedy step resumes on the rest.

Every emitted group holds distinct SA values and every remainder stays l-eligible, so the
output is l-diverse. Hilb is *not* algorithm-safe (spec 2.5, Theorem 5.3): the test reads
``S_max(G - G1)`` of a remainder that is never published, and the switch to the roll-back step
reveals that every smaller ``G1`` failed. Hilb+ (issue 4, spec 2.6) replaces the test by the
global look-ahead ``|G| - s >= l * S_max(G)``, computed on a union of published groups.

The buckets are those of :func:`kerckhoffs.algorithms.anatomy.sa_buckets`: one per SA value
(paper 000's setting), a schema's sensitive subset in ``set`` mode counting as one value.

**Speed.** The greedy loop is sequential over groups, but a step costs O(number of buckets),
never O(n). The buckets are chains over Hilbert positions (:func:`bucket_chains`: for each
position the rows left in its bucket and the next position of the bucket), the frontier is a
sorted list of head positions, so a step slices off the ``s`` lowest heads and inserts their
successors. ``S_max(G)`` is needed only when the test is tight: while ``|G| - l >= l * B`` for
an upper bound ``B`` of ``S_max(G)``, ``G1`` passes at ``s = l`` whatever it covers (the test
is monotone in ``S_max(G - G1) <= S_max(G)``); otherwise ``S_max(G)`` is read off the
frontier's heads and ``S_max(G - G1)`` is ``S_max(G) - 1`` exactly when ``G1`` covers every
bucket at ``S_max(G)``. The outcome is the literal algorithm's (the tests compare with a
line-by-line transcription of spec 2.5). The Hilbert index, the sort and the final group ids
are numpy over all rows. Census stand-in, l = 4: about 0.1 s (``benchmarks/``).
"""

from __future__ import annotations

from bisect import insort
from dataclasses import dataclass
from typing import Any

import numpy as np

from kerckhoffs.algorithms.anatomy import l_eligible_buckets
from kerckhoffs.algorithms.hilbert_curve import hilbert_bits, hilbert_index, hilbert_order
from kerckhoffs.algorithms.registry import register
from kerckhoffs.data.table import Table
from kerckhoffs.errors import ParameterError
from kerckhoffs.models.base import PrivacyModel
from kerckhoffs.release import Partition, Provenance, Release, Scheme

__all__ = [
    "HilbGroups",
    "bucket_chains",
    "greedy_allows",
    "hilb",
    "hilb_groups",
    "table_hilbert_index",
]


def greedy_allows(remaining: int, s: int, l: int, smax_rest: int) -> bool:  # noqa: E741
    """Hilb's test for emitting ``G1`` (``|G1| = s``) from ``G`` (``|G| = remaining``).

    ``|G| - s >= l * S_max(G - G1)``: the rest must stay l-eligible. ``smax_rest`` is
    ``S_max(G - G1)``, a statistic of a tuple set that is never published; Hilb+ (spec 2.6)
    tests ``|G| - s >= l * S_max(G)`` instead.
    """
    return remaining - s >= l * smax_rest


@dataclass(frozen=True, eq=False)
class HilbGroups:
    """Hilb's groups in the order it emitted them.

    ``group[i]`` is the group of row ``i`` (ids ``0..n_groups-1`` in emission order, i.e. by
    the ``Q_T`` of their first row for greedy groups); ``rolled_back[g]`` says whether group
    ``g`` came from the roll-back step; ``order`` is the rows sorted by ``(Q_T, row id)``.
    """

    group: np.ndarray
    rolled_back: np.ndarray
    order: np.ndarray

    @property
    def n_groups(self) -> int:
        """Number of groups."""
        return int(self.rolled_back.shape[0])


def table_hilbert_index(table: Table, bits: int | None = None) -> np.ndarray:
    """``Q_T`` of every row of ``table``: the Hilbert index of its encoded QI codes.

    The grid order is ``ceil(log2(largest QI code domain))`` unless ``bits`` is given (codes
    are raw, not rescaled; see :mod:`kerckhoffs.algorithms.hilbert_curve`).
    """
    if bits is None:
        bits = hilbert_bits([c.size for c in table.qi_columns])
    return hilbert_index(table.qi, bits)


def bucket_chains(at: np.ndarray) -> tuple[list[int], list[int], list[int]]:
    """The SA buckets of rows in Hilbert order, as chains over positions (Hilb step 2).

    ``at[p]`` is the bucket of the row at Hilbert position ``p``. Returns, per position,
    ``left[p]`` (rows of its bucket at or after ``p``: the bucket's size while ``p`` is its
    head) and ``after[p]`` (the next position of its bucket, -1 for the last), and the
    initial frontier (each bucket's first position, ascending). Hilb+ (issue 4) walks the same
    chains; only its test differs.
    """
    at = np.asarray(at, dtype=np.int64)
    n = at.shape[0]
    if n == 0:
        return [], [], []
    counts = np.bincount(at)
    by_bucket = np.argsort(at, kind="stable")  # positions grouped by bucket, ascending
    first = np.cumsum(counts) - counts  # index in by_bucket of each bucket's first position
    inside = np.arange(n, dtype=np.int64) - np.repeat(first, counts)  # rank inside the bucket
    left = np.empty(n, dtype=np.int64)
    left[by_bucket] = np.repeat(counts, counts) - inside
    after = np.empty(n, dtype=np.int64)
    after[by_bucket[:-1]] = by_bucket[1:]
    after[by_bucket[(first + counts - 1)[counts > 0]]] = -1  # each bucket's last position
    heads = np.sort(by_bucket[first[counts > 0]])
    return left.tolist(), after.tolist(), heads.tolist()


def hilb_groups(bucket: np.ndarray, order: np.ndarray, l: int) -> HilbGroups:  # noqa: E741
    """Hilb's greedy and roll-back steps (spec 2.5) on rows already in Hilbert order.

    ``bucket`` is the SA bucket id (int, >= 0) of every row; ``order`` is the row indices
    sorted by ``(Q_T, row id)``; ``l`` is an integer >= 1. Requires l-eligibility
    (``n >= l * S_max``), which every emitted remainder then keeps.

    Rows are handled by their *position* in Hilbert order. The frontier is a sorted list of
    head positions; for a head ``h``, ``left[h]`` is how many rows its bucket still holds and
    ``after[h]`` the next position of the same bucket (-1 at the end), so no step touches more
    than the frontier.
    """
    n = int(order.shape[0])
    at = np.asarray(bucket)[order].astype(np.int64)  # bucket of each Hilbert position
    if n and n < l * int(np.bincount(at).max()):
        raise ParameterError(f"hilb: the rows are not l-eligible for l={l}")
    left, after, heads = bucket_chains(at)
    bound = max((left[h] for h in heads), default=0)  # >= S_max(G); made exact when needed
    remaining = n
    emitted: list[int] = []  # Hilbert positions, group after group
    sizes: list[int] = []
    rolled: list[bool] = []

    while remaining:
        chosen: list[int] | None = None
        rolled_back = False
        # -- greedy step: G1 = the s lowest-Q_T frontier rows, s = l, l + 1, ..., |F| -------
        if greedy_allows(remaining, l, l, bound):
            # S_max(G - G1) <= S_max(G) <= bound: passes without looking at G1's buckets
            s = l
            chosen = heads[:s]
            del heads[:s]
        else:
            smax = bound = max(left[h] for h in heads)  # S_max(G): the fullest bucket
            at_max = sum(left[h] == smax for h in heads)  # G1 lowers S_max iff it has them all
            s, seen, covered = l, 0, 0
            while s <= len(heads):
                while seen < s:
                    covered += left[heads[seen]] == smax
                    seen += 1
                if greedy_allows(remaining, s, l, smax - 1 if covered == at_max else smax):
                    chosen = heads[:s]
                    del heads[:s]
                    break
                s += 1
        # -- roll-back step: G1 = heads of the s fullest buckets (ties: lowest head Q_T) ------
        if chosen is None:
            rolled_back = True
            ranked = sorted(heads, key=lambda h: (-left[h], h))
            s, seen, covered = l, 0, 0
            while True:
                if s > len(ranked):  # impossible for an l-eligible G (module docstring)
                    raise AssertionError("hilb: roll-back found no group")
                while seen < s:
                    covered += left[ranked[seen]] == smax
                    seen += 1
                if greedy_allows(remaining, s, l, smax - 1 if covered == at_max else smax):
                    break
                s += 1
            chosen = ranked[:s]
            taken = set(chosen)
            heads = [h for h in heads if h not in taken]
        # -- emit G1: the chosen buckets lose their head ---------------------------------------
        for h in chosen:
            nxt = after[h]
            if nxt >= 0:
                insort(heads, nxt)
        remaining -= s
        emitted.extend(chosen)
        sizes.append(s)
        rolled.append(rolled_back)

    group = np.empty(n, dtype=np.int32)
    group[order[np.asarray(emitted, dtype=np.int64)]] = np.repeat(
        np.arange(len(sizes), dtype=np.int32), sizes
    )
    return HilbGroups(group, np.asarray(rolled, dtype=bool), order)


@register(
    "hilb",
    summary="Hilb: greedy l-diverse groups along a Hilbert curve (Ghinita et al. 2007)",
    models=("LDiversity",),
    options={
        "bits": "Hilbert grid order (default: ceil(log2(largest QI code domain)))",
        "hilbert_index": "precomputed Q_T per row (Python only; ties by row id)",
    },
)
def hilb(
    table: Table,
    models: list[PrivacyModel],
    *,
    seed: int | None = None,
    bits: int | None = None,
    hilbert_index: np.ndarray | None = None,
) -> Release:
    """Hilb for frequency l-diversity (spec ``asap.md`` 2.4-2.5), published by generalization.

    Reads ``l`` (a whole number) from :class:`~kerckhoffs.models.LDiversity`, the only model it
    accepts. Raises :class:`~kerckhoffs.errors.ParameterError` for other models or a table that
    is not l-eligible (``|T| < l * S_max(T)``). ``hilbert_index`` replaces the computed ``Q_T``
    (one number per row; ties by row id). Deterministic: ``seed`` is recorded, not used.
    """
    l, bucket = l_eligible_buckets(table, models, "hilb")  # noqa: E741
    params: dict[str, Any] = {"l": l}
    if hilbert_index is not None:
        index = np.asarray(hilbert_index)
        if index.shape[0] != table.n:
            raise ParameterError(
                f"hilb: hilbert_index has {index.shape[0]} values for {table.n} rows"
            )
        params["hilbert_index"] = "given"
    else:
        need = hilbert_bits([c.size for c in table.qi_columns])
        if bits is None:
            bits = need
        elif int(bits) < need:
            raise ParameterError(
                f"hilb: bits={bits} is too few for the QI codes (the largest domain needs {need})"
            )
        index = table_hilbert_index(table, int(bits))
        params["bits"] = int(bits)
    order = hilbert_order(index=index)
    result = hilb_groups(bucket, order, l)
    return Release(
        table,
        Partition.from_labels(result.group),
        Scheme.GENERALIZATION,
        table.sa,
        Provenance("hilb", params, seed),
    )
