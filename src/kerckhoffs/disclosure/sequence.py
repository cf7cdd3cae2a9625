"""The ordered sequence of candidate generalizations a publisher tries (paper 002,
``docs/theory/disclosure-sets.md#generalizations``).

A generalization here is a **partition of the same n rows** (one int group label per row). The
candidates are ordered from most to least useful; the sequence ends *implicitly* in the function
``g_n`` that releases nothing (``φ``; the paper never uses it, we keep it as a sentinel:
``docs/theory/disclosure-sets.md#err-phi``), which is never stored: a strategy that releases nothing
returns ``None``. The partitions are **not** assumed nested (an edge case of
``docs/theory/disclosure-sets.md#edge-cases``: in the running example ``g2`` splits ``g1``'s group
``{E, F}``), and they depend only on the QI (the paper does not say so, every example does:
``docs/theory/disclosure-sets.md#err-qi-only``), so a partition is the same for every possible
instance.

Indices are 0-based: ``seq[0]`` is the paper's ``g_1``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from kerckhoffs.data.lattice import Lattice
from kerckhoffs.errors import ParameterError
from kerckhoffs.metrics.lattice_loss import generalization_sequence

if TYPE_CHECKING:
    from kerckhoffs.data.table import Table
    from kerckhoffs.release import Release


@dataclass(frozen=True, eq=False)
class GeneralizationSequence:
    """Candidate generalizations ``g_1, ..., g_{n-1}`` of the same ``n`` rows, best first.

    ``labels[i]`` is an int array of length ``n`` whose values are ``0..groups_i - 1``, every
    id used (the group of each row under ``g_{i+1}``). ``names[i]`` is a display name
    (``"g1"`` by default). Build one with :meth:`from_labels`, :meth:`from_releases` or
    :meth:`from_lattice`; anything malformed is refused with a one-line
    :class:`~kerckhoffs.errors.ParameterError`.

    >>> seq = GeneralizationSequence.from_labels([[0, 0, 1, 1], [0, 0, 0, 0]])
    >>> len(seq), seq.n, seq.groups(0)
    (2, 4, 2)
    """

    labels: tuple[np.ndarray, ...]
    names: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        labels = tuple(_check_labels(i, a) for i, a in enumerate(self.labels))
        lengths = {a.shape[0] for a in labels}
        if len(lengths) > 1:
            raise ParameterError(
                "every generalization must cover the same rows: lengths "
                + ", ".join(str(a.shape[0]) for a in labels)
            )
        names = tuple(self.names) or tuple(f"g{i + 1}" for i in range(len(labels)))
        if len(names) != len(labels):
            raise ParameterError(f"{len(names)} names for {len(labels)} generalizations")
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "names", names)

    # -- constructors -----------------------------------------------------------------------
    @classmethod
    def from_labels(
        cls, labels: Sequence[Sequence[int] | np.ndarray], names: Sequence[str] = ()
    ) -> GeneralizationSequence:
        """From one group-id array per generalization (ids ``0..g-1``, every id used)."""
        return cls(tuple(np.asarray(a) for a in labels), tuple(names))

    @classmethod
    def from_releases(
        cls, releases: Sequence[Release], names: Sequence[str] = ()
    ) -> GeneralizationSequence:
        """From releases of the same table, best first (their ``partition.group``)."""
        return cls(tuple(np.asarray(r.partition.group) for r in releases), tuple(names))

    @classmethod
    def from_lattice(
        cls, table: Table, nodes: Sequence[tuple[int, ...]] | None = None
    ) -> GeneralizationSequence:
        """From full-domain lattice nodes of ``table`` (the groups of each node).

        ``nodes`` defaults to the lattice algorithm's own order,
        :func:`kerckhoffs.metrics.lattice_loss.generalization_sequence` (every node by
        ascending information loss), which is the sequence the naive ``lattice`` publisher
        walks.
        """
        lat = Lattice.of(table)
        chosen = list(generalization_sequence(table) if nodes is None else nodes)
        parts = [lat.partition(lat.check_node(node)) for node in chosen]
        names = [str(lat.check_node(node)) for node in chosen]
        return cls(tuple(p.group for p in parts), tuple(names))

    # -- reading ----------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.labels)

    def __iter__(self) -> Iterator[np.ndarray]:
        return iter(self.labels)

    def __getitem__(self, i: int) -> np.ndarray:
        return self.labels[i]

    @property
    def n(self) -> int:
        """Number of rows (0 for an empty sequence)."""
        return int(self.labels[0].shape[0]) if self.labels else 0

    def groups(self, i: int) -> int:
        """Number of groups of generalization ``i``."""
        a = self.labels[i]
        return int(a.max()) + 1 if a.size else 0

    def members(self, i: int) -> list[np.ndarray]:
        """The row positions of each group of generalization ``i``, in group-id order."""
        return self._members[i]

    @cached_property
    def _members(self) -> list[list[np.ndarray]]:
        return [self._group_rows(i) for i in range(len(self.labels))]

    def _group_rows(self, i: int) -> list[np.ndarray]:
        a = self.labels[i]
        order = np.argsort(a, kind="stable")
        bounds = np.searchsorted(a[order], np.arange(self.groups(i) + 1))
        return [order[bounds[g] : bounds[g + 1]] for g in range(self.groups(i))]

    def check_sa(self, sa: np.ndarray | Sequence[int]) -> np.ndarray:
        """``sa`` as an int64 array of ``n`` non-negative codes, else one-line ParameterError."""
        a = np.asarray(sa)
        if a.ndim != 1 or (self.labels and a.shape[0] != self.n):
            raise ParameterError(
                f"the sensitive codes must be one per row ({self.n}), got shape {a.shape}"
            )
        if a.size and (a.dtype.kind not in "iu" or int(a.min()) < 0):
            raise ParameterError("the sensitive codes must be non-negative integers")
        return a.astype(np.int64, copy=False)


def _check_labels(i: int, labels: object) -> np.ndarray:
    a = np.asarray(labels)
    if a.ndim != 1:
        raise ParameterError(f"generalization {i + 1}: labels must be one group id per row")
    if a.size == 0:
        raise ParameterError(f"generalization {i + 1} has no rows")
    if a.dtype.kind not in "iu":
        raise ParameterError(
            f"generalization {i + 1}: group ids must be integers, got dtype {a.dtype}"
        )
    lo = int(a.min())
    if lo < 0:
        raise ParameterError(f"generalization {i + 1}: group id {lo} is negative (ids are 0..g-1)")
    missing = np.flatnonzero(np.bincount(a) == 0)
    if missing.size:
        raise ParameterError(
            f"generalization {i + 1}: group ids must be 0..g-1 with every id used "
            f"(id {int(missing[0])} has no row)"
        )
    return a.astype(np.int64)
