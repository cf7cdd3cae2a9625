"""External knowledge as data, not code: a TOML or CSV file the attack commands read
(``docs/theory/asap.md#external-knowledge``, ``docs/theory/minimality.md#knowledge``,
``docs/theory/composition.md#composition``).

What an adversary brings besides the release:

* ``population``: the external table of quasi-identifiers (a voter list): one row per
  individual with the QI columns (original values) and an optional ``id`` column.
* ``not_having``: statements "individual ``id`` does not have SA value ``value``".
* ``rules``: SA distribution statements "among the people matching ``where``, at most
  ``share`` have ``value``" (paper 000 section 8.2.1: fewer than 10% of people aged <= 25 hold
  a Ph.D.).
* ``releases``: other releases of overlapping populations (directories written by
  :meth:`kerckhoffs.release.Release.write`), for composition attacks.
* ``schema``: optionally, the schema (TOML path) whose hierarchies say what published
  categorical cells such as ``Europe`` cover (:mod:`kerckhoffs.attacks.locate`).
* ``coalition``: the insiders of paper 003 (several data providers publish one table; a
  coalition of them subtracts its own records from each published group): the coalition's
  provider ids (usable when the attacked release is in-process and its table has providers),
  or its own records (a file of their rows with the QI and SA columns, located in the
  published groups), or both (the records of those providers), and/or ``m``, the coalition
  size (for the worst-coalition search, and for relying on a release's recorded m-privacy
  check: :mod:`kerckhoffs.attacks.insider.attack`).

Loading (:meth:`Knowledge.from_path`): a CSV / Parquet file is a population alone; a TOML file
holds everything, paths relative to the TOML file::

    releases = ["hospital2/", "hospital3/"]     # top-level keys come before the tables

    [population]
    file = "voters.csv"
    id = "patient_id"          # optional: the column holding ids (default: a column "id")
    schema = "schema.toml"     # optional
    sep = ";"                  # optional; sniffed by default

    [[not_having]]
    id = "P000012"             # a population id (its row index when there is no id column)
    value = "HIV"

    [[rule]]
    value = "PhD"
    share = 0.1
    where = { age = { max = 25 }, sex = ["F"] }

    [coalition]
    providers = ["P1", "P3"]   # and/or: records = "our_rows.csv" (sep = ";" optional); m = 2

Every malformed item gives one :class:`~kerckhoffs.errors.InputError` line naming the file and
the key (``knowledge.toml: rule[2]: share must be a number in [0, 1], got 'ten'``).

Population columns are read as text, then a column becomes numeric when every value reads
as a number and none has a leading zero (so zip ``02134`` stays text); with a schema, the
schema's categorical columns stay text.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from kerckhoffs.data.hierarchy import format_value
from kerckhoffs.data.io import load_toml, read_table, regular_file
from kerckhoffs.errors import InputError, KerckhoffsError

if TYPE_CHECKING:
    from kerckhoffs.data.schema import Schema
    from kerckhoffs.release import Release

ID = "id"
"""The population column holding individuals' ids."""
POPULATION_SUFFIXES = {".csv", ".tsv", ".txt", ".parquet", ".pq"}


@dataclass(frozen=True)
class NotHaving:
    """Individual ``id`` (population id, or row index when the population has no id column)
    does not have SA value ``value``."""

    id: Any
    value: str


@dataclass(frozen=True)
class DistributionRule:
    """At most ``share`` (a fraction in [0, 1]) of the people matching ``where`` have SA
    value ``value``. ``where`` maps a QI column name to a condition on it: a list of values
    (membership) or a pair ``[lo, hi]`` given as ``{"min": lo, "max": hi}`` (inclusive, numeric
    columns; either end may be absent)."""

    where: dict[str, Any]
    value: str
    share: float


