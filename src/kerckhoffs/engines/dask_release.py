"""Write a generalization release from a Dask table and its partition, checked before it is
sealed (fail closed), without collecting a row to the client.

The files are those of an in-memory release split into parts: ``release-00000.parquet``,
``release-00001.parquet``, ... with the columns of ``release.parquet`` (``group``, each QI's
published cell as text, the SA value), and ``release.json`` listing every part with its
SHA-256 (:mod:`kerckhoffs.data.manifest`). :meth:`kerckhoffs.release.Release.from_published`
reads the parts back as one table, so every in-memory check and attack runs on a Dask release
that fits in memory, and :func:`check_dask_release` checks one that does not.

What a reader must not learn (Kerckhoffs's principle, and the in-memory writer's rules):

- **Group ids** are ranks of what the files show of each group, never the partition's own
  numbering (which follows the input's row order): the cells (numeric ``[lo-hi]`` by its
  codes, categorical by its hierarchy node), then size, then a hash of the SA multiset.
- **Row order and files**: the rows of a group are written together, in the part of its
  published id (parts are ranges of published ids, about :data:`PART_ROWS` rows each, however
  many input files there were), sorted by group then SA value; nothing of a row's input
  partition or position survives. Rows are shuffled to their part on the workers.

Steps: (1) per partition, each group's code bounds, size and SA hash, summed on the client
into the published numbering; (2) rows shuffled by published id to one task per part, which
writes its part into the staging directory; (3) the parts are read back on the workers and
every model evaluated from their ``(group, SA)`` counts alone (:func:`evaluate_pieces`), not
from the algorithm's arrays (m-privacy, which reads the providers the files do not show, from
the partitions' ``(group, provider, SA)`` counts); (4) only when every model holds is
``release.json`` sealed and the staging directory renamed onto ``--out``. A failed check
leaves nothing.

Output on a multi-machine cluster: every worker writes its parts into the staging directory,
so ``--out`` must be on a file system all workers share (as the input Parquet files are).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs.data import manifest
from kerckhoffs.data.output import output_directory
from kerckhoffs.data.schema import Kind
from kerckhoffs.data.table import EncodedColumn
from kerckhoffs.engines.dask_check import Piece, check_dask, evaluate_pieces, slice_bounds
from kerckhoffs.engines.dask_mondrian import DaskGroups
from kerckhoffs.engines.dask_table import DaskTable, Part, item
from kerckhoffs.errors import InputError, InternalError, ParameterError, PrivacyCheckFailed
from kerckhoffs.models.base import ModelResult, PrivacyModel
from kerckhoffs.release import (
    FORMAT,
    FORMAT_VERSION,
    GROUP,
    META,
    Provenance,
    Release,
    Scheme,
    checked_models,
    checks_json,
    mix64,
    read_manifest,
    release_parts,
    stable_order,
)

__all__ = [
    "PART",
    "PART_ROWS",
    "DaskReleaseCheck",
    "check_dask_release",
    "dask_metadata",
    "write_dask_release",
]

PART = "release-{:05d}.parquet"
PART_ROWS = 1_000_000
"""About this many rows per part (parts are ranges of published group ids)."""


# -- 1. the groups' published content --------------------------------------------------------
def _group_stats(
    part: Part, group: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per group present in the partition: id, lowest and highest code of each QI, rows, and
    the sum of the SA codes' hashes (wrapping: it adds up across partitions)."""
    group = np.asarray(group, dtype=np.int64)
    order = stable_order(group)
    g = group[order]
    if not g.size:
        z = np.zeros(0, dtype=np.int64)
        return (
            z,
            np.zeros((0, part.qi.shape[1]), np.int32),
            np.zeros((0, part.qi.shape[1]), np.int32),
            z,
            z.astype(np.uint64),
        )
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    qi = part.qi[order]
    lo = np.minimum.reduceat(qi, starts, axis=0)
    hi = np.maximum.reduceat(qi, starts, axis=0)
    sizes = np.diff(np.append(starts, g.size))
    sa_hash = np.add.reduceat(mix64(part.sa[order].astype(np.uint64)), starts)
    return g[starts], lo, hi, sizes, sa_hash


