"""A table whose rows stay on Dask workers: encoded per partition against global dictionaries.

Beyond one machine, Dask runs the same algorithms (``docs/guide/dask.md``,
``docs/theory/choices.md#count-representation``): a step that needs data asks for counts, the
decision runs on the client. This module makes the data side: the rows of a partitioned Parquet
dataset (or a Dask DataFrame) encoded into the same int32 codes
:meth:`kerckhoffs.data.table.Table.encode` gives the whole table in memory, without collecting a row
to the client.

Two passes over the partitions:

1. **Local encode.** Each worker encodes its partition with :meth:`Table.encode` (every
   validation and missing-value policy of the in-memory path: the same errors, prefixed with
   the partition) and sends back only each column's *domain*: the distinct values present
   (numeric), the leaves present (categorical without a hierarchy), the providers present.
   A categorical column with a hierarchy has a global domain already (the hierarchy's leaves).
2. **Global dictionaries, remap.** The client unions the domains into the column encodings the
   whole table would get (numeric codes: ranks of the sorted distinct values; flat categorical
   codes: sorted labels, numeric order for numeric data; the SA's sensitive subset checked on
   the whole domain) and each worker maps its local codes to the global ones with one gather.

What crosses to the client: per partition its row count and the distinct values of each
column, never a row. The codes stay on the workers as futures (:attr:`DaskTable.parts`); every
later step (:mod:`kerckhoffs.engines.dask_check`, :mod:`kerckhoffs.engines.dask_mondrian`)
maps functions over them and sums what they return.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs.data.hierarchy import Hierarchy, format_value
from kerckhoffs.data.schema import MISSING_LABEL, Kind, Schema
from kerckhoffs.data.table import (
    EncodedColumn,
    Table,
    check_columns,
    encode_column,
    sensitive_flags,
)
from kerckhoffs.errors import EmptyTable, InputError, InternalError, KerckhoffsError, SchemaError

__all__ = [
    "PART_ROWS",
    "DaskTable",
    "Failed",
    "Part",
    "Where",
    "encode_dask",
    "item",
    "parquet_parts",
    "raise_failed",
    "row_key",
]


@dataclass(frozen=True, eq=False)
class Part:
    """One partition's encoded rows, as a worker holds them: ``qi`` ``[n, d]`` and ``sa``
    ``[n]`` in the smallest unsigned type of their domains (global codes), ``provider`` int32
    ``[n]`` or None; ``first_row`` the input position of
    the partition's first row, ``row_ids`` int64 (input positions of the rows kept) only when
    the schema dropped some (else they are ``first_row + arange(n)``, not stored: 8 bytes a
    row saved on every worker). (Global positions of
    the rows kept, in the input's row order)."""

    qi: np.ndarray
    sa: np.ndarray
    provider: np.ndarray | None
    first_row: int
    row_ids: np.ndarray | None = None

    def input_rows(self) -> np.ndarray:
        """The input positions of the rows kept."""
        if self.row_ids is not None:
            return self.row_ids
        return self.first_row + np.arange(self.n, dtype=np.int64)

    @property
    def n(self) -> int:
        return int(self.sa.shape[0])


@dataclass(eq=False)
class DaskTable:
    """An encoded table partitioned over Dask workers (module docstring).

    ``parts`` are futures of :class:`Part` (one per input partition, in order), ``lengths`` the
    rows each holds after missing-value drops; the column encodings are global and equal to
    those :meth:`Table.encode` gives the concatenated table.
    """

    schema: Schema
    client: Any
    parts: list[Any]
    lengths: np.ndarray
    qi_columns: tuple[EncodedColumn, ...]
    sa_column: EncodedColumn
    sensitive: np.ndarray
    provider_values: np.ndarray | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def n(self) -> int:
        """Number of rows (after the schema's missing-value drops)."""
        return int(self.lengths.sum())

    @property
    def starts(self) -> np.ndarray:
        """The table position (after drops) of each partition's first row."""
        return np.concatenate([[0], np.cumsum(self.lengths)[:-1]]).astype(np.int64)

    @property
    def d(self) -> int:
        return len(self.qi_columns)

    @property
    def n_sa(self) -> int:
        return self.sa_column.size

    @property
    def qi_names(self) -> list[str]:
        return [c.name for c in self.qi_columns]

    @property
    def sa_name(self) -> str:
        return self.sa_column.name

    def __repr__(self) -> str:
        return (
            f"DaskTable(n={self.n}, partitions={len(self.parts)}, qi={self.qi_names}, "
            f"sa={self.sa_name!r})"
        )

    def shell(self) -> Table:
        """A :class:`Table` with this table's encodings and no rows: what the in-memory
        decision code reads (domains, hierarchies, sensitive flags) besides the counts."""
        return Table(
            schema=self.schema,
            qi=np.zeros((0, self.d), dtype=np.int32),
            sa=np.zeros(0, dtype=np.int32),
            qi_columns=self.qi_columns,
            sa_column=self.sa_column,
            sensitive=self.sensitive,
            provider=None if self.provider_values is None else np.zeros(0, dtype=np.int32),
            provider_values=self.provider_values,
            row_ids=np.zeros(0, dtype=np.int64),
        )

    def compute(self) -> Table:
        """The whole table in this process (for tests and small data: it collects every row)."""
        parts: list[Part] = self.client.gather(self.parts)
        qi = np.concatenate([p.qi for p in parts]) if parts else np.zeros((0, self.d), np.int32)
        table = self.shell()
        table.qi = np.asfortranarray(qi, dtype=np.int32)
        table.sa = np.concatenate([p.sa for p in parts]).astype(np.int32)
        if self.provider_values is not None:
            table.provider = np.concatenate([p.provider for p in parts])
        table.row_ids = np.concatenate([p.input_rows() for p in parts])
        table.notes = list(self.notes)
        return table


# -- pass 1: each worker encodes its partition and reports the domains it saw -------------------
@dataclass(frozen=True)
class _Domain:
    """What a partition tells the client: its input rows, rows kept, and per column the
    distinct values it holds (numeric: sorted values; categorical: leaf labels present)."""

    rows_in: int
    rows_kept: int
    values: list[np.ndarray]  # per QI, then the SA
    kinds: list[Kind]  # per QI, then the SA: the kind the local encode gave
    numeric_order: list[bool]  # per column: a flat domain ordered by number, not by label
    providers: np.ndarray | None
    notes: list[str]


@dataclass(frozen=True)
class Where:
    """Where a partition's rows come from: a Parquet file and the number of its rows before
    the partition's first (errors name the file and the row as the file numbers it), or, for
    a Dask DataFrame, only the partition's index."""

    file: str | None
    first_row: int
    index: int

    def __str__(self) -> str:
        return self.file if self.file is not None else f"partition {self.index}"


@dataclass(frozen=True)
class Failed:
    """Bad input found on a worker, returned as a value (a task that raised would make
    distributed log a traceback block on the worker's stderr, the terminal of a local
    cluster): the error's class and one-line messages, raised again on the client by
    :func:`raise_failed`."""

    error: type[KerckhoffsError]
    message: str
    cli: str | None

    @classmethod
    def of(cls, e: KerckhoffsError, where: Where) -> Failed:
        cli = None if e.cli is None else f"{where}: {e.cli}"
        return cls(type(e), f"{where}: {e}", cli)

    def exception(self) -> KerckhoffsError:
        e = self.error.__new__(self.error)
        KerckhoffsError.__init__(e, self.message, cli=self.cli)
        return e


def raise_failed(results: Sequence[Any]) -> None:
    """Raise the first :class:`Failed` among ``results`` (in partition order), if any."""
    for r in results:
        if isinstance(r, Failed):
            raise r.exception()


def _local_encode(df: pd.DataFrame, schema: Schema, where: Where) -> Table:
    return Table.encode(df.reset_index(drop=True), schema, strict_sensitive=False,
                        first_row=where.first_row)  # fmt: skip


def _present(enc: EncodedColumn, codes: np.ndarray) -> np.ndarray:
    """The values of ``enc`` that occur in ``codes`` (all of them for numeric columns, whose
    domain is the values present; the leaves present for a categorical column)."""
    if enc.kind == Kind.NUMERIC:
        return np.asarray(enc.values)
    seen = np.zeros(enc.size, dtype=bool)
    seen[codes] = True
    return np.asarray(enc.values, dtype=object)[seen]


def _domain(table: Table, df: pd.DataFrame, where: Where) -> _Domain:
    cols = [*table.qi_columns, table.sa_column]
    codes = [*(table.qi[:, j] for j in range(table.d)), table.sa]
    values = [_present(c, x) for c, x in zip(cols, codes, strict=True)]
    # Table.encode orders a flat domain by number when the column is numeric data (no
    # missing cell turned into the label "?"), by label otherwise
    numeric = [
        pd.api.types.is_numeric_dtype(df[c.name]) and MISSING_LABEL not in set(map(str, v))
        for c, v in zip(cols, values, strict=True)
    ]
    return _Domain(
        rows_in=len(df),
        rows_kept=table.n,
        values=values,
        kinds=[c.kind for c in cols],
        numeric_order=numeric,
        providers=None if table.provider_values is None else np.asarray(table.provider_values),
        notes=[f"{where}: {n}" for n in table.notes],
    )


def _empty_domain(rows_in: int, where: Where) -> _Domain:
    """A partition with no row, or none left once missing values were dropped: nothing to
    encode, the other partitions make the table."""
    notes = [f"{where}: all {rows_in:,} row(s) dropped for missing values"] if rows_in else []
    return _Domain(rows_in, 0, [], [], [], None, notes)


def _encode_and_describe(
    df: pd.DataFrame | Failed, schema: Schema, where: Where
) -> tuple[Table | None, _Domain | Failed]:
    """Pass 1 on a worker: the partition encoded (kept there) and its domain (sent to the
    client); bad input comes back as :class:`Failed` instead of raising."""
    if isinstance(df, Failed):
        return None, df
    try:
        table = _local_encode(df, schema, where)
    except EmptyTable:
        return None, _empty_domain(len(df), where)
    except KerckhoffsError as e:
        return None, Failed.of(e, where)
    described = _domain(table, df, where)
    # every partition's local table waits on the workers until all domains are in: keep it
    # small (codes in the smallest type of their local domains, no row ids unless rows were
    # dropped, no input index)
    top = max((c.size for c in table.qi_columns), default=1)
    table.qi = table.qi.astype(np.min_scalar_type(max(top - 1, 0)), order="F")
    table.sa = table.sa.astype(np.min_scalar_type(max(table.n_sa - 1, 0)))
    if table.row_ids is None:  # each partition is encoded with its row ids
        raise InternalError("a partition's local table has no row ids")
    if table.row_ids.size == 0 or int(table.row_ids[-1]) == table.n - 1:
        table.row_ids = None
    table.index = None
    return table, described


# -- pass 2: the client's global dictionaries, the workers' remap --------------------------------
def _global_column(
    schema: Schema, name: str, domains: list[np.ndarray], kind: Kind, numeric_order: bool
) -> EncodedColumn | None:
    """The encoding the whole table gives column ``name`` (as :func:`encode_column` would on
    the concatenated column), from the partitions' distinct values; None when it is the
    partitions' own (a categorical column with a hierarchy: its leaves)."""
    col = schema.column(name)
    values = [d for d in domains if len(d)]
    if kind == Kind.CATEGORICAL and col.hierarchy is not None:
        return None
    if kind == Kind.NUMERIC:
        merged = np.unique(np.concatenate(values))
        _, enc = encode_column(col, pd.Series(merged), schema, np.arange(merged.size))
        return enc
    labels = {str(v) for d in values for v in d}
    if numeric_order:  # flat hierarchy of numeric data: numeric order
        leaves = sorted(labels, key=_number)
        hierarchy = Hierarchy.flat(leaves, name=f"{name} (flat)", keep_order=True)
    else:
        hierarchy = Hierarchy.flat(labels, name=f"{name} (flat)")
    return EncodedColumn(
        name, Kind.CATEGORICAL, np.asarray(hierarchy.leaves, dtype=object), hierarchy, None
    )


def _number(label: str) -> float:
    """The number a flat leaf label of numeric data stands for (booleans: 0 and 1)."""
    bools = {"False": 0.0, "True": 1.0}
    return bools[label] if label in bools else float(label)


def _remap(local: EncodedColumn, global_: EncodedColumn) -> np.ndarray:
    """Global code of each local code (the same value or leaf label)."""
    if local.kind == Kind.NUMERIC:
        at = pd.Index(global_.values).get_indexer(np.asarray(local.values))
    else:
        glob = pd.Index([format_value(v) for v in global_.values])
        at = glob.get_indexer([format_value(v) for v in local.values])
    if (at < 0).any():  # pragma: no cover - the global domain is the union of the local ones
        raise AssertionError(f"column {local.name!r}: a local value has no global code")
    return at.astype(np.int32)


def _to_global(
    table: Table | None,
    qi_columns: Sequence[EncodedColumn],
    sa_column: EncodedColumn,
    provider_values: np.ndarray | None,
    offset: int,
) -> Part:
    # the smallest integer type of the domains: 1-2 bytes a code instead of 4 on most tables
    code_type = np.min_scalar_type(max(max((c.size for c in qi_columns), default=1) - 1, 0))
    if table is None:  # a partition without rows
        sa_empty = np.zeros(0, dtype=np.min_scalar_type(max(sa_column.size - 1, 0)))
        no_provider = None if provider_values is None else np.zeros(0, dtype=np.int32)
        return Part(np.zeros((0, len(qi_columns)), code_type), sa_empty, no_provider, offset)
    qi = np.empty(table.qi.shape, dtype=code_type)
    for j, (loc, glob) in enumerate(zip(table.qi_columns, qi_columns, strict=True)):
        qi[:, j] = _remap(loc, glob)[table.qi[:, j]] if loc.size else table.qi[:, j]
    sa_type = np.min_scalar_type(max(sa_column.size - 1, 0))
    sa = (_remap(table.sa_column, sa_column)[table.sa] if table.n else table.sa).astype(sa_type)
    provider = None
    if provider_values is not None and table.provider is not None:
        if table.provider_values is None:  # an encoded provider column has its values
            raise InternalError("a partition's provider codes have no values")
        at = pd.Index(provider_values).get_indexer(np.asarray(table.provider_values))
        provider = at.astype(np.int32)[table.provider]
    row_ids = None if table.row_ids is None else table.row_ids + offset  # (None: all kept)
    return Part(qi, sa, provider, offset, row_ids)


# -- reading Parquet files ------------------------------------------------------------------------
PART_ROWS = 1_000_000
"""Row groups of a Parquet file are read in runs of about this many rows, one partition each."""


def parquet_parts(
    files: Sequence[str | Path], schema: Schema | None = None
) -> list[tuple[str, list[int], int]]:
    """The partitions of ``files``, in order: (file, its row groups, the file's rows before
    them) in runs of about :data:`PART_ROWS` rows (a small file is one partition).

    Reads each file's footer only, so bad input found there is refused before any worker
    reads a row (the CLI calls it before it starts a cluster): a file that is not Parquet, a
    file without a column ``schema`` names, no row in any file; each a one-line
    :class:`~kerckhoffs.errors.InputError` naming the file.
    """
    import pyarrow.parquet as pq

    parts: list[tuple[str, list[int], int]] = []
    total = 0
    for f in files:
        try:
            pf = pq.ParquetFile(str(f))
            meta = pf.metadata
        except Exception as e:  # pyarrow's ArrowInvalid, OSError: one line naming the file
            raise InputError(f"{f}: not a readable Parquet file ({e})") from None
        if schema is not None:
            try:
                check_columns(list(pf.schema_arrow.names), schema)
            except KerckhoffsError as e:
                raise type(e)(f"{f}: {e}") from None
        run: list[int] = []
        rows = before = 0
        for i in range(meta.num_row_groups):
            if run and rows + meta.row_group(i).num_rows > PART_ROWS:
                parts.append((str(f), run, before))
                run, before, rows = [], before + rows, 0
            run.append(i)
            rows += meta.row_group(i).num_rows
        parts.append((str(f), run, before))
        total += meta.num_rows
    if schema is not None and files and total == 0:
        raise EmptyTable(f"{_source(files)}: the table has no rows (every file is empty)")
    return parts


def _source(files: Sequence[str | Path]) -> str:
    """The input files, named in a message (the first three)."""
    names = list(dict.fromkeys(str(f) for f in files))
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _read_part(path: str, row_groups: list[int], name: str) -> pd.DataFrame | Failed:
    """One partition of the file at ``path`` (absolute: a worker's working directory is not
    the client's), its text columns as categoricals (``Table.encode`` gives the same codes as
    from strings, 2.5x faster with the read on a 1M-row part); a file that cannot be read is
    :class:`Failed`, naming it as the user did (``name``)."""
    from kerckhoffs.data.io import read_parquet_texts_as_categories

    try:
        return read_parquet_texts_as_categories(path, row_groups)
    except Exception as e:  # pyarrow's errors: one line naming the file
        return Failed(InputError, f"{name}: cannot read its rows ({e})", None)


def encode_dask(data: Any, schema: Schema, client: Any) -> DaskTable:
    """Encode a Dask DataFrame, or Parquet files (a path, a folder, a glob or a list of local
    files; a URL such as ``s3://...`` goes through ``dask.dataframe.read_parquet``), on
    ``client``'s workers.

    The codes equal those of ``Table.encode`` on the whole table in memory; the rows never
    leave the workers (module docstring). Files are read here (:func:`parquet_parts`), their
    text columns as categoricals. Raises the in-memory path's one-line errors, naming the
    partition, and :class:`~kerckhoffs.errors.InputError` for an empty table.
    """
    import dask
    import dask.dataframe as dd

    if schema.count is not None:
        raise SchemaError(
            f"column {schema.count.name!r} has role count (each line stands for several "
            "individuals): give one row per individual"
        )
    if schema.base_dir is not None:  # hierarchy files, found by the workers from their own cwd
        schema = replace(schema, base_dir=schema.base_dir.resolve())
    if isinstance(data, bytes):
        data = data.decode()
    if isinstance(data, str) and "://" in data:  # a remote store (s3://...): Dask reads it
        data = dd.read_parquet(data)
    if isinstance(data, (str, list, tuple)) or hasattr(data, "__fspath__"):
        from kerckhoffs.engines.dask_cluster import parquet_files

        paths = (
            [Path(str(f)) for f in data] if isinstance(data, (list, tuple)) else parquet_files(data)
        )
        found = parquet_parts(paths, schema)
        # not pure: the same file may hold other rows at the next run on a long-lived cluster
        delayed_parts = [
            dask.delayed(_read_part, pure=False)(str(Path(f).resolve()), g, f) for f, g, _ in found
        ]
        wheres = [Where(f, before, i) for i, (f, _, before) in enumerate(found)]
        source = _source(paths)
    elif isinstance(data, dd.DataFrame):
        delayed_parts = data.to_delayed()
        wheres = [Where(None, 0, i) for i in range(len(delayed_parts))]
        source = "the Dask DataFrame"
    else:
        raise InputError("encode_dask needs a Dask DataFrame or Parquet files (path or glob)")
    described = [
        dask.delayed(_encode_and_describe, pure=True)(p, schema, w)
        for p, w in zip(delayed_parts, wheres, strict=True)
    ]
    local = client.compute(described)  # (Table, _Domain) per partition, kept on the workers
    found_domains = client.gather([client.submit(item, f, 1, pure=False) for f in local])
    raise_failed(found_domains)
    domains: list[_Domain] = found_domains
    if not sum(d.rows_kept for d in domains):
        if sum(d.rows_in for d in domains):
            raise EmptyTable(f"{source}: no rows left after dropping missing values")
        raise EmptyTable(f"{source}: the table has no rows")
    tables = [client.submit(item, f, 0, pure=False) for f in local]
    quasi, sa_col = list(schema.quasi), schema.sensitive
    cols = [*quasi, sa_col]
    any_table = next(i for i, d in enumerate(domains) if d.rows_kept)
    # a partition's encodings (its hierarchies' leaves are global), not its rows
    template = client.submit(_encodings, local[any_table], pure=False).result()
    encodings = []
    kept = [d for d in domains if d.rows_kept]
    where_kept = [w for w, d in zip(wheres, domains, strict=True) if d.rows_kept]
    for j, col in enumerate(cols):
        kinds = {d.kinds[j] for d in kept}
        if len(kinds) > 1:
            first = {d.kinds[j]: w for w, d in reversed(list(zip(where_kept, kept, strict=True)))}
            raise SchemaError(
                f"column {col.name!r} is numeric in {first[Kind.NUMERIC]} and text in "
                f"{first[Kind.CATEGORICAL]}: declare its kind in the schema "
                '(kind = "numeric" or "categorical")'
            )
        numeric_order = all(d.numeric_order[j] for d in kept)
        enc = _global_column(
            schema, col.name, [d.values[j] for d in kept], kinds.pop(), numeric_order
        )
        if enc is None:
            enc = template[j]
        encodings.append(enc)
    qi_columns, sa_column = tuple(encodings[:-1]), encodings[-1]
    provider_values = None
    if schema.provider is not None:
        merged = [d.providers for d in domains if d.providers is not None and len(d.providers)]
        provider_values = np.asarray(
            pd.Index(np.concatenate(merged)).unique().sort_values(), dtype=object
        )
    sensitive = sensitive_flags(schema, sa_column)
    offsets = np.concatenate([[0], np.cumsum([d.rows_in for d in domains])[:-1]])
    qi_f, sa_f = client.scatter([qi_columns, sa_column], broadcast=True, hash=False)
    parts = [
        client.submit(_to_global, t, qi_f, sa_f, provider_values, int(o), pure=False)
        for t, o in zip(tables, offsets, strict=True)
    ]
    del local, tables
    notes = [n for d in domains for n in d.notes]
    lengths = np.array([d.rows_kept for d in domains], dtype=np.int64)
    return DaskTable(
        schema, client, parts, lengths, qi_columns, sa_column, sensitive, provider_values, notes
    )


def _encodings(described: tuple[Table, _Domain]) -> tuple[EncodedColumn, ...]:
    """A partition's column encodings, QIs then SA."""
    table = described[0]
    return (*table.qi_columns, table.sa_column)


def row_key(codes: np.ndarray, radix: Sequence[int]) -> np.ndarray:
    """One int64 key per row of ``codes`` (``[n, k]``, column ``j`` in ``0 .. radix[j] - 1``):
    the row read as a mixed-radix number, so equal rows get equal keys. The caller makes sure
    the product of ``radix`` fits 63 bits."""
    key = np.zeros(codes.shape[0], dtype=np.int64)
    for j, r in enumerate(radix):
        key *= r
        key += codes[:, j]
    return key


def item(seq: Any, index: int) -> Any:
    """``seq[index]`` as a task: one element of a result a worker holds, taken on that worker
    (the engines' tasks return tuples and per-slice lists)."""
    return seq[index]