@dataclass(frozen=True, eq=False)
class Coalition:
    """Colluding data providers (paper 003 section II, the m-adversary): ``providers`` are
    their ids as the table's provider column holds them (text), ``records`` their own rows
    (QI and SA columns, original values), ``m`` the coalition size to search the worst
    coalition of. At least one is given. Given both, ``records`` are those providers' rows:
    the attack subtracts one or the other, never both (by provider id when the release has a
    provider column, else by placing the records), and the number of providers tells which
    of the release's recorded m-privacy checks cover the coalition (so does ``m``, or the
    provider column of the records, :mod:`kerckhoffs.attacks.insider.claim`)."""

    providers: tuple[str, ...] = ()
    records: pd.DataFrame | None = None
    m: int | None = None

    def __post_init__(self) -> None:
        if not self.providers and self.records is None and self.m is None:
            raise InputError("coalition: needs providers, records or m")
        if self.m is not None and (
            isinstance(self.m, bool) or not isinstance(self.m, int) or self.m < 1
        ):
            raise InputError(f"coalition: m must be an integer >= 1, got {self.m!r}")
        object.__setattr__(self, "providers", tuple(format_value(p) for p in self.providers))


@dataclass
class Knowledge:
    """Everything the adversary knows besides the attacked release."""

    population: pd.DataFrame | None = None
    not_having: list[NotHaving] = field(default_factory=list)
    rules: list[DistributionRule] = field(default_factory=list)
    releases: list[Path | Release] = field(default_factory=list)
    """Other releases of overlapping populations: directories (read when an attack needs
    them) or releases already in memory."""
    schema: Path | Schema | None = None
    """The schema whose hierarchies say what published cells cover: a TOML path or a
    :class:`~kerckhoffs.data.schema.Schema`."""
    coalition: Coalition | None = None
    """The colluding providers of an insider attack (None: an outsider)."""
    source: str = "knowledge"
    """Where the knowledge came from (a file name), for error lines."""

    # -- loading ---------------------------------------------------------------------------
    @classmethod
    def from_path(cls, path: str | Path) -> Knowledge:
        """Knowledge from a file: TOML (everything, see the module docstring) or a CSV /
        Parquet population file."""
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix == ".toml":
            return cls.from_toml(path)
        if suffix in POPULATION_SUFFIXES:
            return cls(population=read_population(path), source=path.name)
        raise InputError(
            f"{path}: knowledge must be a .toml file or a population table "
            f"({', '.join(sorted(POPULATION_SUFFIXES))})"
        )

    @classmethod
    def from_toml(cls, path: str | Path) -> Knowledge:
        """Read knowledge from a TOML file (format in the module docstring)."""
        path = Path(path)
        raw = load_toml(path, "knowledge file")
        return cls.from_dict(raw, base_dir=path.parent, source=path.name)

    @classmethod
    def from_dict(
        cls, raw: dict[str, Any], *, base_dir: Path | None = None, source: str = "knowledge"
    ) -> Knowledge:
        """Build knowledge from the TOML structure; relative paths are under ``base_dir``."""
        base = base_dir or Path(".")
        known = {"population", "not_having", "rule", "releases", "coalition"}
        unknown = sorted(set(raw) - known)
        if unknown:
            raise InputError(
                f"{source}: unknown key {unknown[0]!r} (allowed: {', '.join(sorted(known))})"
            )
        schema_path = None
        population = None
        if "population" in raw:
            population, schema_path = _population(raw["population"], base, source)
        not_having = [
            _not_having(item, i, source) for i, item in enumerate(_items(raw, "not_having", source))
        ]
        rules = [_rule(item, i, source) for i, item in enumerate(_items(raw, "rule", source))]
        releases = _releases(raw.get("releases", []), base, source)
        if population is not None and ID in population.columns and not_having:
            ids = population[ID]
            dup = ids.duplicated(keep=False).to_numpy()
            if dup.any():
                rows = np.flatnonzero(dup)[:2].tolist()
                raise InputError(
                    f"{source}: population id {ids.iloc[rows[0]]!r} appears more than once "
                    f"(rows {rows[0]} and {rows[1]})"
                )
        if not_having and population is None:
            raise InputError(f"{source}: not_having statements need a [population] to refer to")
        coalition = _coalition(raw["coalition"], base, source) if "coalition" in raw else None
        know = cls(population, not_having, rules, releases, schema_path, coalition, source)
        if not_having:
            try:  # every statement must name someone in the population (else it is a typo)
                know.not_having_mask([s.value for s in not_having])
            except InputError as exc:
                raise InputError(f"{source}: {exc}") from None
        return know

    def load_schema(self) -> Schema | None:
        """The schema named by :attr:`schema` (None when there is none)."""
        from kerckhoffs.data.schema import Schema

        if self.schema is None or isinstance(self.schema, Schema):
            return self.schema
        return Schema.from_toml(self.schema)

    def load_releases(self, schema: Schema | None = None) -> list[Release]:
        """The releases of :attr:`releases`, those given as paths read with
        :meth:`Release.from_published`."""
        from kerckhoffs.release import Release

        return [
            p if isinstance(p, Release) else Release.from_published(p, schema)
            for p in self.releases
        ]

    def not_having_mask(
        self, values: Sequence[str], ids: Sequence[Any] | np.ndarray | None = None
    ) -> tuple[np.ndarray, int]:
        """:func:`not_having_mask` over this knowledge's population (ids from its ``id``
        column, else row positions)."""
        if self.population is None:
            raise InputError("not_having statements need a population to refer to")
        if ids is None and ID in self.population.columns:
            ids = self.population[ID].to_numpy()
        return not_having_mask(self.not_having, values, len(self.population), ids)


