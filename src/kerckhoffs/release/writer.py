"""Writing a release's files: staged, checked on what was written (read back from the staged
files), sealed with the SHA-256 of every file, then moved into place (fail closed:
:mod:`kerckhoffs.data.output`). Every implementation of :class:`~kerckhoffs.release.Release`
held in memory writes through :func:`write_release_files`."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs.data import csv_cells, manifest
from kerckhoffs.data.io import (
    read_parquet_texts_as_categories,
    read_table,
    release_memory,
    write_csv,
)
from kerckhoffs.data.output import output_directory
from kerckhoffs.errors import InputError, PrivacyCheckFailed
from kerckhoffs.models.base import ModelResult, PrivacyModel, model_classes
from kerckhoffs.release.format import META
from kerckhoffs.release.reader import csv_text


def _json_num(x: float) -> float | str:
    return "inf" if x == np.inf else float(x)


def checks_json(
    checks: list[ModelResult] | None, models: Sequence[PrivacyModel] | None
) -> list[dict[str, Any]]:
    """The ``checks`` field of ``release.json``: each independent check that passed, with
    its model recorded as data when the models are given (a release read back remembers
    them).

    ``achieved`` is what a reader of the release can recompute (k, l, t, ... from the
    published groups), except for a model that reads the data providers (m-privacy, paper
    003): its achieved m comes from provider counts the release does not show (for instance
    that some coalition of m + 1 providers breaks a group), so it is withheld (``null``); the
    verdict at the required m is published."""
    classes = model_classes()
    out = []
    for i, r in enumerate(checks or []):
        model = models[i] if models is not None else None
        cls = type(model) if model is not None else classes.get(r.model)
        private = cls is not None and cls.needs_providers
        entry = {
            "model": r.model,
            "parameter": r.parameter,
            "achieved": None if private else _json_num(r.achieved),
            "satisfied": r.satisfied,
        }
        out.append(entry | ({"spec": model.to_dict()} if model is not None else {}))
    return out


def writable_models(models: Sequence[PrivacyModel], formats: tuple[str, ...]) -> list[PrivacyModel]:
    """The models a write checks (at least one: nothing is published unchecked), after
    refusing an unknown output format; both before any work."""
    chosen = list(models)
    if not chosen:
        raise PrivacyCheckFailed("refusing to write a release without a privacy model to check")
    bad = sorted(set(formats) - {"csv", "parquet"})
    if bad:
        raise InputError(f"unknown output format {bad[0]!r} (csv, parquet)")
    return chosen


def write_release_files(
    out_dir: str | Path,
    frames: dict[str, pd.DataFrame],
    meta: dict[str, Any],
    formats: tuple[str, ...],
    overwrite: bool,
    check: Callable[[dict[str, pd.DataFrame]], dict[str, Any]] | None = None,
    text: dict[str, list[str]] | None = None,
) -> None:
    """Write checked ``frames`` and their ``release.json`` (sealed, with the SHA-256 of every
    file) into ``out_dir`` through a staging directory, so a failed write leaves nothing
    (:mod:`kerckhoffs.data.output`).

    ``check`` is the fail-closed check on what was written: it gets the tables read back from
    the staged files and returns the metadata to seal (raising leaves nothing written). The
    tables are read from the Parquet files when they were written (text columns as
    dictionaries: no string per row), and each CSV file is then rendered from the table read
    back (:func:`~kerckhoffs.data.io.write_csv`) and its bytes on disk compared by SHA-256
    with the bytes rendered, so it is the checked table without being parsed; with CSV
    alone, the CSV is written first and parsed back. ``frames`` is emptied once written, so
    their memory is free for the read-back.
    ``text``: per table, categorical columns that stand for pandas ``str`` columns (see
    :meth:`Release._frames_and_rows`), written as the ``str`` column would be.
    """
    names = [f"{name}.{fmt}" for name in frames for fmt in formats]
    tables = list(frames)
    if "csv" in formats:  # text cells a spreadsheet would run as formulas are kept text
        meta = dict(meta, **{csv_cells.META_KEY: csv_cells.PREFIX})
    # With a check and a Parquet file, the CSV is rendered once, from the table read back from
    # the Parquet file (the table the check sees), and the bytes that reach the disk are
    # compared with the bytes rendered: the CSV is the checked table by construction
    render_from_parquet = check is not None and "parquet" in formats and "csv" in formats
    with (
        output_directory(out_dir, kind="release", overwrite=overwrite) as claim,
        claim.staging() as tmp,
    ):
        for name, df in frames.items():
            if "csv" in formats and not render_from_parquet:
                write_csv(csv_cells.protect_formulas(df), tmp / f"{name}.csv")
            if "parquet" in formats:
                write_parquet(df, tmp / f"{name}.parquet", (text or {}).get(name, []))
        frames.clear()
        del df
        release_memory()  # the tables' memory, before they are read back
        written: dict[str, pd.DataFrame] = {}
        rendered: dict[str, str] = {}
        if check is not None:
            written = {name: read_back(tmp, name, meta, formats) for name in tables}
        if render_from_parquet:
            for name in tables:
                digest = hashlib.sha256()
                with open(tmp / f"{name}.csv", "wb") as fh:
                    write_csv(csv_cells.protect_formulas(written[name]), _Tee(fh, digest))
                rendered[f"{name}.csv"] = f"{manifest.ALGO}:{digest.hexdigest()}"
        meta["files"] = {f: manifest.file_digest(tmp / f) for f in sorted(names)}
        for f, want in rendered.items():
            if meta["files"][f] != want:
                raise PrivacyCheckFailed(
                    f"release not written: {f} on disk is not the CSV rendering of the checked "
                    "table"
                )
        if check is not None:
            sealed = {k: meta[k] for k in ("files", csv_cells.META_KEY) if k in meta}
            meta = dict(check(written), **sealed)
        (tmp / META).write_bytes(manifest.seal(meta))


PARQUET_ROW_GROUP = 1024 * 1024
"""pyarrow's default largest row group (rows), which ``DataFrame.to_parquet`` writes with."""

