"""Logging the SA statistics an algorithm reads, for the information-flow audit.

Paper 000's sufficient condition for algorithm safety (spec ``asap.md`` 1.9 and 1.10 item 2):
every SA statistic the algorithm consults must be computable from the release, i.e. it must be
computed on a row set that is a union of published groups. An algorithm that takes an
``sa_log`` option records, for every SA statistic it reads, the row sets it was computed on;
:func:`kerckhoffs.attacks.information_flow.audit` (or :meth:`SAReadLog.violations`) then says
whether each set is a union of published groups. Works at any size: the records are arrays.

A record is sparse: ``rows`` (row indices) and ``set_ids`` (which set each row belongs to), so
an algorithm that evaluates many candidate sets at once (Mondrian's candidate halves of every
group of one depth) records them in one call.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class SARead:
    """One batch of SA statistics read: the row sets and what was read on them."""

    rows: np.ndarray
    set_ids: np.ndarray
    what: str


@dataclass
class SAReadLog:
    """The SA reads of one algorithm run (pass as ``sa_log=`` to an algorithm that logs)."""

    reads: list[SARead] = field(default_factory=list)

    def record(self, rows: np.ndarray, set_ids: np.ndarray | int, what: str) -> None:
        """Record that an SA statistic (``what``, e.g. ``"S_max of candidate halves"``) was read
        on each set: row ``rows[i]`` belongs to set ``set_ids[i]`` (an int: one set)."""
        rows = np.asarray(rows, dtype=np.int64)
        ids = np.broadcast_to(np.asarray(set_ids, dtype=np.int64), rows.shape)
        self.reads.append(SARead(rows.copy(), np.array(ids), what))

    def violations(self, group: np.ndarray) -> list[tuple[str, int]]:
        """The reads whose row sets are not unions of the published groups ``group`` (a group
        id per row): ``(what, number of offending sets)`` per offending batch."""
        group = np.asarray(group)
        sizes = np.bincount(group)
        out = []
        for read in self.reads:
            if read.rows.size == 0:
                continue
            g = group[read.rows]
            # a set is a union of groups iff it holds every row of each group it touches
            _, set_idx = np.unique(read.set_ids, return_inverse=True)
            pair = set_idx.astype(np.int64) * (sizes.size + 1) + g
            pairs, counts = np.unique(pair, return_counts=True)
            partial = counts != sizes[pairs % (sizes.size + 1)]
            if partial.any():
                bad_sets = np.unique(pairs[partial] // (sizes.size + 1))
                out.append((read.what, int(bad_sets.size)))
        return out