def _cell_keys(col: EncodedColumn, lo: np.ndarray, hi: np.ndarray) -> list[np.ndarray]:
    """Sort keys that are a function of the published cell alone: a numeric cell by its
    bounds, a categorical one by its hierarchy node (level, node id): two groups whose codes
    differ under the same node publish the same text and must tie."""
    if col.kind == Kind.NUMERIC:
        return [lo.astype(np.int64), hi.astype(np.int64)]
    h = col.hierarchy
    if h is None:
        raise InternalError(f"categorical column {col.name!r} was encoded without a hierarchy")
    a, b = col.leaves(lo), col.leaves(hi)
    level = h.lca_level(a, b).astype(np.int64)
    node = np.zeros(a.size, dtype=np.int64)
    for lv in np.unique(level).tolist():
        at = level == lv
        node[at] = h.node_ids[lv][a[at]]
    return [level, node]


def _numbering(
    qi_columns: Sequence[EncodedColumn],
    lo: np.ndarray,
    hi: np.ndarray,
    sizes: np.ndarray,
    sa_hash: np.ndarray,
) -> np.ndarray:
    """The id each group is published under: its rank by cells, size and SA hash."""
    keys: list[np.ndarray] = []
    for j, col in enumerate(qi_columns):
        keys += _cell_keys(col, lo[:, j], hi[:, j])
    keys += [sizes, sa_hash]
    rank = np.lexsort(keys[::-1])
    published = np.empty(sizes.size, dtype=np.int64)
    published[rank] = np.arange(sizes.size, dtype=np.int64)
    return published


