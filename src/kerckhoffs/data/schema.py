"""Describing a microdata table: which column plays which role, and how QIs generalize.

A schema says, per column, its *role* (``docs/concepts.md``, section Schema):

- ``identifier``: explicit identifiers (name, SSN); never published.
- ``quasi``: quasi-identifiers, generalized or bucketized by the anonymizers.
- ``sensitive``: the one sensitive attribute (SA). Optionally only a subset of its values is
  *sensitive* (paper 001's setting: HIV among diseases, education below high school); the
  others are non-sensitive and unconstrained by the subset-aware models.
- ``provider``: the data provider a row came from (paper 003's collaborative setting).
- ``other``: carried along, dropped on publish unless asked.
- ``count``: in a table that publishes one line per group of identical rows with its size
  (another tool's release, e.g. anonypyx's ``count`` column), how many individuals the line
  stands for: a positive integer. At most one column has this role; reading such a table
  (:func:`kerckhoffs.data.external.read_external`) repeats each line that many times.

Quasi-identifiers have a *kind*: ``numeric`` (ordered, generalized to intervals) or
``categorical`` (generalized through a hierarchy). A kind left out is inferred from the
column's dtype when the table is encoded.

Schemas are built in Python or read from TOML::

    sensitive_values = ["Preschool", "1st-4th"]   # optional
    sensitive_mode = "set"                         # set | each (see SensitiveMode)
    missing = "error"                              # error | category | drop (default error)
    na_values = ["NA", "?"]                        # optional: texts that mean missing

    [columns.age]
    role = "quasi"
    kind = "numeric"
    hierarchy = "hierarchies/age.csv"              # optional; relative to the TOML file
    bounds = [17, 90]                              # optional: the public range of the values

    [columns.hours]
    role = "quasi"
    bounds = [1, 99]                               # public range, and with bins a public
    bins = 10                                      # interval hierarchy: widths 10, 20, 40, ...

    [columns.sex]
    role = "quasi"
    values = ["Female", "Male"]                    # the public value list of a categorical

    [columns.education]
    role = "sensitive"

Columns present in the data but absent from the schema have role ``other``.

*Public domains.* A differentially private release may only publish cells of a domain that
comes from the schema, never from the data (which values occur is itself private; D. Kifer
and A. Machanavajjhala, "No Free Lunch in Data Privacy", SIGMOD 2011; OpenDP and Tumult
Analytics ask for declared keys for the same reason). A column has one when the schema gives a
hierarchy file, numeric ``bounds`` with a bin width ``bins`` (a public interval hierarchy,
:meth:`~kerckhoffs.data.hierarchy.Hierarchy.bounded`), or a categorical ``values`` list
(:attr:`Column.public_domain`). ``bounds`` and ``values`` also restrict the data: a value
outside them is a one-line :class:`~kerckhoffs.errors.InputError` naming the file, column,
value and row, and a hierarchy node holding no declared value is no cell of a DP release.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from kerckhoffs.data.io import load_toml
from kerckhoffs.errors import SchemaError


class Role(StrEnum):
    """What a column is to the publisher."""

    IDENTIFIER = "identifier"
    QUASI = "quasi"
    SENSITIVE = "sensitive"
    PROVIDER = "provider"
    OTHER = "other"
    COUNT = "count"


class Kind(StrEnum):
    """How a quasi-identifier generalizes."""

    NUMERIC = "numeric"
    CATEGORICAL = "categorical"


class MissingPolicy(StrEnum):
    """What to do with missing cells in a used column.

    ``error`` names the column and the rows; ``category`` makes missing a value of its own
    (labelled :data:`MISSING_LABEL`, categorical columns only); ``drop`` removes the rows and
    reports how many.
    """

    ERROR = "error"
    CATEGORY = "category"
    DROP = "drop"


class SensitiveMode(StrEnum):
    """How a subset of sensitive values is protected.

    ``set`` (paper 001, default): the subset is one sensitive value *set*; a group's count is
    the number of its rows holding any value of the set. ``each`` (paper 000 section 1.4's
    reading): every value of the subset is protected on its own; a group's count is its most
    frequent sensitive value. ``set`` is never weaker. Without a subset every value is its own
    set and the two coincide; naming *every* value of the domain counts as naming none (one set
    holding every value could never be diverse).
    """

    SET = "set"
    EACH = "each"


MISSING_LABEL = "?"
"""The value a missing cell takes under the ``category`` policy (the UCI convention)."""


@dataclass(frozen=True)
class Column:
    """One column of the schema.

    ``hierarchy`` is a path to an ARX-format CSV or a :class:`~kerckhoffs.data.hierarchy.Hierarchy`;
    ``widths`` asks for an interval hierarchy built from the data (numeric columns only);
    ``missing`` overrides the schema-wide missing-value policy for this column.
    ``bounds = (lo, hi)`` (numeric) and ``values`` (categorical) declare the column's public
    domain; ``bins`` (with integer bounds, no hierarchy) makes it a public interval hierarchy
    (module docstring, *Public domains*).
    """

    name: str
    role: Role = Role.QUASI
    kind: Kind | None = None
    hierarchy: Any = None
    widths: tuple[int, ...] | None = None
    missing: MissingPolicy | None = None
    bounds: tuple[float, float] | None = None
    bins: int | None = None
    values: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "role", _enum(Role, self.role, f"column {self.name!r}: role"))
        if self.kind is not None:
            object.__setattr__(self, "kind", _enum(Kind, self.kind, f"column {self.name!r}: kind"))
        if self.missing is not None:
            object.__setattr__(
                self,
                "missing",
                _enum(MissingPolicy, self.missing, f"column {self.name!r}: missing"),
            )
        if self.hierarchy is not None and not isinstance(self.hierarchy, str | Path):
            from kerckhoffs.data.hierarchy import Hierarchy

            if not isinstance(self.hierarchy, Hierarchy):
                raise SchemaError(
                    f"column {self.name!r}: hierarchy must be a file path or a Hierarchy, "
                    f"got {self.hierarchy!r}"
                )
        if self.widths is not None:
            try:
                widths = tuple(int(w) for w in self.widths)
            except (TypeError, ValueError):
                raise SchemaError(
                    f"column {self.name!r}: widths must be a list of integers, got {self.widths!r}"
                ) from None
            if not widths or any(w <= 0 for w in widths) or list(widths) != sorted(widths):
                raise SchemaError(
                    f"column {self.name!r}: widths must be positive and increasing, got {widths}"
                )
            object.__setattr__(self, "widths", widths)
            if self.kind == Kind.CATEGORICAL:
                raise SchemaError(f"column {self.name!r}: widths apply to numeric columns only")
        if self.hierarchy is not None and self.widths is not None:
            raise SchemaError(f"column {self.name!r}: give a hierarchy or widths, not both")
        self._check_domain()
        if self.role == Role.COUNT and (
            self.kind is not None or self.hierarchy is not None or self.widths is not None
        ):
            raise SchemaError(
                f"column {self.name!r}: a count column (positive integers: how many "
                "individuals each line stands for) takes no kind, hierarchy or widths"
            )

    def _check_domain(self) -> None:
        """Validate ``bounds``, ``bins`` and ``values`` (one-line SchemaError each)."""
        where = f"column {self.name!r}"
        if self.bounds is not None:
            try:
                lo, hi = (float(b) for b in self.bounds)
            except (TypeError, ValueError):
                raise SchemaError(
                    f"{where}: bounds must be two numbers [LO, HI], got {self.bounds!r}"
                ) from None
            if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
                raise SchemaError(
                    f"{where}: bounds must be finite with LO <= HI, got {self.bounds}"
                )
            if self.kind == Kind.CATEGORICAL:
                raise SchemaError(
                    f"{where}: bounds apply to numeric columns (a categorical "
                    "column declares values = [...])"
                )
            pair = tuple(int(b) if float(b).is_integer() else float(b) for b in (lo, hi))
            object.__setattr__(self, "bounds", pair)
        if self.bins is not None:
            if self.bounds is None:
                raise SchemaError(f"{where}: bins needs bounds = [LO, HI]")
            if self.hierarchy is not None or self.widths is not None:
                raise SchemaError(f"{where}: give bins or a hierarchy/widths, not both")
            if isinstance(self.bins, bool) or not isinstance(self.bins, int) or self.bins < 1:
                raise SchemaError(
                    f"{where}: bins must be a positive integer width, got {self.bins!r}"
                )
            if not all(isinstance(b, int) for b in self.bounds):
                raise SchemaError(f"{where}: bins need integer bounds, got {self.bounds}")
        if self.values is not None:
            if isinstance(self.values, str) or not all(
                isinstance(v, str | int) and not isinstance(v, bool) for v in self.values
            ):
                raise SchemaError(f"{where}: values must be a list of texts, got {self.values!r}")
            vals = tuple(str(v) for v in self.values)
            if not vals or len(set(vals)) != len(vals):
                raise SchemaError(f"{where}: values must be a non-empty list without repeats")
            if self.kind == Kind.NUMERIC or self.bounds is not None or self.widths is not None:
                raise SchemaError(
                    f"{where}: values apply to categorical columns (a numeric "
                    "column declares bounds = [LO, HI])"
                )
            object.__setattr__(self, "values", vals)

    @property
    def public_domain(self) -> bool:
        """Whether the schema declares the column's domain (a hierarchy, ``bounds`` with
        ``bins``, or ``values``): only then may a DP release publish cells finer than ``*``."""
        return self.hierarchy is not None or self.bins is not None or self.values is not None


DECLARE_DOMAIN = (
    "give it a hierarchy file (hierarchy = ...), numeric bounds and a bin width "
    "(bounds = [LO, HI], bins = W) or a value list (values = [...]) in the schema"
)
"""The three ways a schema declares a column's public domain, for messages."""


