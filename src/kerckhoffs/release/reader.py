"""Reading published tables back: a release directory's files (only those its verified
``release.json`` lists), or another tool's table, into the parts a
:class:`~kerckhoffs.release.Release` is built from. The same code reads what
:meth:`~kerckhoffs.release.Release.write` has just staged, so the fail-closed check runs on
what a reader of the files sees."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs.data import csv_cells
from kerckhoffs.data.io import read_table
from kerckhoffs.data.schema import Column, Kind, Role, Schema, SensitiveMode
from kerckhoffs.data.table import Table
from kerckhoffs.errors import InputError
from kerckhoffs.release.format import COUNT, GROUP, META, Scheme
from kerckhoffs.release.integrity import listed_files, read_manifest, release_parts
from kerckhoffs.release.partition import Partition
from kerckhoffs.release.provenance import Provenance, published_provenance

TABLES = {
    Scheme.GENERALIZATION: ["release"],
    Scheme.BUCKETIZATION: ["qit", "st"],
    Scheme.DP: ["counts"],
    Scheme.SYNTHETIC: ["synthetic", "marginals"],
}
"""The tables each scheme publishes (``NAME.csv`` / ``NAME.parquet``)."""


def read_directory(
    path: Path, verify: bool
) -> tuple[dict[str, pd.DataFrame], dict[str, Any], list[str]]:
    """The tables of release directory ``path``, its checked ``release.json``
    (:func:`~kerckhoffs.release.integrity.read_manifest`) and the notes a reader should see.

    Only files the manifest lists are read: a table dropped into the folder afterwards (a
    forged release.parquet beside a CSV-only release) is never taken for the release. With
    ``verify``, the Parquet file is read when both formats exist (the CSV was verified byte
    for byte), without it the CSV (the file a person edits)."""
    meta, notes = read_manifest(path, verify=verify)
    names = TABLES[Scheme(meta["scheme"])]
    listed = listed_files(meta)
    order = ("parquet", "csv") if verify else ("csv", "parquet")
    text = [q["name"] for q in meta["quasi"]]
    cells = {"release": text, "counts": [*text, meta["sensitive"]["name"]]}
    frames = {}
    for name in names:
        whole = [
            f
            for f in (f"{name}.{ext}" for ext in order)
            if (listed is None or f in listed) and os.path.lexists(path / f)
        ]
        if whole:  # generalized cells are text ("[20-29]" beside "25")
            frames[name] = read_table(path / whole[0], text_columns=cells.get(name, ()))
            if whole[0].endswith(".csv"):
                frames[name] = csv_text(frames[name], meta)
            continue
        parts = release_parts(meta, name)  # a release written in parts (the Dask engine)
        if not parts:
            raise InputError(
                f"{path}: missing {name}.csv or {name}.parquet"
                + ("" if listed is None else f" (of the files {META} lists)")
            )
        frames[name] = pd.concat(
            [read_table(path / f, text_columns=cells.get(name, ())) for f in parts],
            ignore_index=True,
        )
    return frames, meta, notes


def read_grouped(
    frames: dict[str, pd.DataFrame], meta: dict[str, Any], schema: Schema | None
) -> tuple[Table, Partition, Scheme, Provenance]:
    """The table, partition, scheme and provenance of a published generalization or
    bucketization (:meth:`~kerckhoffs.release.Release.from_frames` says how each is read)."""
    scheme = Scheme(meta.get("scheme", Scheme.GENERALIZATION))
    qi_names = [q["name"] for q in meta["quasi"]]
    sa_info = meta["sensitive"]
    sa_name = sa_info["name"]
    sa_kind = Kind(sa_info.get("kind", Kind.CATEGORICAL))
    if scheme == Scheme.GENERALIZATION:
        partition, qi_frame, sa_values = _generalized(frames, qi_names, sa_name)
        qi_kinds = dict.fromkeys(qi_names, Kind.CATEGORICAL)
    else:
        partition, qi_frame, sa_values = _bucketized(frames, qi_names, sa_name)
        qi_kinds = {q["name"]: Kind(q.get("kind", Kind.CATEGORICAL)) for q in meta["quasi"]}
    table = _published_table(qi_frame, qi_kinds, sa_values, sa_name, sa_kind, meta, schema)
    return table, partition, scheme, published_provenance(meta)


def _generalized(
    frames: dict[str, pd.DataFrame], qi_names: list[str], sa_name: str
) -> tuple[Partition, pd.DataFrame, pd.Series]:
    """A generalization's groups, QI cells (as text categories) and SA values."""
    df = frames.get("release")
    if df is None:
        raise InputError("generalized release: no release table")
    _need_columns(df, [*qi_names, sa_name], "release table")
    # each QI column's cells as text once (its distinct values converted, not its rows)
    qi_frame = pd.DataFrame({c: text_categories(df[c]) for c in qi_names})
    codes = [qi_frame[c].cat.codes.to_numpy() for c in qi_names]  # -1: missing
    if GROUP in df.columns:
        partition = Partition.from_labels(_group_labels(df[GROUP], "release table"))
        if partition.n:
            order, starts = partition.order(), partition.starts()
            for c in codes:
                by_group = c[order]
                lo = np.minimum.reduceat(by_group, starts)
                if not np.array_equal(lo, np.maximum.reduceat(by_group, starts)):
                    raise InputError(
                        "release table: some group has more than one combination of QI cells"
                    )
    else:  # rows with the same cells form a group (numbered by first appearance)
        partition = Partition.from_columns(np.stack([c + 1 for c in codes], axis=1))
    return partition, qi_frame, df[sa_name]