# -- 2. rows to their part, each part written by a worker ----------------------------------
def _to_parts(
    part: Part, group: np.ndarray, published: np.ndarray, n_parts: int, n_groups: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The partition's rows as (published group, SA code), split by part."""
    pub = published[np.asarray(group, dtype=np.int64)]
    which = pub * n_parts // max(n_groups, 1)
    order = stable_order(which)
    cut = np.searchsorted(which[order], np.arange(n_parts + 1))
    pub, sa = pub[order], part.sa[order]
    return [(pub[cut[i] : cut[i + 1]], sa[cut[i] : cut[i + 1]]) for i in range(n_parts)]


def _write_part(
    pieces: list[tuple[np.ndarray, np.ndarray]],
    path: str,
    first_group: int,
    lo: np.ndarray,
    hi: np.ndarray,
    qi_columns: Sequence[EncodedColumn],
    sa_column: EncodedColumn,
) -> int:
    """Write one part: its rows sorted by (group, SA), each QI's cell of its group (``lo``,
    ``hi``: the code bounds of the part's groups, from ``first_group`` on), the SA value."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    g = np.concatenate([p[0] for p in pieces]) if pieces else np.zeros(0, np.int64)
    sa = np.concatenate([p[1] for p in pieces]) if pieces else np.zeros(0, np.int32)
    order = stable_order(g, sa.astype(np.int64)) if g.size else np.zeros(0, np.intp)
    g, sa = g[order], sa[order]
    local_index = (g - first_group).astype(np.intp)
    arrays = {GROUP: pa.array(g.astype(np.int32))}
    # text columns go to the writer as (index, dictionary): it stores them dictionary-encoded
    # anyway, so no million-row string array is built; without the Arrow schema in the file
    # (store_schema=False) they read back as plain strings, as the in-memory release's do. The
    # dictionary holds each distinct cell once: given one entry per group (repeats), pyarrow's
    # writer falls back to PLAIN pages whose bytes differed between two writes of the same
    # table (same rows read back); distinct entries give dictionary pages, the same bytes on
    # every run (and files a tenth the size)
    for j, col in enumerate(qi_columns):
        texts = np.asarray(col.generalize(lo[:, j], hi[:, j]), dtype=object).astype(str)
        distinct, index = np.unique(texts, return_inverse=True)
        arrays[col.name] = pa.DictionaryArray.from_arrays(
            pa.array(index.astype(np.int32)[local_index]), pa.array(distinct.tolist(), pa.string())
        )
    values = np.asarray(sa_column.values)
    if values.dtype == object:
        arrays[sa_column.name] = pa.DictionaryArray.from_arrays(
            pa.array(sa.astype(np.int32)), pa.array(values.tolist())
        )
    else:
        arrays[sa_column.name] = pa.array(values[sa])
    pq.write_table(pa.table(arrays), path, store_schema=False)
    return int(g.size)


# -- 3. the independent check, from the files ------------------------------------------------------
def _file_pieces(
    path: str, sa_column: EncodedColumn, n_sa: int, bounds: np.ndarray
) -> tuple[list[Piece], np.ndarray]:
    """Read a written part back: its (group, SA) counts per slice of ``bounds`` and its SA
    totals. Only the files' ``group`` and SA columns are read; SA values are matched to codes
    by their text."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = pq.read_table(path, columns=[GROUP, sa_column.name], read_dictionary=[sa_column.name])
    g = t.column(GROUP).to_numpy().astype(np.int64)
    labels = pd.Index([str(v) for v in sa_column.values])
    col = t.column(sa_column.name).combine_chunks()
    if isinstance(col, pa.DictionaryArray) and not col.null_count:
        # a text SA: match the file's few distinct values, then index (not a million texts)
        known = labels.get_indexer(pd.Index(col.dictionary.to_pylist()).astype(str))
        sa = known[col.indices.to_numpy(zero_copy_only=False)]
    else:
        sa = labels.get_indexer(col.to_pandas().astype(str))
    if (sa < 0).any():
        raise PrivacyCheckFailed(f"{path}: an SA value the table does not hold")
    keys, counts = np.unique(g * n_sa + sa, return_counts=True)
    cut = np.searchsorted(keys, bounds * n_sa)
    pieces: list[Piece] = [
        (keys[cut[b] : cut[b + 1]], counts[cut[b] : cut[b + 1]], None, None)
        for b in range(bounds.size - 1)
    ]
    return pieces, np.bincount(sa, minlength=n_sa).astype(np.int64)


# -- the whole write ------------------------------------------------------------------------------
def write_dask_release(
    dt: DaskTable,
    groups: DaskGroups,
    models: Sequence[PrivacyModel],
    out_dir: str | Path,
    provenance: Provenance,
    *,
    overwrite: bool = False,
    protect: Sequence[str | Path] = (),
    n_parts: int | None = None,
) -> list[ModelResult]:
    """Write the generalization release of ``dt`` under ``groups`` to ``out_dir`` if every
    model holds on the written files (module docstring); raises
    :class:`~kerckhoffs.errors.PrivacyCheckFailed` otherwise, leaving nothing."""
    models = list(models)
    client = dt.client
    n_groups, d = groups.n_groups, dt.d
    stats = client.gather(
        [
            client.submit(_group_stats, p, g, pure=False)
            for p, g in zip(dt.parts, groups.groups, strict=True)
        ]
    )
    lo = np.full((n_groups, d), np.iinfo(np.int32).max, dtype=np.int64)
    hi = np.full((n_groups, d), -1, dtype=np.int64)
    sizes = np.zeros(n_groups, dtype=np.int64)
    sa_hash = np.zeros(n_groups, dtype=np.uint64)
    for ids, l_, h_, s_, x_ in stats:
        np.minimum.at(lo, ids, l_)
        np.maximum.at(hi, ids, h_)
        np.add.at(sizes, ids, s_)
        np.add.at(sa_hash, ids, x_)
    del stats
    published = _numbering(dt.qi_columns, lo, hi, sizes, sa_hash)
    by_pub = np.empty(n_groups, dtype=np.int64)
    by_pub[published] = np.arange(n_groups)
    lo, hi = lo[by_pub], hi[by_pub]  # indexed by published id from here on

    # the layout follows the release's size, not the input's files (which it must not show)
    n_parts = n_parts or max(1, min(n_groups, -(-dt.n // PART_ROWS)))
    first = (np.arange(n_parts + 1) * n_groups + n_parts - 1) // n_parts  # ceil division
    pub_f = client.scatter(published, broadcast=True, hash=False)
    cols_f, sa_f = client.scatter([dt.qi_columns, dt.sa_column], broadcast=True, hash=False)
    shuffled = [
        client.submit(_to_parts, p, g, pub_f, n_parts, n_groups, pure=False)
        for p, g in zip(dt.parts, groups.groups, strict=True)
    ]
    with (
        output_directory(out_dir, kind="release", overwrite=overwrite, protect=protect) as claim,
        claim.staging() as tmp,
    ):
        written = []
        for i in range(n_parts):
            a, z = int(first[i]), int(first[i + 1])
            mine = [client.submit(item, s, i, pure=False) for s in shuffled]
            written.append(
                client.submit(
                    _write_part, mine, str(tmp / PART.format(i)), a, lo[a:z], hi[a:z],
                    cols_f, sa_f, pure=False,
                )
            )  # fmt: skip
        rows = sum(client.gather(written))
        del shuffled, written
        if rows != dt.n:
            raise PrivacyCheckFailed(f"the parts hold {rows} rows, the table {dt.n}")
        results = _check_files(dt, models, groups, tmp, n_parts, n_groups)
        failed = [r for r in results if not r.satisfied]
        if failed:
            raise PrivacyCheckFailed(
                "the release was not written: " + "; ".join(r.summary() for r in failed)
            )
        files = {PART.format(i): manifest.file_digest(tmp / PART.format(i)) for i in range(n_parts)}
        meta = dask_metadata(dt, n_groups, provenance, results, models) | {"files": files}
        (tmp / META).write_bytes(manifest.seal(meta))
    return results


def dask_metadata(
    dt: DaskTable,
    n_groups: int,
    provenance: Provenance,
    checks: list[ModelResult] | None,
    models: Sequence[PrivacyModel] | None,
) -> dict[str, Any]:
    """The ``release.json`` of a Dask release, but the parts' digests: the fields of an
    in-memory generalization's (:meth:`kerckhoffs.release.GroupedRelease.metadata`)."""
    sv = dt.schema.sensitive_values
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "scheme": Scheme.GENERALIZATION.value,
        "provenance": provenance.to_dict(),
        "quasi": [{"name": c.name, "kind": c.kind.value} for c in dt.qi_columns],
        "sensitive": {"name": dt.sa_name, "kind": dt.sa_column.kind.value},
        "sensitive_values": sorted(sv) if sv is not None else None,
        "sensitive_mode": dt.schema.sensitive_mode.value,
        "rows": dt.n,
        "groups": n_groups,
        "checks": checks_json(checks, models),
    }


def _check_files(
    dt: DaskTable,
    models: list[PrivacyModel],
    groups: DaskGroups,
    folder: Path,
    n_parts: int,
    n_groups: int,
) -> list[ModelResult]:
    """Every model evaluated on the written parts alone (module docstring, step 3), except
    m-privacy: the files carry no provider (paper 003's release publishes none), so a model
    that reads providers is evaluated from the partitions' ``(group, provider, SA)`` counts
    under the same groups (:func:`~kerckhoffs.engines.dask_check.check_dask`)."""
    on_files = [m for m in models if not m.needs_providers]
    with_providers = [m for m in models if m.needs_providers]
    by_model = dict(zip(on_files, _check_file_models(dt, on_files, folder, n_parts, n_groups),
                        strict=True))  # fmt: skip
    if with_providers:
        checked = check_dask(dt, with_providers, groups.groups, n_groups).results
        by_model.update(zip(with_providers, checked, strict=True))
    return [by_model[m] for m in models]


def _check_file_models(
    dt: DaskTable, models: list[PrivacyModel], folder: Path, n_parts: int, n_groups: int
) -> list[ModelResult]:
    paths = [folder / PART.format(i) for i in range(n_parts)]
    hist_args = (dt.sensitive, dt.schema.sensitive_mode, dt.sa_column.kind)
    return _evaluate_files(dt.client, paths, dt.sa_column, hist_args, models, n_groups)[0]


def _evaluate_files(
    client: Any,
    paths: list[Path],
    sa_column: EncodedColumn,
    hist_args: tuple[Any, ...],
    models: list[PrivacyModel],
    n_groups: int,
) -> tuple[list[ModelResult], int]:
    """``models`` evaluated from the ``(group, SA)`` counts of the release files ``paths``,
    read on the workers (groups ``0 .. n_groups - 1``, each present), and the rows read."""
    n_sa = sa_column.size
    workers = max(len(client.scheduler_info().get("workers", {})), 1)
    bounds = slice_bounds(n_groups, n_sa, workers)
    read = [
        client.submit(_file_pieces, str(path), sa_column, n_sa, bounds, pure=False)
        for path in paths
    ]
    totals = np.sum(client.gather([client.submit(item, r, 1, pure=False) for r in read]), axis=0)
    pieces = [client.submit(item, r, 0, pure=False) for r in read]
    results, sizes = evaluate_pieces(client, pieces, bounds, n_sa, 0, totals, hist_args, models)
    if sizes.size != n_groups or not sizes.all():
        raise PrivacyCheckFailed("the release files do not hold every group")
    if int(sizes.sum()) != int(totals.sum()):
        raise PrivacyCheckFailed("a release file names a group outside the release's groups")
    return results, int(totals.sum())


# -- a release in parts, checked on the workers ----------------------------------------------------
@dataclass(frozen=True)
class DaskReleaseCheck:
    """What :func:`check_dask_release` found: each model's result, the release's rows and
    groups, its algorithm and the reader's notes."""

    results: list[ModelResult]
    rows: int
    groups: int
    algorithm: str
    notes: list[str]


def _sa_values(path: str, sa_name: str) -> np.ndarray:
    import pyarrow.parquet as pq

    column = pq.read_table(path, columns=[sa_name]).column(0).to_pandas()
    return np.asarray(pd.unique(column.dropna()), dtype=object)


def check_dask_release(
    folder: str | Path, models: Sequence[PrivacyModel] | None, client: Any
) -> DaskReleaseCheck:
    """Check a generalization release written in parts (``release-NNNNN.parquet``) on
    ``client``'s workers, for one too large to read in memory: ``release.json`` is verified
    here (its seal), every part's SHA-256 on a worker, and each model is evaluated from the
    parts' ``(group, SA)`` counts (``models`` None: those the release was checked for when it
    was written). m-privacy is refused: the files do not say which provider a row came from.
    One-line :class:`~kerckhoffs.errors.InputError` for anything that is not such a release."""
    folder = Path(folder)
    meta, notes = read_manifest(folder, files=False)
    if meta["scheme"] != "generalization":
        raise InputError(
            f"{folder}: a {meta['scheme']} release; the Dask engine checks generalizations "
            "(check it without --engine dask)"
        )
    names = release_parts(meta, "release")
    if not names:
        names = [n for n in ("release.parquet",) if (folder / n).is_file()]
    if not names:
        raise InputError(
            f"{folder}: no release.parquet nor parts listed in release.json (a CSV-only "
            "release is checked without --engine dask)"
        )
    paths = [folder / n for n in names]
    for p in paths:
        if not p.is_file():
            raise InputError(f"{p}: listed in release.json but missing; refusing the release")
    if not notes:  # sealed: every part byte for byte, on the workers
        digests = client.gather([client.submit(manifest.file_digest, p, pure=False) for p in paths])
        for p, digest in zip(paths, digests, strict=True):
            if digest != meta["files"].get(p.name):
                raise InputError(
                    f"{p}: changed after it was written (its SHA-256 differs from the one in "
                    "release.json); refusing the release"
                )
    chosen = list(models) if models else list(checked_models(meta))
    if not chosen:
        raise ParameterError("this release records no model: give one, e.g. --model k=5")
    if any(m.needs_providers for m in chosen):
        raise ParameterError(
            "m-privacy needs each row's provider, which the files do not show: check it "
            "without --engine dask, with --providers FILE"
        )
    sa_name = meta["sensitive"]["name"]
    values = client.gather([client.submit(_sa_values, str(p), sa_name, pure=False) for p in paths])
    distinct = pd.unique(np.concatenate(values)) if values else np.zeros(0, object)
    if not len(distinct):
        raise InputError(f"{folder}: the release has no rows")
    # the SA encoding the whole release would get: it depends on the distinct values only
    shell = pd.DataFrame({q["name"]: ["*"] * len(distinct) for q in meta["quasi"]})
    shell[sa_name] = distinct
    sa_table = Release.from_frames({"release": shell}, meta).table
    hist_args = (sa_table.sensitive, sa_table.schema.sensitive_mode, sa_table.sa_column.kind)
    n_groups = meta.get("groups")
    if not isinstance(n_groups, int) or n_groups < 1:
        raise InputError(f"{folder / META}: field 'groups' is missing or not a positive count")
    results, rows = _evaluate_files(client, paths, sa_table.sa_column, hist_args, chosen, n_groups)
    algorithm = str((meta.get("provenance") or {}).get("algorithm", "unknown"))
    return DaskReleaseCheck(results, rows, n_groups, algorithm, notes)