@dataclass(frozen=True)
class Schema:
    """The roles of a table's columns, the sensitive-value subset and the missing policy."""

    columns: tuple[Column, ...]
    sensitive_values: frozenset[str] | None = None
    missing: MissingPolicy = MissingPolicy.ERROR
    sensitive_mode: SensitiveMode = SensitiveMode.SET
    base_dir: Path | None = field(default=None, compare=False)
    na_values: tuple[str, ...] = ()
    """Texts that mean a missing cell. Only empty cells are missing by default: ``NA``,
    ``None`` or ``null`` are real values in many data sets (pandas' defaults would silently
    turn them into missing ones)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", tuple(self.columns))
        if isinstance(self.na_values, str) or not all(isinstance(v, str) for v in self.na_values):
            raise SchemaError(f"na_values must be a list of texts, got {self.na_values!r}")
        object.__setattr__(self, "na_values", tuple(self.na_values))
        object.__setattr__(self, "missing", _enum(MissingPolicy, self.missing, "missing"))
        object.__setattr__(
            self, "sensitive_mode", _enum(SensitiveMode, self.sensitive_mode, "sensitive_mode")
        )
        if self.sensitive_values is not None:
            values = frozenset(str(v) for v in self.sensitive_values)
            if not values:
                raise SchemaError(
                    "sensitive_values is empty: leave it out to make every value sensitive"
                )
            object.__setattr__(self, "sensitive_values", values)
        names = [c.name for c in self.columns]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise SchemaError(f"column {dupes[0]!r} is declared twice")
        if not self.quasi:
            raise SchemaError('the schema declares no quasi-identifier (role = "quasi")')
        sensitive = [c for c in self.columns if c.role == Role.SENSITIVE]
        if len(sensitive) != 1:
            raise SchemaError(
                f"the schema must declare exactly one sensitive column, found {len(sensitive)}"
            )
        providers = [c for c in self.columns if c.role == Role.PROVIDER]
        if len(providers) > 1:
            raise SchemaError(f"at most one provider column, found {len(providers)}")
        counts = [c.name for c in self.columns if c.role == Role.COUNT]
        if len(counts) > 1:
            raise SchemaError(
                f"at most one count column, found {len(counts)} ({', '.join(map(repr, counts))})"
            )

    # -- views -------------------------------------------------------------------------------
    @property
    def quasi(self) -> tuple[Column, ...]:
        """The quasi-identifier columns, in schema order (the order of ``Table.qi``'s columns)."""
        return tuple(c for c in self.columns if c.role == Role.QUASI)

    @property
    def sensitive(self) -> Column:
        """The sensitive column."""
        return next(c for c in self.columns if c.role == Role.SENSITIVE)

    @property
    def provider(self) -> Column | None:
        """The provider column, if any."""
        return next((c for c in self.columns if c.role == Role.PROVIDER), None)

    @property
    def count(self) -> Column | None:
        """The count column (how many individuals each line stands for), if any."""
        return next((c for c in self.columns if c.role == Role.COUNT), None)

    @property
    def identifiers(self) -> tuple[Column, ...]:
        """Columns dropped on publish because they identify people."""
        return tuple(c for c in self.columns if c.role == Role.IDENTIFIER)

    def column(self, name: str) -> Column:
        """The column called ``name``."""
        for c in self.columns:
            if c.name == name:
                return c
        raise SchemaError(f"the schema has no column {name!r}")

    def missing_policy(self, column: Column) -> MissingPolicy:
        """The missing-value policy in force for ``column``."""
        return column.missing or self.missing

    def with_column(self, column: Column) -> Schema:
        """A copy with ``column`` replacing the column of the same name (or appended)."""
        cols = [column if c.name == column.name else c for c in self.columns]
        if column.name not in {c.name for c in self.columns}:
            cols.append(column)
        return replace(self, columns=tuple(cols))

    # -- construction ------------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        quasi: list[str] | dict[str, dict[str, Any]],
        sensitive: str,
        *,
        identifiers: list[str] = (),  # type: ignore[assignment]
        provider: str | None = None,
        sensitive_values: list[str] | None = None,
        missing: MissingPolicy | str = MissingPolicy.ERROR,
        sensitive_mode: SensitiveMode | str = SensitiveMode.SET,
        na_values: tuple[str, ...] | list[str] = (),
    ) -> Schema:
        """Build a schema in Python.

        ``quasi`` is a list of names (kinds inferred) or a mapping name -> Column options, e.g.
        ``{"age": {"kind": "numeric", "widths": (5, 10, 20)}, "zip": {"hierarchy": h}}``.
        """
        cols: list[Column] = [Column(n, Role.IDENTIFIER) for n in identifiers]
        if isinstance(quasi, dict):
            cols += [Column(n, Role.QUASI, **opts) for n, opts in quasi.items()]
        else:
            cols += [Column(n, Role.QUASI) for n in quasi]
        cols.append(Column(sensitive, Role.SENSITIVE))
        if provider is not None:
            cols.append(Column(provider, Role.PROVIDER))
        return cls(
            tuple(cols),
            frozenset(sensitive_values) if sensitive_values is not None else None,
            MissingPolicy(missing),
            SensitiveMode(sensitive_mode),
            na_values=tuple(na_values),
        )

    @classmethod
    def from_toml(cls, path: str | Path) -> Schema:
        """Read a schema from a TOML file; hierarchy paths are relative to the file."""
        path = Path(path)
        raw = load_toml(path, "schema file", SchemaError)
        return cls.from_dict(raw, base_dir=path.parent, source=str(path))

    @classmethod
    def from_dict(
        cls, raw: dict[str, Any], *, base_dir: Path | None = None, source: str = "schema"
    ) -> Schema:
        """Build a schema from the TOML structure (see the module docstring)."""
        known = {"columns", "sensitive_values", "sensitive_mode", "missing", "na_values"}
        unknown = sorted(set(raw) - known)
        if unknown:
            raise SchemaError(f"{source}: unknown key {unknown[0]!r} (allowed: {sorted(known)})")
        columns_raw = raw.get("columns")
        if not isinstance(columns_raw, dict) or not columns_raw:
            raise SchemaError(f"{source}: no [columns.NAME] tables")
        col_keys = {"role", "kind", "hierarchy", "widths", "missing", "bounds", "bins", "values"}
        cols = []
        for name, opts in columns_raw.items():
            if not isinstance(opts, dict):
                raise SchemaError(f"{source}: columns.{name} must be a table")
            bad = sorted(set(opts) - col_keys)
            if bad:
                raise SchemaError(
                    f"{source}: column {name!r}: unknown key {bad[0]!r} "
                    f"(allowed: {sorted(col_keys)})"
                )
            opts = dict(opts)
            if "role" not in opts:
                raise SchemaError(f"{source}: column {name!r} has no role")
            hierarchy = opts.pop("hierarchy", None)
            widths = opts.pop("widths", None)
            if widths is not None and not isinstance(widths, list):
                raise SchemaError(
                    f"{source}: column {name!r}: widths must be a list such as [5, 10, 20]"
                )
            for key in ("bounds", "values"):
                if key in opts and not isinstance(opts[key], list):
                    raise SchemaError(f"{source}: column {name!r}: {key} must be a list")
                if key in opts:
                    opts[key] = tuple(opts[key])
            cols.append(
                Column(name, hierarchy=hierarchy, widths=tuple(widths) if widths else None, **opts)
            )
        sv = raw.get("sensitive_values")
        return cls(
            tuple(cols),
            frozenset(str(v) for v in sv) if sv is not None else None,
            raw.get("missing", MissingPolicy.ERROR),
            raw.get("sensitive_mode", SensitiveMode.SET),
            base_dir,
            _texts(raw.get("na_values", []), f"{source}: na_values"),
        )


def _texts(value: Any, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SchemaError(f'{what} must be a list of texts such as ["NA", "?"], got {value!r}')
    return tuple(value)


def _enum(enum_type: type[StrEnum], value: Any, what: str) -> Any:
    try:
        return enum_type(value)
    except ValueError:
        allowed = ", ".join(m.value for m in enum_type)
        raise SchemaError(f"{what} {value!r} is not one of: {allowed}") from None