TEXT_DTYPE = pd.StringDtype("pyarrow", na_value=np.nan)
"""pandas' default ``str`` dtype: the dtype of the published text columns."""


def _is_categorical(column: pd.Series) -> bool:
    return isinstance(column.dtype, pd.CategoricalDtype)


def write_parquet(df: pd.DataFrame, path: Path, text: list[str]) -> None:
    """``df.to_parquet(path, index=False)`` with the categorical columns ``text`` written as
    pandas ``str`` columns: the same bytes as for the frame holding them as ``str`` (arrow
    decodes the categories; no Python string per row), with the text of one row group
    (:data:`PARQUET_ROW_GROUP` rows) in memory at a time."""
    if len(df) <= PARQUET_ROW_GROUP:
        _as_text(df, text).to_parquet(path, index=False)
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    head = _as_text(df.head(0), text)
    schema = pa.Table.from_pandas(head, preserve_index=False).schema
    with pq.ParquetWriter(path, schema) as writer:
        for start in range(0, len(df), PARQUET_ROW_GROUP):
            part = _as_text(df.iloc[start : start + PARQUET_ROW_GROUP], text)
            writer.write_table(pa.Table.from_pandas(part, preserve_index=False, schema=schema))
            del part
            pa.default_memory_pool().release_unused()  # the row group's text, back to the OS


def _as_text(df: pd.DataFrame, text: list[str]) -> pd.DataFrame:
    """``df`` with the categorical columns ``text`` as pandas ``str`` columns (decoded by
    arrow)."""
    if not text:
        return df
    import pyarrow as pa

    columns = {}
    for name in text:
        decoded = pa.array(df[name].array).cast(pa.large_string())
        columns[name] = pd.arrays.ArrowStringArray(pa.chunked_array([decoded]), dtype=TEXT_DTYPE)
    return df.assign(**columns)


def text_columns(frames: dict[str, pd.DataFrame], names: set[str]) -> dict[str, list[str]]:
    """Per table, the columns among ``names`` held as categoricals: the compact text columns
    :func:`write_release_files` writes as pandas ``str`` columns."""
    return {
        name: [c for c in df.columns if c in names and _is_categorical(df[c])]
        for name, df in frames.items()
    }


def read_back(
    folder: Path, name: str, meta: dict[str, Any], formats: tuple[str, ...]
) -> pd.DataFrame:
    """The table ``name`` as written into ``folder``: its Parquet file (string columns as
    pandas categoricals) when one was written, else its CSV, parsed."""
    if "parquet" not in formats:
        text = [q["name"] for q in meta["quasi"]]
        cells = {"release": text, "counts": [*text, meta["sensitive"]["name"]]}
        df = read_table(folder / f"{name}.csv", text_columns=cells.get(name, ()))
        return csv_text(df, meta)
    return read_parquet_texts_as_categories(folder / f"{name}.parquet")


class _Tee:
    """A binary sink that writes to a file and hashes what it writes."""

    def __init__(self, fh: Any, digest: Any) -> None:
        self.fh = fh
        self.digest = digest
        self.closed = False

    def write(self, data: bytes | memoryview) -> int:
        self.digest.update(data)
        return int(self.fh.write(data))

    def flush(self) -> None:
        self.fh.flush()


__all__ = [
    "PARQUET_ROW_GROUP",
    "TEXT_DTYPE",
    "checks_json",
    "read_back",
    "text_columns",
    "writable_models",
    "write_parquet",
    "write_release_files",
]