def _bucketized(
    frames: dict[str, pd.DataFrame], qi_names: list[str], sa_name: str
) -> tuple[Partition, pd.DataFrame, pd.Series]:
    """A bucketization's groups and exact QIs, each group's SA values laid on its rows in a
    fixed order (the release does not publish which row holds which value)."""
    qit, st = frames.get("qit"), frames.get("st")
    if qit is None or st is None:
        raise InputError("bucketized release: needs both the QI table and the SA table")
    _need_columns(qit, [GROUP, *qi_names], "QI table")
    _need_columns(st, [GROUP, sa_name, COUNT], "SA table")
    partition = Partition.from_labels(_group_labels(qit[GROUP], "QI table"))
    g_codes = pd.Index(pd.unique(qit[GROUP].to_numpy()))
    st_group = g_codes.get_indexer(st[GROUP].to_numpy())
    if (st_group < 0).any():
        raise InputError("SA table names a group that is not in the QI table")
    counts = st[COUNT].to_numpy().astype(np.int64)
    if (counts <= 0).any():
        raise InputError("SA table: counts must be positive")
    per_group = np.bincount(st_group, weights=counts, minlength=partition.n_groups)
    if not np.array_equal(per_group.astype(np.int64), partition.sizes):
        bad = int(np.argmax(per_group != partition.sizes))
        raise InputError(
            f"SA table counts for group {g_codes[bad]!r} add up to {int(per_group[bad])}, "
            f"but the QI table has {int(partition.sizes[bad])} rows in it"
        )
    st_order = np.argsort(st_group, kind="stable")
    sa_per_slot = np.repeat(st[sa_name].to_numpy()[st_order], counts[st_order])
    sa_values = pd.Series(np.empty(partition.n, dtype=object))
    sa_values.iloc[partition.order()] = sa_per_slot
    return partition, qit[qi_names], sa_values


def naming(path: Path, exc: InputError) -> InputError:
    """``exc`` with its message (and command-line message) prefixed by ``path``, unless it
    names it already."""
    if str(exc).startswith(str(path)):
        return exc
    return type(exc)(f"{path}: {exc}", cli=f"{path}: {exc.cli_message}")