# -- the not-having filter ------------------------------------------------------------------------
def not_having_mask(
    statements: Sequence[NotHaving],
    values: Sequence[str] | np.ndarray,
    n: int,
    ids: Sequence[Any] | np.ndarray | None = None,
) -> tuple[np.ndarray, int]:
    """bool [n, len(values)]: ``True`` where a statement says target ``i`` does not have
    ``values[v]``; and how many statements name a value outside ``values`` (ignored: they
    remove nothing). Targets are named by ``ids`` (one per target) or, without ids, by
    position ``0..n-1``. A statement naming no target raises a one-line InputError.

    The intersection attack removes these values from ``S_i`` (negative knowledge)."""
    vocab = pd.Index([str(v) for v in values])
    mask = np.zeros((n, len(vocab)), dtype=bool)
    if not statements:
        return mask, 0
    stmt_ids = [s.id for s in statements]
    if ids is None:
        pos = pd.to_numeric(pd.Series(stmt_ids, dtype=object), errors="coerce").to_numpy()
        ok = ~np.isnan(pos) & (pos == np.floor(pos)) & (pos >= 0) & (pos < n)
        where = np.where(ok, pos, -1).astype(np.int64)
        what = f"a target position 0..{n - 1}"
    else:
        id_arr = np.asarray(ids)
        if id_arr.size != n:
            raise InputError(f"not_having: {id_arr.size} ids for {n} targets")
        if np.issubdtype(id_arr.dtype, np.number):
            key = pd.to_numeric(pd.Series(stmt_ids, dtype=object), errors="coerce")
            where = pd.Index(id_arr).get_indexer(key.to_numpy())
        else:
            index = pd.Index(id_arr.astype(str))
            where = index.get_indexer([format_value(x) for x in stmt_ids])
        what = "a population id"
    bad = np.flatnonzero(where < 0)
    if bad.size:
        raise InputError(f"not_having: id {stmt_ids[bad[0]]!r} is not {what}")
    cols = vocab.get_indexer([format_value(s.value) for s in statements])
    known = cols >= 0
    mask[where[known], cols[known]] = True
    return mask, int(np.count_nonzero(~known))


