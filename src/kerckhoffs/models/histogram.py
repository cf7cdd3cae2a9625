"""The per-group SA histogram every privacy model is computed from.

One ``np.bincount(group * n_sa + sa)`` (``docs/theory/choices.md#count-representation``) gives
``counts[g, s]``, the number of rows of group ``g`` whose published SA code is ``s``. Models reduce
it along the SA axis; nothing iterates over rows or groups in Python.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kerckhoffs.data.schema import Kind, SensitiveMode


@dataclass(frozen=True, eq=False)
class ProviderCounts:
    """The provider axis of the histogram, sparse (paper 003's collaborative setting):
    ``count[i]`` rows of group ``group[i]`` came from provider ``provider[i]`` with SA code
    ``sa[i]``; only nonzero triples, sorted by (group, provider, SA)."""

    group: np.ndarray
    provider: np.ndarray
    sa: np.ndarray
    count: np.ndarray
    n_providers: int

    @classmethod
    def from_codes(
        cls, group: np.ndarray, provider: np.ndarray, sa: np.ndarray, n_sa: int, n_providers: int
    ) -> ProviderCounts:
        """Count the triples with one ``np.unique`` over a combined key."""
        key = (group.astype(np.int64) * n_providers + provider) * n_sa + sa
        uniq, count = np.unique(key, return_counts=True)
        return cls(
            uniq // (n_providers * n_sa),
            uniq // n_sa % n_providers,
            uniq % n_sa,
            count,
            int(n_providers),
        )


@dataclass(frozen=True, eq=False)
class BoundedCount:
    """The bounded count ``c(G)`` of a group: the count frequency l-diversity bounds
    (``|G| >= l * c(G)``, paper 000 Definition 2 with a sensitive subset as paper 001
    section 2 allows it). The one implementation, read by the checker
    (:attr:`GroupHistogram.sensitive_count`) and by the cut rules of Mondrian
    (:mod:`kerckhoffs.algorithms.mondrian`), in memory and on Dask, so the algorithm and its
    checker cannot disagree on it.

    Every SA value sensitive: ``S_max(G)``, the most frequent value's count. A subset in
    ``set`` mode: the rows holding any sensitive value. In ``each`` mode: the most frequent
    sensitive value's count. ``reducer`` combines the counts (``np.maximum`` or ``np.add``);
    ``weight`` marks the SA codes that count (None: every one).
    """

    reducer: np.ufunc
    weight: np.ndarray | None

    @classmethod
    def of(cls, sensitive: np.ndarray, mode: SensitiveMode) -> BoundedCount:
        """The bounded count for the sensitive SA codes ``sensitive`` (bool per code) in
        ``mode``."""
        sens = np.asarray(sensitive, dtype=bool)
        if sens.all():
            return cls(np.maximum, None)
        if SensitiveMode(mode) == SensitiveMode.SET:
            return cls(np.add, sens)
        return cls(np.maximum, sens)

    def of_histograms(self, counts: np.ndarray) -> np.ndarray:
        """``c`` of each row of ``counts`` (``[groups, n_sa]`` SA histograms)."""
        if self.weight is None:
            return counts.max(axis=1)
        if not self.weight.any():
            return np.zeros(counts.shape[0], dtype=np.int64)
        return self.reducer.reduce(counts[:, self.weight], axis=1)

    def of_cells(self, counts: np.ndarray, sa: np.ndarray, first: np.ndarray) -> np.ndarray:
        """``c`` of each group from its non-empty (group, SA) cells, sparse: ``counts`` and
        ``sa`` (the SA code) per cell, cells sorted by group, ``first`` each group's first
        cell (every group has one)."""
        if self.weight is not None:
            counts = counts * self.weight[sa]
        return self.reducer.reduceat(counts, first)


@dataclass(frozen=True, eq=False)
class GroupHistogram:
    """Counts of each SA code in each group, plus what the models need to read them.

    ``sensitive[s]`` marks the sensitive SA codes (all True when the schema names no subset);
    ``mode`` says whether a subset is one set or each value on its own; ``sa_kind`` decides
    the EMD ground distance (ordered for numeric SA, equal for categorical).
    """

    counts: np.ndarray
    sensitive: np.ndarray
    mode: SensitiveMode = SensitiveMode.SET
    sa_kind: Kind = Kind.CATEGORICAL
    _cache: dict = field(default_factory=dict, repr=False)
    providers: ProviderCounts | None = None

    @classmethod
    def from_codes(
        cls,
        group: np.ndarray,
        sa: np.ndarray,
        n_groups: int,
        n_sa: int,
        sensitive: np.ndarray | None = None,
        mode: SensitiveMode = SensitiveMode.SET,
        sa_kind: Kind = Kind.CATEGORICAL,
        provider: np.ndarray | None = None,
        n_providers: int = 0,
    ) -> GroupHistogram:
        """Build the histogram of ``sa`` codes per ``group`` id with one bincount; with
        ``provider`` codes (``0..n_providers-1``), also the sparse provider axis."""
        key = group.astype(np.int64) * n_sa + sa
        counts = np.bincount(key, minlength=n_groups * n_sa).reshape(n_groups, n_sa)
        if sensitive is None:
            sensitive = np.ones(n_sa, dtype=bool)
        prov = None
        if provider is not None:
            prov = ProviderCounts.from_codes(group, provider, sa, n_sa, max(n_providers, 1))
        return cls(
            counts,
            np.asarray(sensitive, dtype=bool),
            SensitiveMode(mode),
            Kind(sa_kind),
            providers=prov,
        )

    def slice_of_table(self, totals: np.ndarray) -> GroupHistogram:
        """This histogram as a slice of a larger table's groups, whose SA counts are
        ``totals``: the table-wide statistics the models read (t-closeness's distribution)
        come from ``totals``, the per-group ones from these counts. What a distributed check
        evaluates on each slice (:meth:`kerckhoffs.models.base.PrivacyModel.combine`)."""
        part = dataclasses.replace(self, _cache={})
        part._cache["totals"] = np.asarray(totals)
        return part

    def _memo(self, key: str, fn: Callable[[], Any]) -> Any:
        if key not in self._cache:
            self._cache[key] = fn()
        return self._cache[key]

    @property
    def n_groups(self) -> int:
        """Number of groups."""
        return int(self.counts.shape[0])

    @property
    def sizes(self) -> np.ndarray:
        """Rows per group."""
        return self._memo("sizes", lambda: self.counts.sum(axis=1))

    @property
    def n(self) -> int:
        """Rows in the table."""
        return int(self.sizes.sum())

    @property
    def totals(self) -> np.ndarray:
        """Rows per SA code over the whole table."""
        return self._memo("totals", lambda: self.counts.sum(axis=0))

    @property
    def all_sensitive(self) -> bool:
        """Whether every SA value is sensitive (no subset named)."""
        return bool(self.sensitive.all())

    @property
    def smax(self) -> np.ndarray:
        """Most frequent SA count per group, over all values (paper 000's S_max)."""
        return self._memo("smax", lambda: self.counts.max(axis=1))

    @property
    def sensitive_count(self) -> np.ndarray:
        """Per group, the count the subset-aware models bound (:class:`BoundedCount`).

        Every value sensitive: the most frequent value's count (each value its own set).
        A subset in ``set`` mode: rows holding any sensitive value. In ``each`` mode: the most
        frequent sensitive value's count.
        """

        def compute() -> np.ndarray:
            if self.all_sensitive:
                return self.smax
            return BoundedCount.of(self.sensitive, self.mode).of_histograms(self.counts)

        return self._memo("sensitive_count", compute)

    @property
    def distinct(self) -> np.ndarray:
        """Number of distinct SA values per group."""
        return self._memo("distinct", lambda: np.count_nonzero(self.counts, axis=1))
