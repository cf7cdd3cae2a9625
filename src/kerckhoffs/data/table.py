"""The encoded table: every algorithm, check and attack works on its integer arrays.

A DataFrame is encoded once (``docs/concepts.md``, section Table) into ``qi`` int32 [n, d], ``sa``
int32 [n] and ``provider`` int32 [n], with one :class:`EncodedColumn` per column to decode codes
back.

- Categorical codes are leaf indices in the hierarchy's depth-first order, so each hierarchy
  node is a contiguous code range (the LCA of a group is the LCA of its min and max code).
  The code domain is every leaf of the hierarchy, present in the data or not.
- Numeric codes are ranks of the sorted distinct values present in the data.
- The sensitive attribute is encoded like a categorical column when it has a hierarchy, and
  by sorted distinct value otherwise (numeric order for a numeric SA, used by ordered EMD).

Missing cells follow the schema's policy: ``error`` (default) names the column and rows,
``category`` makes missing the value ``"?"``, ``drop`` removes the rows and reports it.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from kerckhoffs.data.hierarchy import Hierarchy, format_value
from kerckhoffs.data.io import read_columns, read_table, release_memory
from kerckhoffs.data.schema import MISSING_LABEL, Column, Kind, MissingPolicy, Role, Schema
from kerckhoffs.errors import EmptyTable, HierarchyError, InputError, InternalError, SchemaError


@dataclass(frozen=True, eq=False)
class EncodedColumn:
    """The code domain of one column and how to turn codes back into values.

    ``values[c]`` is the value of code ``c``. ``hierarchy`` is the column's taxonomy (always
    present for categorical columns; optional for numeric ones) and ``leaf_of_code[c]`` the
    hierarchy leaf of code ``c`` (``None`` when codes are the leaves themselves).
    """

    name: str
    kind: Kind
    values: np.ndarray
    hierarchy: Hierarchy | None = None
    leaf_of_code: np.ndarray | None = None
    _labels: np.ndarray | None = field(default=None, repr=False)

    @property
    def size(self) -> int:
        """Number of codes in the domain."""
        return len(self.values)

    @property
    def labels(self) -> np.ndarray:
        """Each code's value as a string (numpy StringDType)."""
        labels = self._labels
        if labels is None:
            labels = np.array([format_value(v) for v in self.values], dtype=np.dtypes.StringDType())
            object.__setattr__(self, "_labels", labels)
        return labels

    def decode(self, codes: np.ndarray) -> np.ndarray:
        """Original values of ``codes``."""
        return self.values[codes]

    def leaves(self, codes: np.ndarray) -> np.ndarray:
        """Hierarchy leaf index of ``codes``."""
        return codes if self.leaf_of_code is None else self.leaf_of_code[codes]

    def generalize(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Published cell of groups whose codes span ``[lo, hi]`` (vectorized over groups).

        Numeric columns publish ``[lo-hi]`` (the value itself when lo = hi); categorical ones
        the lowest common hierarchy node (so a value missing from a generalized group's cell
        cannot occur: the cell covers every row's value).
        """
        if self.kind == Kind.NUMERIC:
            lab = self.labels
            span = np.strings.add(np.strings.add(np.strings.add("[", lab[lo]), "-"), lab[hi])
            return np.where(lo == hi, lab[lo], np.strings.add(span, "]"))
        if self.hierarchy is None:
            raise InternalError(f"categorical column {self.name!r} has no hierarchy")
        return self.hierarchy.lca_label(self.leaves(lo), self.leaves(hi)).astype(
            np.dtypes.StringDType()
        )


@dataclass(eq=False)
class Table:
    """A microdata table encoded into integer arrays (see the module docstring)."""

    schema: Schema
    qi: np.ndarray
    sa: np.ndarray
    qi_columns: tuple[EncodedColumn, ...]
    sa_column: EncodedColumn
    sensitive: np.ndarray
    provider: np.ndarray | None = None
    provider_values: np.ndarray | None = None
    row_ids: np.ndarray | None = None
    other: pd.DataFrame | None = None
    notes: list[str] = field(default_factory=list)
    index: pd.Index | None = field(default=None, repr=False)
    """The input DataFrame's index labels of the kept rows (``row_ids`` are their positions),
    so results can be laid back on the user's rows
    (:meth:`kerckhoffs.release.Release.to_pandas`)."""

    # -- shape -----------------------------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of rows."""
        return int(self.sa.shape[0])

    @property
    def d(self) -> int:
        """Number of quasi-identifiers."""
        return int(self.qi.shape[1])

    @property
    def n_sa(self) -> int:
        """Size of the sensitive attribute's code domain."""
        return self.sa_column.size

    @property
    def qi_names(self) -> list[str]:
        """Names of the quasi-identifiers, in column order of ``qi``."""
        return [c.name for c in self.qi_columns]

    @property
    def sa_name(self) -> str:
        """Name of the sensitive attribute."""
        return self.sa_column.name

    def __len__(self) -> int:
        return self.n

    def __repr__(self) -> str:
        return f"Table(n={self.n}, qi={self.qi_names}, sa={self.sa_name!r}, n_sa={self.n_sa})"

    # -- decoding --------------------------------------------------------------------------
    def decode_qi(self, j: int, codes: np.ndarray | None = None) -> np.ndarray:
        """Values of quasi-identifier ``j`` (of all rows, or of ``codes``)."""
        return self.qi_columns[j].decode(self.qi[:, j] if codes is None else codes)

    def decode_sa(self, codes: np.ndarray | None = None) -> np.ndarray:
        """Values of the sensitive attribute (of all rows, or of ``codes``)."""
        return self.sa_column.decode(self.sa if codes is None else codes)

    def to_frame(self) -> pd.DataFrame:
        """The used columns decoded back into a DataFrame (identifiers are gone)."""
        data = {c.name: c.decode(self.qi[:, j]) for j, c in enumerate(self.qi_columns)}
        data[self.sa_name] = self.decode_sa()
        if self.provider is not None and self.provider_values is not None:
            prov = self.schema.provider
            if prov is None:
                raise InternalError("the table has providers but its schema names none")
            data[prov.name] = self.provider_values[self.provider]
        return pd.DataFrame(data)

    # -- construction ----------------------------------------------------------------------
    @classmethod
    def from_csv(
        cls, path: str | Path, schema: Schema, *, sep: str | None = None, keep_other: bool = False
    ) -> Table:
        """Read ``path`` (CSV or Parquet) and encode it with ``schema``.

        Only the columns the encoding uses are parsed (quasi-identifiers, sensitive, provider; every
        column with ``keep_other``): identifiers and unlisted columns are checked in the header but
        never read, so a wide file costs the memory of the columns used
        (``docs/theory/choices.md#performance``: 1.7 GB -> see
        ``benchmarks/bench_anonymize_memory.py``).
        """
        if schema.count is None:  # encode refuses a count column first
            check_columns(read_columns(path, sep), schema)
        text = [c.name for c in schema.columns if c.kind == Kind.CATEGORICAL]
        used = None if keep_other else [c.name for c in _used_columns(schema)]
        df = read_table(
            path,
            sep=sep,
            text_columns=text,
            na_values=schema.na_values,
            columns=used,
            category_columns=[c.name for c in _used_columns(schema) if c.name in text],
        )
        table = cls.encode(
            df, schema, keep_other=keep_other, columns_checked=True, source=str(path)
        )
        del df
        release_memory()  # the parsed text, freed, back to the OS before the algorithm runs
        return table

    @classmethod
    def encode(
        cls,
        df: pd.DataFrame,
        schema: Schema,
        *,
        keep_other: bool = False,
        strict_sensitive: bool = True,
        columns_checked: bool = False,
        first_row: int = 0,
        source: str = "",
    ) -> Table:
        """Encode ``df`` with ``schema`` (see the module docstring for the rules).

        With ``strict_sensitive`` a sensitive value named by the schema that the SA domain
        lacks is an error (a misspelt value would silently protect nothing); releases read
        back pass False, since perturbation may have removed a value. ``columns_checked``:
        the caller has checked the schema's columns against the file's header
        (:meth:`from_csv` reads only the columns used), so only those are required here.
        ``first_row``: how many data rows of its file come before ``df``'s first (``df`` is a
        slice of the file, a Dask partition), so that errors name rows as the file numbers
        them. No row, or none left once missing values are dropped, is
        :class:`~kerckhoffs.errors.EmptyTable`. ``source`` names the file in the error for a
        value outside the schema's declared domain (``bounds``, ``values``).
        """
        if schema.count is not None:  # its lines are groups, not people: refuse, never guess
            raise SchemaError(
                f"column {schema.count.name!r} has role count (each line stands for several "
                "individuals): that is another tool's release, to be read as a release (kerckhoffs "
                "check --published or audit; kh.read_release in Python); "
                "to anonymize, give one row per individual"
            )
        names = [str(c) for c in df.columns]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise InputError(f"column {dupes[0]!r} appears more than once in the data")
        check_columns(names, schema, _used_columns(schema) if columns_checked else None)
        if len(df) == 0:
            raise EmptyTable("the table has no rows")
        used = _used_columns(schema)
        notes: list[str] = []
        keep = np.ones(len(df), dtype=bool)
        series: dict[str, pd.Series] = {}
        for col in used:
            s = df[col.name]
            if schema.na_values and not pd.api.types.is_numeric_dtype(s):
                s = s.mask(s.isin(schema.na_values))
            na = s.isna().to_numpy()
            if na.any():
                policy = schema.missing_policy(col)
                first = first_row + int(np.argmax(na)) + 1
                count = int(na.sum())
                if policy == MissingPolicy.ERROR:
                    raise InputError(
                        f"column {col.name!r}: {count} row(s) have missing values (first: data "
                        f'row {first}); set missing = "drop" or "category" in the schema'
                    )
                if policy == MissingPolicy.DROP:
                    keep &= ~na
                    notes.append(f"column {col.name!r}: dropped {count} row(s) with missing values")
                else:
                    if _column_kind(col, s) == Kind.NUMERIC and col.role != Role.PROVIDER:
                        raise SchemaError(
                            f'column {col.name!r}: missing = "category" needs a categorical '
                            'column (declare kind = "categorical" or use "drop")'
                        )
                    s = _fill_missing(s, na, col)
            series[col.name] = s
        if not keep.all():
            series = {k: v[keep] for k, v in series.items()}
            if not keep.any():
                raise EmptyTable("the table has no rows left after dropping missing values")
        row_ids = np.flatnonzero(keep).astype(np.int64)
        rows_named = row_ids + first_row if first_row else row_ids  # in messages

        n = int(keep.sum())
        qi = np.empty((n, len(schema.quasi)), dtype=np.int32, order="F")
        sa_col = schema.sensitive
        cols = [*schema.quasi, sa_col]

        def encode_one(col: Column) -> tuple[np.ndarray, EncodedColumn]:
            return encode_column(col, series[col.name], schema, rows_named, source)

        # factorizing arrow-backed strings releases the GIL: big columns encode in parallel
        # (categoricals are already codes; below PARALLEL_CELLS threads cost more CPU than used)
        strings = any(not _is_codes(series[c.name]) for c in cols)
        if strings and n * len(cols) >= PARALLEL_CELLS:
            with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
                encoded = list(pool.map(encode_one, cols))
        else:
            encoded = [encode_one(c) for c in cols]
        qi_columns = []
        for j, (codes, enc) in enumerate(encoded[:-1]):
            qi[:, j] = codes
            qi_columns.append(enc)
        sa, sa_enc = encoded[-1]
        sensitive = sensitive_flags(schema, sa_enc, strict=strict_sensitive)
        provider = provider_values = None
        if schema.provider is not None:
            p_codes, p_uniques = pd.factorize(series[schema.provider.name], sort=True)
            provider = p_codes.astype(np.int32)
            provider_values = np.asarray(p_uniques, dtype=object)
        other = None
        if keep_other:
            roles = {c.name: c.role for c in schema.columns}
            other_names = [c for c in df.columns if roles.get(str(c), Role.OTHER) == Role.OTHER]
            other = df.loc[keep, other_names].reset_index(drop=True)
        return cls(
            schema=schema,
            qi=qi,
            sa=sa,
            qi_columns=tuple(qi_columns),
            sa_column=sa_enc,
            sensitive=sensitive,
            provider=provider,
            provider_values=provider_values,
            row_ids=row_ids,
            other=other,
            notes=notes,
            index=df.index[row_ids],
        )


def _is_codes(s: pd.Series) -> bool:
    """Whether a column is held as codes already (a categorical or a numpy number)."""
    return isinstance(s.dtype, pd.CategoricalDtype) or (
        isinstance(s.dtype, np.dtype) and s.dtype.kind in "iufb"
    )


def sensitive_flags(schema: Schema, sa_column: EncodedColumn, *, strict: bool = True) -> np.ndarray:
    """Which SA codes are sensitive: the schema's subset (every code when it names none). With
    ``strict``, a named value the SA domain lacks is a one-line
    :class:`~kerckhoffs.errors.SchemaError` (a misspelt value would silently protect nothing)."""
    if schema.sensitive_values is None:
        return np.ones(sa_column.size, dtype=bool)
    labels = np.asarray(sa_column.labels, dtype=object)
    unknown = sorted(schema.sensitive_values - set(labels.tolist()))
    if unknown and strict:
        raise SchemaError(
            f"sensitive value {unknown[0]!r} does not occur in column {sa_column.name!r}"
        )
    return np.isin(labels, list(schema.sensitive_values))


def _fill_missing(
    s: pd.Series, na: np.ndarray, col: Column | None = None, *, sorted_later: bool = False
) -> pd.Series:
    """``s`` with its missing cells replaced by :data:`MISSING_LABEL` (``"?"``), the value
    the ``category`` policy makes of them.

    Text is not cast to Python objects (that cast was 39% of encoding Census-Income, issue
    15): pandas' arrow strings are factorized once and the label inserted among the codes at
    its rank of first appearance (a categorical), categoricals get the label as a category;
    anything else, and a column whose codes are sorted later (the provider, or
    ``sorted_later``), goes through objects as before. Every path gives the same values in
    the same order, so the same codes. Arrow text of a column with a hierarchy (and no
    declared values) keeps its text, the label filled in: :func:`_leaf_codes` looks it up in
    the leaves without a factorize, and the codes are leaf indices.
    """
    looked_up = False
    if col is not None:
        sorted_later = col.role == Role.PROVIDER
        looked_up = col.hierarchy is not None and col.values is None and not sorted_later
    if looked_up and isinstance(s.dtype, pd.StringDtype) and s.dtype.storage == "pyarrow":
        import pyarrow as pa
        import pyarrow.compute as pc

        # arrow's fill (a third of Series.fillna's CPU on Census-Income's country)
        filled = pc.fill_null(pa.array(s.array), MISSING_LABEL)
        return pd.Series(pd.array(filled, dtype=s.dtype), index=s.index, name=s.name)
    if isinstance(s.dtype, pd.StringDtype) and not sorted_later:
        codes, uniques = pd.factorize(s)  # missing: -1; codes in order of first appearance
        if MISSING_LABEL in set(uniques):
            return s.fillna(MISSING_LABEL)
        # the label's code is its rank of first appearance: the values seen before the first
        # missing cell come first, the later ones shift up by one
        first = int(np.argmax(na))
        rank = int(codes[:first].max()) + 1 if first else 0
        codes = np.where(na, rank, codes + (codes >= rank))
        labels = np.insert(np.asarray(uniques, dtype=object), rank, MISSING_LABEL)
        filled = pd.Categorical.from_codes(codes, categories=pd.Index(labels, dtype=s.dtype))
        return pd.Series(filled, index=s.index, name=s.name)
    if isinstance(s.dtype, pd.CategoricalDtype) and not sorted_later:
        if MISSING_LABEL not in s.cat.categories:
            s = s.cat.add_categories([MISSING_LABEL])
        return s.fillna(MISSING_LABEL)
    return s.astype(object).where(~na, MISSING_LABEL)


def _used_columns(schema: Schema) -> list[Column]:
    """The columns an encoding reads: quasi-identifiers, the sensitive one, the provider."""
    used = [*schema.quasi, schema.sensitive]
    if schema.provider is not None:
        used.append(schema.provider)
    return used


def check_columns(names: list[str], schema: Schema, columns: list[Column] | None = None) -> None:
    """Refuse data whose columns ``names`` lack one the schema names (``columns``: only
    these), with a hint when the header was read as one column (a wrong delimiter)."""
    present = set(names)
    for col in schema.columns if columns is None else columns:
        if col.name not in present:
            listed = ", ".join(sorted(present)[:12])
            hint = ""
            if len(present) == 1 and any(d in next(iter(present)) for d in ";,\t|"):
                hint = " (wrong delimiter? the header was read as one column)"
            raise SchemaError(
                f"column {col.name!r} named in the schema is not in the data "
                f"(columns: {listed}){hint}"
            )


INT64 = (-(2**63), 2**63 - 1)
PARALLEL_CELLS = 1_000_000
"""Cells (rows x encoded columns) from which the columns of text are encoded on threads: below
it the threads' start-up costs more CPU than they save wall time (Adult's 30,162 rows x 9
columns: 21 ms CPU with threads, 13 ms without)."""
FLOAT_EXACT = 2**53
"""Integers above this lose digits as 64-bit floats (the 53-bit significand)."""


def _exact_integers(col: Column, s: pd.Series, row_ids: np.ndarray) -> None:
    """Refuse integers that 64-bit numbers cannot hold exactly (a 23-digit id would be
    published with its last digits changed): Python ints outside int64 (pandas keeps them as
    objects) and digit strings above 2**53 (they would become floats). Only the few values
    with 16 or more digits are looked at one by one."""
    text = s.astype(str).str.strip()
    digits = text.str.lstrip("+-")
    long = (digits.str.isdigit() & (digits.str.len() >= 16)).to_numpy(dtype=bool)
    for i in np.flatnonzero(long):
        v = int(text.iloc[i])
        limit = INT64 if isinstance(s.iloc[i], int | np.integer) else (-FLOAT_EXACT, FLOAT_EXACT)
        if not limit[0] <= v <= limit[1]:
            raise InputError(
                f"column {col.name!r}: data row {int(row_ids[i]) + 1} holds {text.iloc[i]!r}, "
                "an integer too large to store exactly in 64 bits; declare the column "
                'categorical (kind = "categorical") if it is a code'
            )


def _column_kind(col: Column, s: pd.Series) -> Kind:
    if col.kind is not None:
        return col.kind
    if pd.api.types.is_bool_dtype(s):
        return Kind.CATEGORICAL
    return Kind.NUMERIC if pd.api.types.is_numeric_dtype(s) else Kind.CATEGORICAL


def _load_hierarchy(col: Column, schema: Schema) -> Hierarchy | None:
    h = col.hierarchy
    if h is None or isinstance(h, Hierarchy):
        return h
    path = Path(h)
    if not path.is_absolute() and schema.base_dir is not None:
        path = schema.base_dir / path
    try:
        return Hierarchy.read_csv(path)
    except HierarchyError as exc:
        raise HierarchyError(f"column {col.name!r}: {exc}") from None


def _first_row(codes: np.ndarray, code: int, row_ids: np.ndarray) -> int:
    return int(row_ids[int(np.argmax(codes == code))]) + 1


def _outside_domain(col: Column, value: object, row: int, source: str, declared: str) -> InputError:
    """The one-line error for a data value outside the schema's declared domain."""
    where = f"{source}: " if source else ""
    return InputError(
        f"{where}column {col.name!r}: value {format_value(value)!r} (data row {row}) is "
        f"outside the domain the schema declares ({declared})"
    )


def _check_bounds(
    col: Column, values: np.ndarray, codes: np.ndarray, row_ids: np.ndarray, source: str
) -> Hierarchy | None:
    """Refuse values outside ``col.bounds``; with ``col.bins`` the public interval hierarchy
    (:meth:`Hierarchy.bounded`), which needs integer values."""
    if col.bounds is None:
        return None
    lo, hi = col.bounds
    declared = f"bounds = [{lo}, {hi}]"
    out = (values < lo) | (values > hi)
    if out.any():
        i = int(np.argmax(out))
        raise _outside_domain(col, values[i], _first_row(codes, i, row_ids), source, declared)
    if col.bins is None:
        return None
    if values.dtype.kind not in "iu":
        frac = values != np.floor(values)
        i = int(np.argmax(frac))
        raise _outside_domain(
            col, values[i], _first_row(codes, i, row_ids), source, declared + ", integers (bins)"
        )
    return Hierarchy.bounded(int(lo), int(hi), int(col.bins), name=f"{col.name} bins")


def _declared_values(
    col: Column,
    hierarchy: Hierarchy | None,
    labels: np.ndarray,
    local: np.ndarray,
    row_ids: np.ndarray,
    source: str,
) -> Hierarchy | None:
    """Refuse data values outside ``col.values``; the column's hierarchy: the given one (every
    declared value must be its leaf) or the flat one over the declared values."""
    if col.values is None:
        return hierarchy
    declared = set(col.values)
    for i, label in enumerate(labels):
        if label not in declared:
            shown = ", ".join(col.values[:5]) + (", ..." if len(col.values) > 5 else "")
            raise _outside_domain(
                col, label, _first_row(local, i, row_ids), source, f"values = [{shown}]"
            )
    if hierarchy is None:
        return Hierarchy.flat(col.values, name=f"{col.name} values", keep_order=True)
    missing = [v for v in col.values if not hierarchy.contains(v)]
    if missing:
        raise SchemaError(
            f"column {col.name!r}: declared value {missing[0]!r} is not in hierarchy "
            f"{hierarchy.name}"
        )
    return hierarchy


def encode_column(
    col: Column, s: pd.Series, schema: Schema, row_ids: np.ndarray, source: str = ""
) -> tuple[np.ndarray, EncodedColumn]:
    kind = _column_kind(col, s)
    hierarchy = _load_hierarchy(col, schema)
    if kind == Kind.NUMERIC:
        if not pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s):
            _exact_integers(col, s, row_ids)
            num = pd.to_numeric(s, errors="coerce")
            bad = (num.isna() & s.notna()).to_numpy()
            if bad.any():
                i = int(np.argmax(bad))
                raise InputError(
                    f"column {col.name!r} is numeric but data row {int(row_ids[i]) + 1} "
                    f"holds {s.iloc[i]!r}"
                )
            s = num
        if s.dtype.kind == "f":
            finite = np.isfinite(s.to_numpy(dtype=float, na_value=np.nan))
            if not finite.all():
                i = int(np.argmax(~finite))
                raise InputError(
                    f"column {col.name!r}: data row {int(row_ids[i]) + 1} holds "
                    f"{str(float(s.iloc[i]))!r}, which is not a finite number (too large for "
                    "a 64-bit float, or infinite)"
                )
        codes, values = _ranks(s.to_numpy())
        integral = values.dtype.kind == "f" and np.all(values == np.floor(values))
        if integral and np.all(np.abs(values) < 2**53):
            values = values.astype(np.int64)
        leaf_of_code = None
        bounded = _check_bounds(col, values, codes, row_ids, source)
        if bounded is not None:
            hierarchy = bounded
        if col.widths is not None:
            hierarchy = Hierarchy.intervals(values, col.widths, name=f"{col.name} intervals")
        if hierarchy is not None:
            ints = values.dtype.kind in "iu"
            leaf_of_code = _leaf_lookup(col, hierarchy, values, codes, row_ids, integers=ints)
            for lvl in range(1, hierarchy.height):
                nodes = hierarchy.node_ids[lvl][leaf_of_code]
                if np.any(np.diff(nodes) < 0):
                    raise HierarchyError(
                        f"column {col.name!r}: hierarchy {hierarchy.name} does not group "
                        f"neighbouring values at level {lvl} (numeric nodes must be intervals)"
                    )
        return codes.astype(np.int32), EncodedColumn(
            col.name, Kind.NUMERIC, values, hierarchy, leaf_of_code
        )
    if col.widths is not None:
        raise SchemaError(f"column {col.name!r}: widths apply to numeric columns only")
    if hierarchy is not None and col.values is None:
        leaf_codes = _leaf_codes(s, hierarchy)
        if leaf_codes is not None:
            return leaf_codes, EncodedColumn(
                col.name, Kind.CATEGORICAL, np.asarray(hierarchy.leaves, dtype=object), hierarchy
            )
    if hierarchy is None and col.values is None and s.dtype.kind == "i":
        # integer codes without a hierarchy: the flat one over the values in numeric order,
        # so a value's leaf index is its rank (counted, no hashing)
        codes, values = _ranks(s.to_numpy())
        hierarchy = Hierarchy.flat(
            [format_value(v) for v in values.tolist()], f"{col.name} (flat)", keep_order=True
        )
        return codes.astype(np.int32), EncodedColumn(
            col.name, Kind.CATEGORICAL, np.asarray(hierarchy.leaves, dtype=object), hierarchy
        )
    used = _used_text_categories(s) if hierarchy is None and col.values is None else None
    if used is not None:  # the flat hierarchy over them; each code looked up by category
        hierarchy = Hierarchy.flat(used, name=f"{col.name} (flat)")
        leaf_codes = _leaf_codes(s, hierarchy)
        if leaf_codes is not None:
            return leaf_codes, EncodedColumn(
                col.name, Kind.CATEGORICAL, np.asarray(hierarchy.leaves, dtype=object), hierarchy
            )
    local, uniques = pd.factorize(s, sort=False)
    uniques = np.asarray(uniques, dtype=object)
    labels = np.array([format_value(u) for u in uniques], dtype=object)
    hierarchy = _declared_values(col, hierarchy, labels, local, row_ids, source)
    if hierarchy is None:
        if pd.api.types.is_numeric_dtype(s):
            order = np.argsort(np.asarray(uniques), kind="stable")
            hierarchy = Hierarchy.flat(labels[order], name=f"{col.name} (flat)", keep_order=True)
        else:
            hierarchy = Hierarchy.flat(labels, name=f"{col.name} (flat)")
    ints = pd.api.types.is_integer_dtype(s) and not pd.api.types.is_bool_dtype(s)
    leaf = _leaf_lookup(col, hierarchy, labels, local, row_ids, integers=ints)
    codes = leaf[local]
    return codes.astype(np.int32), EncodedColumn(
        col.name, Kind.CATEGORICAL, np.asarray(hierarchy.leaves, dtype=object), hierarchy, None
    )


def _used_text_categories(s: pd.Series) -> list[str] | None:
    """The categories of a categorical of text (as a CSV is read) when every one is used and
    no cell is missing: the values the general path would find by factorizing the column
    again. None otherwise."""
    if not isinstance(s.dtype, pd.CategoricalDtype) or len(s) == 0:
        return None
    codes = s.cat.codes.to_numpy()
    categories = list(s.cat.categories)
    if codes.min() < 0 or not all(type(v) is str for v in categories):
        return None
    if not np.bincount(codes, minlength=len(categories)).all():
        return None
    return categories


def _ranks(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each value's rank among the sorted distinct values, and those values. Integers of a
    small range are ranked by counting (a bincount, no hashing or sorting), else factorized
    and the distinct values sorted: the same ranks and values either way."""
    if x.dtype.kind == "i" and x.size:
        lo, hi = int(x.min()), int(x.max())
        if hi - lo <= 4 * x.size + 4096:
            shifted = x - lo
            present = np.bincount(shifted, minlength=hi - lo + 1) > 0
            rank = np.cumsum(present, dtype=np.int64) - 1
            return rank[shifted], (np.flatnonzero(present) + lo).astype(x.dtype)
    local, uniques = pd.factorize(x, sort=False)
    order = np.argsort(uniques, kind="stable")
    rank = np.empty(len(order), dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    return rank[local], np.asarray(uniques)[order]


def _leaf_codes(s: pd.Series, hierarchy: Hierarchy) -> np.ndarray | None:
    """Each row's leaf index in ``hierarchy`` (int32), looked up directly: arrow-backed text
    by one hash lookup of every row in the (few) leaves, a categorical by looking up its
    categories; ``None`` when neither applies or a value is missing or not a leaf (the general
    path then names the value and its row). The same codes as factorizing the column and
    looking its distinct values up (a text value is its own leaf key, :func:`format_value`)."""
    if isinstance(s.dtype, pd.CategoricalDtype):
        codes = s.cat.codes.to_numpy()
        if codes.size == 0 or codes.min() < 0:
            return None
        index = hierarchy._leaf_index
        lut = np.array([index.get(format_value(c), -1) for c in s.cat.categories], dtype=np.int32)
        out = lut[codes]
        return None if out.min() < 0 else out
    if not (isinstance(s.dtype, pd.StringDtype) and s.dtype.storage == "pyarrow"):
        return None
    import pyarrow as pa
    import pyarrow.compute as pc

    found = pc.index_in(pa.array(s.array), value_set=hierarchy.leaf_array())
    if found.null_count:
        return None
    return np.asarray(found.to_numpy(), dtype=np.int32)


def _lost_zeros_hint(key: str, hierarchy: Hierarchy, integers: bool) -> str:
    """A hint for a value of the data that is a hierarchy leaf less its leading zeros (zip
    ``02134`` stored as the integer 2134 by a Parquet integer column, or by a spreadsheet's
    export), else nothing."""
    if not key.isdigit():
        return ""
    padded = [leaf for leaf in hierarchy.leaves if leaf.isdigit() and leaf.lstrip("0") == key]
    if not padded:
        return ""
    if integers:
        return (
            f"; the column holds integers, which have no leading zeros, and the hierarchy "
            f"has {padded[0]!r}: store the column as text (a string column in Parquet)"
        )
    return f"; the hierarchy has {padded[0]!r}: were the leading zeros lost (a spreadsheet)?"


def _leaf_lookup(
    col: Column,
    hierarchy: Hierarchy,
    uniques: np.ndarray,
    codes: np.ndarray,
    row_ids: np.ndarray,
    *,
    integers: bool = False,
) -> np.ndarray:
    """The leaf index of each of ``uniques``; a value the hierarchy lacks is a one-line
    error naming its first row (with a hint when the column holds ``integers`` and the
    hierarchy the same codes with leading zeros)."""
    out = np.empty(len(uniques), dtype=np.int32)
    for i, u in enumerate(uniques):
        key = format_value(u)
        if not hierarchy.contains(key):
            row = _first_row(codes, i, row_ids)
            raise HierarchyError(
                f"column {col.name!r}: value {key!r} (data row {row}) is not in hierarchy "
                f"{hierarchy.name}" + _lost_zeros_hint(key, hierarchy, integers)
            )
        out[i] = hierarchy._leaf_index[key]
    return out