# -- reading --------------------------------------------------------------------------------------
def read_population(
    path: str | Path, *, sep: str | None = None, schema: Schema | None = None
) -> pd.DataFrame:
    """A population table (CSV or Parquet) with number-like columns made numeric (see the
    module docstring; a schema keeps its categorical columns as text)."""
    path = regular_file(path, "population file")  # a FIFO would hang, /dev/zero never end
    if path.suffix.lower() in {".parquet", ".pq"}:
        return read_table(path)
    from kerckhoffs.data.io import sniff_delimiter

    try:
        with open(path, encoding="utf-8-sig") as fh:
            header = fh.readline()
    except OSError:
        return read_table(path, sep=sep)  # gives the one-line error
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text (is it a CSV file?)") from None
    delim = sep or sniff_delimiter(header)
    names = [c.strip().strip('"') for c in header.rstrip("\r\n").split(delim)]
    df = read_table(path, sep=sep, text_columns=names)
    text = set()
    if schema is not None:
        from kerckhoffs.data.schema import Kind

        text = {c.name for c in schema.columns if c.kind == Kind.CATEGORICAL}
    for col in df.columns:
        if col in text:
            continue
        s = df[col]
        num = pd.to_numeric(s, errors="coerce")
        if num.notna().sum() != s.notna().sum():
            continue
        if s.dropna().astype(str).str.strip().str.match(r"^-?0\d").any():
            continue
        df[col] = num
    return df


def _population(raw: Any, base: Path, source: str) -> tuple[pd.DataFrame, Path | None]:
    if not isinstance(raw, dict):
        raise InputError(f"{source}: population must be a table ([population] file = ...)")
    allowed = {"file", "id", "schema", "sep"}
    bad = sorted(set(raw) - allowed)
    if bad:
        raise InputError(
            f"{source}: population: unknown key {bad[0]!r} (allowed: {', '.join(sorted(allowed))})"
        )
    for key in allowed & set(raw):
        if not isinstance(raw[key], str) or not raw[key]:
            raise InputError(f"{source}: population: {key} must be a non-empty string")
    if "file" not in raw:
        raise InputError(f"{source}: population: missing key 'file'")
    schema_path = None
    schema = None
    if "schema" in raw:
        schema_path = base / raw["schema"]
        from kerckhoffs.data.schema import Schema

        try:
            schema = Schema.from_toml(schema_path)
        except KerckhoffsError as exc:
            raise InputError(f"{source}: population: schema: {exc}") from None
    file = base / raw["file"]
    if not file.exists():
        raise InputError(f"{source}: population: file {raw['file']!r} not found ({file})")
    try:
        df = read_population(file, sep=raw.get("sep"), schema=schema)
    except KerckhoffsError as exc:
        raise InputError(f"{source}: population: {exc}") from None
    if "id" in raw:
        col = raw["id"]
        if col not in df.columns:
            raise InputError(f"{source}: population: id column {col!r} is not in {file.name}")
        if ID in df.columns and col != ID:
            raise InputError(
                f"{source}: population: {file.name} already has a column {ID!r}; "
                f"cannot also use {col!r} as the id"
            )
        df[ID] = df[col]
    return df, schema_path


def _items(raw: dict[str, Any], key: str, source: str) -> list[dict[str, Any]]:
    items = raw.get(key, [])
    if not isinstance(items, list) or not all(isinstance(x, dict) for x in items):
        raise InputError(f"{source}: {key} must be an array of tables ([[{key}]])")
    return items


def _scalar(v: Any) -> bool:
    return isinstance(v, str | int | float) and not isinstance(v, bool)


def _not_having(item: dict[str, Any], i: int, source: str) -> NotHaving:
    where = f"{source}: not_having[{i}]"
    bad = sorted(set(item) - {"id", "value"})
    if bad:
        raise InputError(f"{where}: unknown key {bad[0]!r} (allowed: id, value)")
    for key in ("id", "value"):
        if key not in item:
            raise InputError(f"{where}: missing key {key!r}")
    if not (isinstance(item["id"], str | int) and not isinstance(item["id"], bool)):
        raise InputError(f"{where}: id must be a string or an integer, got {item['id']!r}")
    if not _scalar(item["value"]):
        raise InputError(f"{where}: value must be a string or a number, got {item['value']!r}")
    return NotHaving(item["id"], format_value(item["value"]))