def csv_text(df: pd.DataFrame, meta: dict[str, Any]) -> pd.DataFrame:
    """A release table read from its CSV file, with the quotes that kept formula-like text
    cells text removed when ``meta`` says they were added (:mod:`kerckhoffs.data.csv_cells`)."""
    prefix = meta.get(csv_cells.META_KEY)
    if prefix is None:  # written before the protection: the cells are as they were
        return df
    if prefix != csv_cells.PREFIX:
        raise InputError(
            f"{META}: field {csv_cells.META_KEY!r} is {prefix!r}, not {csv_cells.PREFIX!r}"
        )
    return csv_cells.restore_formulas(df)


def text_categories(column: pd.Series) -> pd.Categorical:
    """``column.astype(str)`` as a categorical: each distinct value converted to text once
    (values whose texts coincide, such as ``1`` and ``"1"``, become one category), missing
    cells missing. The published cells of a release, without a string per row."""
    if isinstance(column.dtype, pd.CategoricalDtype):  # read back as a dictionary: its codes
        codes = column.cat.codes.to_numpy()
        uniques = column.cat.categories
    else:
        codes, uniques = pd.factorize(column)
    text = pd.Series(uniques).astype(str)
    t_codes, t_uniques = pd.factorize(text)
    if len(t_codes) == len(uniques) and np.array_equal(t_codes, np.arange(len(uniques))):
        merged = codes  # every category a text of its own, in order: the codes stand
    else:
        merged = np.where(codes < 0, -1, t_codes[np.maximum(codes, 0)] if len(t_codes) else -1)
    return pd.Categorical.from_codes(merged, categories=pd.Index(t_uniques))


def _group_labels(column: pd.Series, what: str) -> np.ndarray:
    """The published ``group`` labels of a table, or a one-line InputError naming the first
    data row (1-based, the header not counted) whose group cell is blank: a row with no
    group cannot be placed in any group a check would count."""
    blank = column.isna().to_numpy()
    if blank.any():
        row = int(np.argmax(blank)) + 1
        raise InputError(
            f"{what}: column {GROUP!r}, data row {row}: the group is blank (every row must "
            "name its group)"
        )
    return column.to_numpy()


def _need_columns(df: pd.DataFrame, names: list[str], what: str) -> None:
    missing = [c for c in names if c not in df.columns]
    if missing:
        raise InputError(f"{what}: column {missing[0]!r} is missing")


def _published_table(
    qi_frame: pd.DataFrame,
    qi_kinds: dict[str, Kind],
    sa_values: pd.Series,
    sa_name: str,
    sa_kind: Kind,
    meta: dict[str, Any],
    schema: Schema | None,
) -> Table:
    """Encode the published columns into a Table (QI cells of generalized releases are
    categorical values of their own)."""
    cols = []
    for name, kind in qi_kinds.items():
        hierarchy = None
        if kind == Kind.CATEGORICAL and schema is not None and meta["scheme"] != "generalization":
            hierarchy = next((c.hierarchy for c in schema.quasi if c.name == name), None)
        cols.append(Column(name, Role.QUASI, kind=kind, hierarchy=hierarchy))
    sv = meta.get("sensitive_values")
    cols.append(Column(sa_name, Role.SENSITIVE, kind=sa_kind))
    pub_schema = Schema(
        tuple(cols),
        frozenset(sv) if sv else None,
        sensitive_mode=SensitiveMode(meta.get("sensitive_mode", SensitiveMode.SET)),
        base_dir=schema.base_dir if schema is not None else None,
    )
    df = qi_frame.copy()
    categorical = isinstance(sa_values.dtype, pd.CategoricalDtype)
    df[sa_name] = sa_values.array if categorical else sa_values.to_numpy()
    if len(df) == 0:
        raise InputError("the published table has no rows")
    return Table.encode(df.reset_index(drop=True), pub_schema, strict_sensitive=False)


__all__ = [
    "TABLES",
    "csv_text",
    "naming",
    "published_provenance",
    "read_directory",
    "read_grouped",
    "text_categories",
]
