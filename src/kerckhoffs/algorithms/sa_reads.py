"""Logging the SA statistics an algorithm reads, for the information-flow audit.

Paper 000's sufficient condition for algorithm safety (section 5.3,
``docs/theory/asap.md#sufficient-conditions``; the information-flow audit,
``docs/theory/asap.md#audits``): every SA statistic the algorithm consults must be computable from
the release, i.e. it must be computed on a row set that is a union of published groups. An algorithm
that takes an ``sa_log`` option records, for every SA statistic it reads, the row sets it was
computed on; :func:`kerckhoffs.audits.information_flow.audit` (or :meth:`SAReadLog.violations`) then
says whether each set is a union of published groups. Works at any size: the records are arrays.

A record is sparse: ``rows`` (row indices) and ``set_ids`` (which set each row belongs to), so
an algorithm that evaluates many candidate sets at once (Mondrian's candidate halves of every
group of one depth) records them in one call.

A union of groups is not enough when the algorithm then *changes* SA values (MASK): the
statistic read must also be the one the release shows. A record may therefore say which SA
counts it read (``counted``: per set, a mask over SA codes, the count of each masked code or,
``summed``, of all of them together) and the log keeps the values read; the audit recomputes
them from the published SA and reports every set where they differ. Original MASK passes the
union test (it reads whole groups) but fails this one: it reads the sensitive counts of the
groups it then distorts.
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
    counted: np.ndarray | None = None
    summed: bool = False
    values: np.ndarray | None = None


@dataclass
class SAReadLog:
    """The SA reads of one algorithm run (pass as ``sa_log=`` to an algorithm that logs)."""

    reads: list[SARead] = field(default_factory=list)

    def record(
        self,
        rows: np.ndarray,
        set_ids: np.ndarray | int,
        what: str,
        *,
        counted: np.ndarray | None = None,
        summed: bool = False,
        sa: np.ndarray | None = None,
    ) -> None:
        """Record that an SA statistic (``what``, e.g. ``"S_max of candidate halves"``) was read
        on each set: row ``rows[i]`` belongs to set ``set_ids[i]`` (an int: one set).

        ``counted`` (with ``sa``, the SA codes the algorithm read, one per table row) says the
        statistic is SA counts: a bool mask over SA codes, ``[n_sa]`` for every set or
        ``[max set id + 1, n_sa]`` per set; the counts read (each masked code's, or with
        ``summed`` their total) are kept for :meth:`violations` to compare with the release.
        """
        rows = np.asarray(rows, dtype=np.int64)
        ids = np.array(np.broadcast_to(np.asarray(set_ids, dtype=np.int64), rows.shape))
        values = None
        if counted is not None:
            if sa is None:
                raise ValueError("SAReadLog.record: counted needs sa, the SA codes read")
            counted = np.asarray(counted, dtype=bool)
            values = _counts(ids, np.asarray(sa)[rows], counted, summed)
        self.reads.append(SARead(rows.copy(), ids, what, counted, summed, values))

    def violations(
        self, group: np.ndarray, sa_published: np.ndarray | None = None
    ) -> list[tuple[str, int]]:
        """The reads whose row sets are not unions of the published groups ``group`` (a group
        id per row), and, given the published SA codes, the reads of counts the release does
        not show: ``(what, number of offending sets)`` per offending batch."""
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
            if sa_published is not None and read.counted is not None and read.values is not None:
                now = _counts(
                    read.set_ids, np.asarray(sa_published)[read.rows], read.counted, read.summed
                )
                differ = (now != read.values).reshape(now.shape[0], -1).any(axis=1)
                if differ.any():
                    out.append(
                        (
                            f"{read.what} (counts read differ from the published ones)",
                            int(differ.sum()),
                        )
                    )
        return out


def _counts(set_ids: np.ndarray, sa: np.ndarray, counted: np.ndarray, summed: bool) -> np.ndarray:
    """Per set id present (ascending), the masked SA counts: ``[sets, n_sa]`` with unmasked
    codes zeroed, or ``[sets]`` totals when ``summed``."""
    sets, idx = np.unique(set_ids, return_inverse=True)
    n_sa = counted.shape[-1]
    hist = np.bincount(idx * n_sa + sa, minlength=sets.size * n_sa).reshape(sets.size, n_sa)
    mask = counted if counted.ndim == 1 else counted[sets]
    masked = np.where(mask, hist, 0)
    return masked.sum(axis=1) if summed else masked