def _rule(item: dict[str, Any], i: int, source: str) -> DistributionRule:
    where_s = f"{source}: rule[{i}]"
    allowed = {"where", "value", "share"}
    bad = sorted(set(item) - allowed)
    if bad:
        raise InputError(f"{where_s}: unknown key {bad[0]!r} (allowed: share, value, where)")
    for key in ("where", "value", "share"):
        if key not in item:
            raise InputError(f"{where_s}: missing key {key!r}")
    if not _scalar(item["value"]):
        raise InputError(f"{where_s}: value must be a string or a number, got {item['value']!r}")
    share = item["share"]
    if isinstance(share, bool) or not isinstance(share, int | float) or not 0 <= share <= 1:
        raise InputError(f"{where_s}: share must be a number in [0, 1], got {share!r}")
    cond = item["where"]
    if not isinstance(cond, dict) or not cond:
        raise InputError(
            f"{where_s}: where must be a non-empty table such as {{ age = {{ max = 25 }} }}"
        )
    out: dict[str, Any] = {}
    for col, c in cond.items():
        here = f"{where_s}: where.{col}"
        if _scalar(c):
            out[col] = [c]
        elif isinstance(c, list):
            if not c or not all(_scalar(x) for x in c):
                raise InputError(f"{here}: a list of values must be non-empty strings/numbers")
            out[col] = list(c)
        elif isinstance(c, dict):
            extra = sorted(set(c) - {"min", "max"})
            if extra or not c:
                raise InputError(
                    f"{here}: a range takes keys min and/or max"
                    + (f", not {extra[0]!r}" if extra else "")
                )
            for k, v in c.items():
                if isinstance(v, bool) or not isinstance(v, int | float):
                    raise InputError(f"{here}: {k} must be a number, got {v!r}")
                if not math.isfinite(v):  # TOML reads nan and inf as floats
                    raise InputError(f"{here}: {k} must be a finite number, got {v!r}")
            if "min" in c and "max" in c and c["min"] > c["max"]:
                raise InputError(f"{here}: min {c['min']} is above max {c['max']}")
            out[col] = dict(c)
        else:
            raise InputError(f"{here}: expected a value, a list of values or {{min, max}}")
    return DistributionRule(out, format_value(item["value"]), float(share))


def _coalition(raw: Any, base: Path, source: str) -> Coalition:
    where = f"{source}: coalition"
    if not isinstance(raw, dict):
        raise InputError(f"{where} must be a table ([coalition] providers = [...])")
    allowed = {"providers", "records", "sep", "m"}
    bad = sorted(set(raw) - allowed)
    if bad:
        raise InputError(f"{where}: unknown key {bad[0]!r} (allowed: {', '.join(sorted(allowed))})")
    providers = raw.get("providers", [])
    if not isinstance(providers, list) or not all(_scalar(p) for p in providers):
        raise InputError(f'{where}: providers must be a list of ids such as ["P1", "P3"]')
    if "providers" in raw and not providers:
        raise InputError(f"{where}: providers is empty")
    records = None
    if "records" in raw:
        rec = raw["records"]
        if not isinstance(rec, str) or not rec:
            raise InputError(f"{where}: records must be a file name (CSV or Parquet)")
        sep = raw.get("sep")
        if sep is not None and (not isinstance(sep, str) or not sep):
            raise InputError(f"{where}: sep must be a non-empty string")
        file = base / rec
        if not file.exists():
            raise InputError(f"{where}: records file {rec!r} not found ({file})")
        try:
            records = read_population(file, sep=sep)
        except KerckhoffsError as exc:
            raise InputError(f"{where}: records: {exc}") from None
    elif "sep" in raw:
        raise InputError(f"{where}: sep needs records")
    m = raw.get("m")
    try:
        return Coalition(tuple(providers), records, m)
    except InputError as exc:
        raise InputError(f"{source}: {exc}") from None


def _releases(raw: Any, base: Path, source: str) -> list[Path | Release]:
    if not isinstance(raw, list) or not all(isinstance(x, str) and x for x in raw):
        raise InputError(f'{source}: releases must be a list of paths such as ["h2/"]')
    out: list[Path | Release] = []
    for i, rel in enumerate(raw):
        p = base / rel
        if not p.exists():
            raise InputError(f"{source}: releases[{i}]: {rel!r} not found ({p})")
        out.append(p)
    return out


__all__ = [
    "ID",
    "Coalition",
    "DistributionRule",
    "Knowledge",
    "NotHaving",
    "not_having_mask",
    "read_population",
]
