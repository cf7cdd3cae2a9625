"""Privacy checks of a table on Dask workers, from per-group SA histograms summed across
partitions (decisions are functions of counts: ``docs/theory/choices.md#count-representation``).

Every model is a function of the (group x SA) count matrix (:mod:`kerckhoffs.models.histogram`).
On Dask that matrix is never built in one place:

1. each partition counts its rows' ``(group, SA)`` pairs (and ``(group, provider, SA)``
   triples when a model needs providers) and splits them by *slice*: consecutive group ranges;
2. one task per slice sums its pieces from every partition into the slice's
   :class:`~kerckhoffs.models.GroupHistogram` (given the table-wide SA totals, which
   t-closeness reads) and evaluates every model on it;
3. the client combines the slices' results (:meth:`PrivacyModel.combine`): the same achieved
   values, per-group measures and detail lines as the in-memory check on the whole table.

Groups are either given (a group id per row, one future per partition, e.g. Mondrian's
partition) or, for a table checked as it stands, the distinct QI vectors, numbered in order of
first appearance as :meth:`kerckhoffs.release.Partition.by_qi` numbers them.

What crosses to the client: per partition its distinct QI keys with their first row (only to
number the groups of a table as it stands), the SA totals, and per slice the models' per-group
results. No row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kerckhoffs.engines.dask_table import DaskTable, Part, item, row_key
from kerckhoffs.errors import InternalError, ParameterError
from kerckhoffs.models.base import ModelResult, PrivacyModel
from kerckhoffs.models.histogram import GroupHistogram, ProviderCounts

__all__ = [
    "DaskCheck",
    "Piece",
    "check_dask",
    "evaluate_pieces",
    "qi_groups",
    "slice_bounds",
    "whole_table",
]

Piece = tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]
"""One partition's share of one slice: ``(group, SA)`` keys and counts, and the ``(group,
provider, SA)`` ones when a model reads providers."""

SLICE_CELLS = 1 << 25
"""Largest dense (groups x SA) count matrix of one slice (32M cells, 256 MB as int64)."""


@dataclass(frozen=True)
class DaskCheck:
    """The models' results on a Dask table, with its group count and every group's size."""

    results: list[ModelResult]
    n_groups: int
    sizes: np.ndarray


# -- groups of a table as it stands: the distinct QI vectors ---------------------------------------
def _first_keys(part: Part, radix: Sequence[int], start: int) -> tuple[np.ndarray, np.ndarray]:
    """The partition's distinct QI keys and the (kept-row) position of each one's first row."""
    keys, first = np.unique(row_key(part.qi, radix), return_index=True)
    return keys, first.astype(np.int64) + start


def _numbered(part: Part, radix: Sequence[int], keys: np.ndarray, ids: np.ndarray) -> np.ndarray:
    return ids[np.searchsorted(keys, row_key(part.qi, radix))]


def qi_groups(dt: DaskTable) -> tuple[list[Any], int]:
    """Futures of each partition's group ids when every distinct QI vector is a group, and the
    number of groups (ids in order of first appearance, as ``Partition.by_qi``)."""
    radix = [max(c.size, 1) for c in dt.qi_columns]
    if float(np.prod([float(r) for r in radix])) >= 2.0**63:
        raise ParameterError(
            "the QI domains are too large to number their combinations in one 64-bit key "
            f"({' x '.join(map(str, radix))})"
        )
    client = dt.client
    starts = dt.starts
    firsts = client.gather(
        [
            client.submit(_first_keys, p, radix, int(s), pure=False)
            for p, s in zip(dt.parts, starts, strict=True)
        ]
    )
    keys = np.concatenate([k for k, _ in firsts])
    pos = np.concatenate([f for _, f in firsts])
    order = np.lexsort((pos, keys))
    keys, pos = keys[order], pos[order]
    new = np.ones(keys.size, dtype=bool)
    new[1:] = keys[1:] != keys[:-1]
    keys, pos = keys[new], pos[new]  # each key with its first row
    ids = np.empty(keys.size, dtype=np.int64)
    ids[np.argsort(pos, kind="stable")] = np.arange(keys.size)
    keys_f, ids_f = client.scatter([keys, ids], broadcast=True, hash=False)
    groups = [client.submit(_numbered, p, radix, keys_f, ids_f, pure=False) for p in dt.parts]
    return groups, int(keys.size)


# -- the histogram pieces and the slices -----------------------------------------------------------
def sa_totals(part: Part, n_sa: int) -> np.ndarray:
    return np.bincount(part.sa, minlength=n_sa).astype(np.int64)


def _pieces(
    part: Part,
    group: np.ndarray,
    n_sa: int,
    n_prov: int,
    bounds: np.ndarray,
) -> list[Piece]:
    """Per slice: the partition's ``(group, SA)`` keys and counts, and with ``n_prov`` its
    ``(group, provider, SA)`` keys and counts (keys sorted; groups still global)."""
    group = np.asarray(group, dtype=np.int64)
    if group.size != part.n:
        raise ParameterError(
            f"a partition has {group.size} group ids for {part.n} rows"
        )  # pragma: no cover - the engines pass their own
    keys, counts = np.unique(group * n_sa + part.sa, return_counts=True)
    cut = np.searchsorted(keys, bounds * n_sa)
    tkeys = tcounts = None
    if n_prov:
        if part.provider is None:
            raise InternalError("providers counted on a partition without a provider column")
        tkeys, tcounts = np.unique(
            (group * n_prov + part.provider) * n_sa + part.sa, return_counts=True
        )
        tcut = np.searchsorted(tkeys, bounds * (n_prov * n_sa))
    out: list[Piece] = []
    for b in range(bounds.size - 1):
        pair = (keys[cut[b] : cut[b + 1]], counts[cut[b] : cut[b + 1]])
        if tkeys is not None and tcounts is not None:
            out.append((*pair, tkeys[tcut[b] : tcut[b + 1]], tcounts[tcut[b] : tcut[b + 1]]))
        else:
            out.append((*pair, None, None))
    return out


def _evaluate_slice(
    pieces: list[Any],
    lo: int,
    hi: int,
    n_sa: int,
    n_prov: int,
    totals: np.ndarray,
    hist_args: tuple[np.ndarray, Any, Any],
    models: list[PrivacyModel],
) -> tuple[list[ModelResult], np.ndarray]:
    """Sum the pieces of groups ``lo .. hi - 1`` from every partition and evaluate the models."""
    keys = np.concatenate([p[0] for p in pieces])
    counts = np.concatenate([p[1] for p in pieces])
    dense = np.bincount(keys - lo * n_sa, weights=counts, minlength=(hi - lo) * n_sa)
    matrix = dense.astype(np.int64).reshape(hi - lo, n_sa)
    providers = None
    if n_prov:
        tk = np.concatenate([p[2] for p in pieces])
        tc = np.concatenate([p[3] for p in pieces])
        tk, inv = np.unique(tk, return_inverse=True)
        tc = np.bincount(inv.reshape(-1), weights=tc).astype(np.int64)
        providers = ProviderCounts(
            tk // (n_prov * n_sa) - lo, tk // n_sa % n_prov, tk % n_sa, tc, n_prov
        )
    sensitive, mode, kind = hist_args
    hist = GroupHistogram(matrix, sensitive, mode, kind, providers=providers)
    hist = hist.slice_of_table(totals)
    return [m.evaluate(hist) for m in models], hist.sizes


def slice_bounds(n_groups: int, n_sa: int, workers: int) -> np.ndarray:
    slices = max(2 * workers, -(-n_groups * n_sa // SLICE_CELLS), 1)
    slices = min(slices, max(n_groups, 1))
    return np.linspace(0, n_groups, slices + 1).round().astype(np.int64)


def whole_table(dt: DaskTable, with_providers: bool = False) -> GroupHistogram:
    """The whole table as one group (SA counts summed from the partitions, and the provider
    axis with ``with_providers``): what the models' ``validate`` and the cut rules' table-wide
    checks read, and whose ``totals`` t-closeness compares each group with."""
    client = dt.client
    providers = None
    if with_providers and dt.provider_values is not None:
        n_prov = len(dt.provider_values)
        counts = np.sum(
            client.gather(
                [client.submit(_provider_totals, p, n_prov, dt.n_sa, pure=False) for p in dt.parts]
            ),
            axis=0,
        )
        totals = counts.sum(axis=0)  # (one pass gives both)
        p, s = np.nonzero(counts)
        providers = ProviderCounts(np.zeros(p.size, dtype=np.int64), p, s, counts[p, s], n_prov)
    else:
        totals = np.sum(
            client.gather([client.submit(sa_totals, p, dt.n_sa, pure=False) for p in dt.parts]),
            axis=0,
        )
    mode, kind = dt.schema.sensitive_mode, dt.sa_column.kind
    return GroupHistogram(totals[None, :], dt.sensitive, mode, kind, providers=providers)


def _provider_totals(part: Part, n_prov: int, n_sa: int) -> np.ndarray:
    if part.provider is None:
        raise InternalError("providers counted on a partition without a provider column")
    key = part.provider.astype(np.int64) * n_sa + part.sa
    return np.bincount(key, minlength=n_prov * n_sa).reshape(n_prov, n_sa)


def evaluate_pieces(
    client: Any,
    pieces: list[Any],
    bounds: np.ndarray,
    n_sa: int,
    n_prov: int,
    totals: np.ndarray,
    hist_args: tuple[np.ndarray, Any, Any],
    models: list[PrivacyModel],
) -> tuple[list[ModelResult], np.ndarray]:
    """Every model on the groups ``bounds[0] .. bounds[-1] - 1``, from ``pieces`` (one future
    per source of rows: its :data:`Piece` per slice of ``bounds``): one task per slice sums the
    slice's pieces and evaluates, the client combines. Returns the results and every group's
    size."""
    totals_f = client.scatter(totals, broadcast=True, hash=False)
    slices = []
    for b in range(bounds.size - 1):
        mine = [client.submit(item, p, b, pure=False) for p in pieces]
        slices.append(
            client.submit(
                _evaluate_slice,
                mine,
                int(bounds[b]),
                int(bounds[b + 1]),
                n_sa,
                n_prov,
                totals_f,
                hist_args,
                models,
                pure=False,
            )
        )
    evaluated = client.gather(slices)
    sizes = np.concatenate([s for _, s in evaluated]) if evaluated else np.zeros(0, np.int64)
    results = [m.combine([r[i] for r, _ in evaluated], sizes) for i, m in enumerate(models)]
    return results, sizes


def check_dask(
    dt: DaskTable,
    models: Sequence[PrivacyModel],
    groups: list[Any] | None = None,
    n_groups: int | None = None,
) -> DaskCheck:
    """Check ``models`` on ``dt``'s groups: ``groups`` (one future of group ids per partition,
    ids ``0 .. n_groups - 1``) or, when None, every distinct QI vector (the table as it
    stands). Validates each model on the whole table first (one-line
    :class:`~kerckhoffs.errors.ParameterError`, as the in-memory check)."""
    models = list(models)
    if not models:
        raise ParameterError("no privacy model to check: pass models, e.g. [KAnonymity(5)]")
    client = dt.client
    if groups is None:
        groups, n_groups = qi_groups(dt)
    elif n_groups is None:
        raise ParameterError("check_dask: give n_groups with groups")
    assert n_groups is not None
    n_sa = dt.n_sa
    needs_prov = any(m.needs_providers for m in models)
    n_prov = len(dt.provider_values) if needs_prov and dt.provider_values is not None else 0
    whole = whole_table(dt, with_providers=n_prov > 0)
    totals = whole.totals
    for m in models:
        m.validate(whole, repr(dt.sa_name))
    workers = max(len(client.scheduler_info().get("workers", {})), 1)
    bounds = slice_bounds(n_groups, n_sa, workers)
    pieces = [
        client.submit(_pieces, p, g, n_sa, n_prov, bounds, pure=False)
        for p, g in zip(dt.parts, groups, strict=True)
    ]
    hist_args = (dt.sensitive, dt.schema.sensitive_mode, dt.sa_column.kind)
    results, sizes = evaluate_pieces(
        client, pieces, bounds, n_sa, n_prov, totals, hist_args, models
    )
    return DaskCheck(results, int(n_groups), sizes)
