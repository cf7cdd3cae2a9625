"""Locating individuals in releases: paper 004's ``Get_equivalence_class`` (Algorithm 1 line
5; locatability, ``docs/theory/composition.md#enabling-properties``, and the locators,
``docs/theory/composition.md#locators``).

Given a :class:`~kerckhoffs.release.Release` and a *population* (the adversary's external table:
one row per individual with the quasi-identifiers' original values, e.g. a voter list), find
for each individual the group(s) of the release whose published cells cover them.

* :func:`locate_rows` is the oracle locator (by row id, ``docs/theory/composition.md#locators``):
  the adversary knows which row of the release each individual is (the paper's experiments "always
  assume locatability", ``docs/theory/composition.md#experiments``).
* :func:`locate` is the locator by region (``docs/theory/composition.md#locators``), run on what the
  release publishes:

  - a **generalized** release is read through its published cells
    (:meth:`Release.generalized_cells`), whether the release was made in-process or read back
    from files (:meth:`Release.from_published`, where the QI values *are* the cell strings).
    A group covers an individual when each of its cells covers the individual's value;
  - a **bucketized** release (Anatomy) publishes every individual's exact QIs beside a group
    id, so an individual is in one of the groups holding a row with exactly their QIs.

**Several groups.** When several groups cover one individual (Hilb's overlapping cells, an
LCA node published by two halves of one categorical Mondrian cut, a QI vector occurring in
two Anatomy buckets), :class:`Location` keeps them all: ``group`` is :data:`AMBIGUOUS` and
``candidates_of(i)`` lists them; the intersection attack then takes the union of their SA
value sets (paper 004 Definition 6 does not say what several matching classes give; the
adversary keeps every value still possible: ``docs/theory/composition.md#err-several-matches``).
When no group covers an individual, ``group`` is :data:`NOT_FOUND` (the attack then learns nothing
from that release, ``docs/theory/composition.md#locators``).

**Reading a cell.** Cells are read by :mod:`kerckhoffs.data.cells` (the one reader every
attack and metric shares: values, intervals in kerckhoffs', ARX's and anonypyx's forms,
comparisons, digit masks such as ``130**`` from the paper's Table 1, hierarchy nodes, masks and
set-valued cells such as ``Black,White``). Each QI column is read as numeric or categorical.
The kind comes from the ``schema`` when given, else from the in-process release's encoded
column, else from the data: a column is numeric when every population value and every
published cell reads as a number (a schema column without a kind but with a hierarchy is
numeric when the population column has a numeric dtype, as :meth:`Table.encode` infers it).
Individuals' coordinates are their values (numeric), their hierarchy leaf indices, or, for a
categorical column without a hierarchy, the rank of their value among the population's
distinct values. An unreadable cell is an :class:`~kerckhoffs.errors.InputError` naming the
column and cell. A categorical cell that matches no population value is no error (its
people may simply be absent from the population) but is reported in
:attr:`Location.notes`, since it usually means the hierarchy was not given.

**Speed.** Every column becomes a number line: the value (numeric), the hierarchy leaf index,
or the rank of the value among the population's distinct values; each distinct cell becomes
one closed range on it (a few for a mask or a shared label). Cells are parsed once per
*distinct* string, population values formatted once per distinct value, and individuals whose
coordinates no range endpoint separates share one coordinate id, so memory stays
``O(groups + individuals)`` plus the bitsets. Individuals with the same ids on every column
are located once. Matching: per column, a bitset over groups for each coordinate id
(``uint64`` words); an individual's candidates are the AND of their columns' bitsets, most
selective column first, until at most a few candidates per individual remain; the other
columns are checked on the (individual, group) candidate pairs. No Python loop runs over
individuals or groups (loops run over columns, distinct cells and chunks of individuals).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from kerckhoffs.data.cells import Runs, read_cells
from kerckhoffs.data.hierarchy import Hierarchy, format_value
from kerckhoffs.data.schema import MISSING_LABEL, Column, Kind, MissingPolicy, Role, Schema
from kerckhoffs.data.table import EncodedColumn, Table
from kerckhoffs.errors import HierarchyError, InputError, InternalError, ParameterError
from kerckhoffs.release import Partition, Release, Scheme

NOT_FOUND = -1
"""``Location.group`` of an individual no group covers."""
AMBIGUOUS = -2
"""``Location.group`` of an individual several groups cover (see ``candidates_of``)."""

_WORDS_PER_CHUNK = 1 << 22
"""Bitset words (8 bytes each) held at once while matching: chunks of individuals are sized
so that one chunk's candidate bitsets take about 32 MB."""
_FEW = 4
"""Stop AND-ing columns' bitsets once a chunk has at most this many candidates per
individual on average; the other columns are checked on the candidate pairs."""


# -- the result -----------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Location:
    """Where each individual of a population sits in one release.

    ``group[i]`` is the group covering individual ``i`` when exactly one does,
    :data:`NOT_FOUND` when none does, :data:`AMBIGUOUS` when several do. All covering groups
    are in CSR form: ``candidates[indptr[i]:indptr[i + 1]]`` (ascending group ids).
    ``notes`` says what the locator could not read (cells matching no population value).
    """

    group: np.ndarray
    indptr: np.ndarray
    candidates: np.ndarray
    notes: tuple[str, ...] = field(default=())

    @classmethod
    def from_groups(cls, group: np.ndarray) -> Location:
        """Each individual in at most one group: ``group[i]`` or a negative value for none."""
        g = np.asarray(group, dtype=np.int64)
        found = g >= 0
        indptr = np.zeros(g.size + 1, dtype=np.int64)
        np.cumsum(found, out=indptr[1:])
        return cls(np.where(found, g, NOT_FOUND), indptr, g[found])

    @classmethod
    def from_pairs(
        cls, n: int, who: np.ndarray, groups: np.ndarray, notes: Sequence[str] = ()
    ) -> Location:
        """From (individual, group) pairs; duplicates are dropped."""
        who = np.asarray(who, dtype=np.int64)
        groups = np.asarray(groups, dtype=np.int64)
        if who.size and not _strictly_sorted(who, groups):
            order = np.lexsort((groups, who))
            who, groups = who[order], groups[order]
            keep = np.ones(who.size, dtype=bool)
            keep[1:] = (who[1:] != who[:-1]) | (groups[1:] != groups[:-1])
            who, groups = who[keep], groups[keep]
        counts = np.bincount(who, minlength=n)
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        group = np.full(n, NOT_FOUND, dtype=np.int64)
        one = counts == 1
        group[one] = groups[indptr[:-1][one]]
        group[counts > 1] = AMBIGUOUS
        return cls(group, indptr, groups, tuple(notes))

    @property
    def n(self) -> int:
        """Number of individuals."""
        return int(self.group.size)

    @property
    def n_matches(self) -> np.ndarray:
        """Number of groups covering each individual."""
        return np.diff(self.indptr)

    @property
    def unlocated(self) -> int:
        """How many individuals no group covers."""
        return int(np.count_nonzero(self.group == NOT_FOUND))

    @property
    def ambiguous(self) -> int:
        """How many individuals several groups cover."""
        return int(np.count_nonzero(self.group == AMBIGUOUS))

    def candidates_of(self, i: int) -> np.ndarray:
        """The groups covering individual ``i``."""
        return self.candidates[self.indptr[i] : self.indptr[i + 1]]


# -- public entry points --------------------------------------------------------------------------
def locate_rows(release: Release, rows: np.ndarray | Sequence[int]) -> Location:
    """The oracle locator (by row id, ``docs/theory/composition.md#locators``): individual ``i`` is
    row ``rows[i]`` of ``release.table`` (a negative row: not in the release)."""
    r = np.asarray(rows, dtype=np.int64)
    if r.ndim != 1:
        raise ParameterError("rows must be one row index per individual")
    n = release.table.n
    if r.size and r.max() >= n:
        raise ParameterError(f"row {int(r.max())} is outside the release ({n} rows)")
    group = np.full(r.size, NOT_FOUND, dtype=np.int64)
    present = r >= 0
    group[present] = release.partition.group[r[present]]
    return Location.from_groups(group)


def locate(release: Release, population: pd.DataFrame, schema: Schema | None = None) -> Location:
    """Each individual's group(s) in ``release`` (the locator by region,
    ``docs/theory/composition.md#locators``; see the module
    docstring for how cells are read and what happens when several groups cover someone).

    ``population`` holds the release's QI columns (by name) with original values, one row per
    individual; other columns are ignored. ``schema`` (optional) supplies the columns' kinds
    and hierarchies, which a release read back from files does not carry: without it,
    categorical cells that are hierarchy node labels (``Europe``) cannot be read.
    Raises :class:`~kerckhoffs.errors.InputError` (one line) for a missing column, a missing or
    unreadable population value, or a numeric cell that cannot be read.
    """
    return locate_all([release], population, schema)[0]


def locate_all(
    releases: Sequence[Release], population: pd.DataFrame, schema: Schema | None = None
) -> list[Location]:
    """:func:`locate` in every release (the population's distinct values are prepared once)."""
    if not isinstance(population, pd.DataFrame):
        raise ParameterError("the population must be a pandas DataFrame of QI values")
    prepared: dict[str, _PopColumn] = {}
    out = []
    for release in releases:
        names = release.table.qi_names
        for name in names:
            if name not in prepared:
                prepared[name] = _PopColumn(population, name, schema)
        if len(population) == 0:
            out.append(Location.from_groups(np.zeros(0, dtype=np.int64)))
        elif release.scheme == Scheme.BUCKETIZATION:
            out.append(_locate_exact(release, [prepared[c] for c in names]))
        else:
            out.append(_locate_cells(release, [prepared[c] for c in names], schema))
    return out


def population_column(population: pd.DataFrame, name: str, schema: Schema | None) -> pd.Series:
    """The population's QI column ``name`` as the anonymizer read the same column
    (:meth:`Table.encode <kerckhoffs.data.table.Table.encode>`): the schema's ``na_values``
    are missing in a text column, and a missing cell becomes :data:`MISSING_LABEL` (``"?"``,
    the value a release publishes for it) where the column's policy is ``category``. Under
    ``error`` or ``drop`` (the anonymizer refuses or drops such rows, so no release holds
    them), or without a schema, a missing cell is a one-line :class:`InputError` naming the
    column and row."""
    if name not in population.columns:
        raise InputError(f"population: column {name!r} (a quasi-identifier) is missing")
    s = population[name]
    column = next((c for c in schema.columns if c.name == name), None) if schema else None
    if schema is not None and schema.na_values and not pd.api.types.is_numeric_dtype(s):
        s = s.mask(s.isin(schema.na_values))
    na = s.isna().to_numpy()
    if not na.any():
        return s
    row = int(np.argmax(na))
    if schema is None or column is None:
        raise InputError(f"population: column {name!r} has a missing value (row {row})")
    policy = schema.missing_policy(column)
    if policy != MissingPolicy.CATEGORY:
        raise InputError(
            f"population: column {name!r} has a missing value (row {row}) and the schema says "
            f'missing = "{policy.value}" for it (no release holds such a person): fill it in '
            "or leave that person out"
        )
    if isinstance(s.dtype, pd.CategoricalDtype):
        if MISSING_LABEL not in s.cat.categories:
            s = s.cat.add_categories([MISSING_LABEL])
        return s.fillna(MISSING_LABEL)
    if not isinstance(s.dtype, pd.StringDtype):
        s = s.astype(object)  # numbers read from a file: "?" joins them as text
    return s.where(~na, MISSING_LABEL)


def population_table(population: pd.DataFrame, schema: Schema, release: Release) -> Table:
    """The population's QIs encoded as the anonymizer encoded its input: the release's QI
    columns, in its order, with ``schema``'s kinds and hierarchies (numeric codes are ranks of
    the population's values, so a population of exactly the released individuals gets the
    anonymizer's codes) and missing cells as :func:`population_column` reads them. Its
    sensitive column is a placeholder: the adversary does not know the SA. A QI the population
    lacks is a one-line :class:`InputError`."""
    names = release.table.qi_names
    quasi = [schema.column(n) for n in names]
    missing = [n for n in names if n not in population.columns]
    if missing:
        raise InputError(f"the population has no column {missing[0]!r} (a QI of the release)")
    sa_name = "__kerckhoffs_sa__"
    cols = (*(Column(c.name, Role.QUASI, c.kind, c.hierarchy, c.widths) for c in quasi),)
    pop_schema = Schema(
        (*cols, Column(sa_name, Role.SENSITIVE, Kind.CATEGORICAL)), base_dir=schema.base_dir
    )
    # missing cells as the anonymizer read them (a "category" cell is the published "?")
    df = pd.DataFrame(
        {n: population_column(population, n, schema).reset_index(drop=True) for n in names}
    )
    df[sa_name] = "x"
    return Table.encode(df, pop_schema, strict_sensitive=False)


class _PopColumn:
    """One population column, factorized once: individuals' codes into its distinct values,
    and those values as text and as numbers (computed on demand)."""

    def __init__(self, population: pd.DataFrame, name: str, schema: Schema | None) -> None:
        s = population_column(population, name, schema)
        self.name = name
        self.series = s
        codes, uniques = pd.factorize(s, sort=False)
        self.codes = codes.astype(np.int64)
        self.uniques = np.asarray(uniques, dtype=object)
        self._texts: np.ndarray | None = None
        self._numbers: dict[bool, np.ndarray | None] = {}
        self._leaves: dict[int, tuple[Hierarchy, np.ndarray]] = {}

    def leaves(self, hierarchy: Hierarchy) -> np.ndarray:
        """Each distinct value's leaf index in ``hierarchy`` (-1 when not a leaf)."""
        hit = self._leaves.get(id(hierarchy))
        if hit is None or hit[0] is not hierarchy:
            index = pd.Index(np.asarray(hierarchy.leaves, dtype=object))
            hit = (hierarchy, index.get_indexer(pd.Index(self.texts(), dtype=object)))
            self._leaves[id(hierarchy)] = hit
        return hit[1]

    def first_row(self, k: int) -> int:
        """The first individual holding distinct value ``k``."""
        return int(np.argmax(self.codes == k))

    def texts(self) -> np.ndarray:
        """The distinct values as text (as hierarchy leaves are written)."""
        if self._texts is None:
            self._texts = np.array([format_value(v) for v in self.uniques], dtype=object)
        return self._texts

    def numbers(self, strict: bool = True) -> np.ndarray | None:
        """The distinct values as floats; a non-number raises (``strict``) or gives None."""
        if strict not in self._numbers:
            self._numbers[strict] = self._to_numbers(strict)
        return self._numbers[strict]

    def _to_numbers(self, strict: bool) -> np.ndarray | None:
        s = self.series
        if pd.api.types.is_bool_dtype(s):
            if strict:
                raise InputError(f"population: column {self.name!r} is numeric but holds booleans")
            return None
        if pd.api.types.is_numeric_dtype(s):
            return self.uniques.astype(float)
        num = pd.to_numeric(pd.Series(self.uniques), errors="coerce").to_numpy(dtype=float)
        bad = np.flatnonzero(np.isnan(num))
        if bad.size:
            if not strict:
                return None
            row = self.first_row(int(bad[0]))
            raise InputError(
                f"population: column {self.name!r} is numeric but row {row} holds "
                f"{self.uniques[bad[0]]!r}"
            )
        return num


# -- bucketized releases: exact QI match ----------------------------------------------------------
def _locate_exact(release: Release, columns: list[_PopColumn]) -> Location:
    """Groups holding a row whose published (exact) QIs equal the individual's."""
    t = release.table
    m = columns[0].codes.size
    pop_codes = np.empty((m, t.d), dtype=np.int64)
    for j, (col, pc) in enumerate(zip(t.qi_columns, columns, strict=True)):
        if col.kind == Kind.NUMERIC:
            x = pc.numbers()
            if x is None:  # numbers() refuses a non-numeric value rather than return None
                raise InternalError(f"column {pc.name!r}: no numbers for a numeric column")
            vals = np.asarray(col.values, dtype=float)
            pos = np.clip(np.searchsorted(vals, x), 0, max(vals.size - 1, 0))
            code_of_unique = np.where(vals[pos] == x, pos, -1)
        else:
            labels = pd.Index(np.asarray(col.labels, dtype=object))
            code_of_unique = labels.get_indexer(pd.Index(pc.texts(), dtype=object))
        pop_codes[:, j] = code_of_unique[pc.codes]
    known = (pop_codes >= 0).all(axis=1)
    both = np.concatenate([t.qi.astype(np.int64), pop_codes[known]], axis=0)
    key = Partition.from_columns(both).group.astype(np.int64)
    row_key, pop_key = key[: t.n], key[t.n :]
    pairs = np.unique(np.stack([row_key, release.partition.group.astype(np.int64)], axis=1), axis=0)
    lo = np.searchsorted(pairs[:, 0], pop_key, side="left")
    hi = np.searchsorted(pairs[:, 0], pop_key, side="right")
    who = np.flatnonzero(known)
    counts = hi - lo
    idx = concat_ranges(lo, counts)
    return Location.from_pairs(m, np.repeat(who, counts), pairs[idx, 1])


# -- generalized releases: cells cover values -----------------------------------------------------
class _Cover:
    """One QI column as intervals on a number line: each individual's coordinate (the value
    for numeric columns, the hierarchy leaf index or the rank of the value for categorical
    ones) and each group's cell as disjoint closed ranges of coordinates (one range almost
    always; more for a mask, or a label several unrelated nodes share).

    Individuals no range endpoint separates are covered by the same groups; they share one
    coordinate id ``u`` (at most ``2 * endpoints + 1`` ids, whatever the population size).
    Memory is ``O(groups + individuals)``; the bitsets, ``O(ids * groups / 8)`` bytes.
    """

    def __init__(
        self, x: np.ndarray, codes: np.ndarray, runs: list[Runs], cell_of_group: np.ndarray
    ) -> None:
        """``x``: the coordinate of each distinct population value; ``codes``: each
        individual's distinct value; ``runs[c]``: distinct cell ``c``'s ranges;
        ``cell_of_group[g]``: group ``g``'s distinct cell."""
        n_cells = len(runs)
        lo_c = np.full(n_cells, np.inf)
        hi_c = np.full(n_cells, -np.inf)  # a cell with no range covers nothing
        for c, rs in enumerate(runs):
            if rs:
                lo_c[c], hi_c[c] = rs[0]
        self.lo, self.hi = lo_c[cell_of_group], hi_c[cell_of_group]
        # further ranges, in layers: layer k holds the (k+1)-th extra range of each group
        # whose cell has one, so a group appears at most once per layer
        self.layers: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        most = max((len(rs) for rs in runs), default=0)
        for k in range(1, most):
            cells = np.array([c for c, rs in enumerate(runs) if len(rs) > k], dtype=np.int64)
            groups = np.flatnonzero(np.isin(cell_of_group, cells))
            lo_k = np.array([runs[c][k][0] for c in range(n_cells) if len(runs[c]) > k])
            hi_k = np.array([runs[c][k][1] for c in range(n_cells) if len(runs[c]) > k])
            pos = np.searchsorted(cells, cell_of_group[groups])
            if groups.size:
                self.layers.append((groups, lo_k[pos], hi_k[pos]))
        ends = [self.lo, self.hi] + [a for _, lo, hi in self.layers for a in (lo, hi)]
        bp = np.unique(np.concatenate(ends))
        bp = bp[np.isfinite(bp)]
        pos = np.searchsorted(bp, x, side="left")
        at = np.zeros(x.shape, dtype=bool)
        if bp.size:
            at = (pos < bp.size) & (bp[np.minimum(pos, bp.size - 1)] == x)
        seg = 2 * pos.astype(np.int64) + at
        _, first, inverse = np.unique(seg, return_index=True, return_inverse=True)
        self.x = x[first]
        self.u = inverse.astype(np.int64).reshape(-1)[codes]
        self.n_u = int(first.size)

    def counts(self) -> np.ndarray:
        """Number of groups covering each coordinate id (ranges of one cell are disjoint)."""
        out = np.zeros(self.n_u, dtype=np.int64)
        for lo, hi in [(self.lo, self.hi)] + [(lo, hi) for _, lo, hi in self.layers]:
            out += np.searchsorted(np.sort(lo), self.x, side="right")
            out -= np.searchsorted(np.sort(hi), self.x, side="left")
        return out

    def covers(self, u: np.ndarray, g: np.ndarray) -> np.ndarray:
        """Whether group ``g[k]``'s cell covers coordinate id ``u[k]`` (pairs)."""
        x = self.x[u]
        ok = (self.lo[g] <= x) & (x <= self.hi[g])
        for groups, lo, hi in self.layers:
            k = np.searchsorted(groups, g)
            has = (k < groups.size) & (groups[np.minimum(k, groups.size - 1)] == g)
            k = np.minimum(k, groups.size - 1)
            ok |= has & (lo[k] <= x) & (x <= hi[k])
        return ok

    def bool_rows(self, u: np.ndarray) -> np.ndarray:
        """bool [len(u), groups]: which groups cover each coordinate id in ``u``."""
        x = self.x[u][:, None]
        rows = (self.lo[None, :] <= x) & (x <= self.hi[None, :])
        for groups, lo, hi in self.layers:
            rows[:, groups] |= (lo[None, :] <= x) & (x <= hi[None, :])
        return rows

    def bitset(self, words: int) -> np.ndarray:
        """uint64 [n_u, words]: bit ``g`` of row ``u`` set when group ``g`` covers ``u``."""
        out = np.zeros((self.n_u, words * 8), dtype=np.uint8)
        step = max(1, (1 << 24) // max(words * 64, 1))
        for start in range(0, self.n_u, step):
            stop = min(self.n_u, start + step)
            rows = self.bool_rows(np.arange(start, stop))
            packed = np.packbits(rows, axis=1, bitorder="little")
            out[start:stop, : packed.shape[1]] = packed
        return out.view("<u8")


def _locate_cells(release: Release, columns: list[_PopColumn], schema: Schema | None) -> Location:
    cells = _published_cells(release)
    n_groups = release.partition.n_groups
    m = columns[0].codes.size
    covers: list[_Cover] = []
    notes: list[str] = []
    for col, pc in zip(release.table.qi_columns, columns, strict=True):
        kind, hierarchy = _meaning(col, schema)
        cover, note = _column_cover(pc, kind, hierarchy, cells[col.name])
        if note:
            notes.append(note)
        covers.append(cover)
    # individuals with the same coordinates on every column are located once
    umat = np.stack([c.u for c in covers], axis=1)
    key = Partition.from_columns(umat).group.astype(np.int64)
    _, first = np.unique(key, return_index=True)
    ut = umat[first]  # distinct coordinate tuples, in order of key id
    t_idx, g_idx = _match(ut, covers, n_groups)
    # expand tuple -> individuals
    t_counts = np.bincount(t_idx, minlength=ut.shape[0])
    t_ptr = np.zeros(ut.shape[0] + 1, dtype=np.int64)
    np.cumsum(t_counts, out=t_ptr[1:])
    counts = t_counts[key]
    idx = concat_ranges(t_ptr[:-1][key], counts)
    who = np.repeat(np.arange(m, dtype=np.int64), counts)
    return Location.from_pairs(m, who, g_idx[idx], notes)


def _published_cells(release: Release) -> dict[str, np.ndarray]:
    """Each group's published cell per QI, as object arrays of text: the cells of
    :meth:`Release.generalized_cells` (computed here without the pandas string conversion
    when the release carries no cells of its own: the tightest cell of each group)."""
    if release.cells is not None:
        return {
            name: release.cells[name].astype(str).to_numpy(dtype=object)
            for name in release.table.qi_names
        }
    lo, hi = release.group_bounds()
    return {
        col.name: col.generalize(lo[:, j], hi[:, j]).astype(object)
        for j, col in enumerate(release.table.qi_columns)
    }


def _match(ut: np.ndarray, covers: list[_Cover], n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """All (tuple, group) pairs where every column's cell of the group covers the tuple:
    bitset AND over the most selective columns, then pair checks on the rest."""
    n_t, d = ut.shape
    if n_groups == 0 or n_t == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    # selectivity: mean share of groups covering a tuple's value on each column
    share = np.array([covers[j].counts()[ut[:, j]].mean() / n_groups for j in range(d)])
    order = np.argsort(share, kind="stable")
    words = (n_groups + 63) // 64
    bitsets: dict[int, np.ndarray] = {}

    def bits(j: int) -> np.ndarray:
        if j not in bitsets:
            bitsets[j] = covers[j].bitset(words)
        return bitsets[j]

    chunk = max(1, _WORDS_PER_CHUNK // words)
    out_t, out_g = [], []
    for start in range(0, n_t, chunk):
        rows = ut[start : start + chunk]
        j0 = int(order[0])
        acc = bits(j0)[rows[:, j0]]
        used = 1
        while used < d and int(np.bitwise_count(acc).sum()) > _FEW * rows.shape[0]:
            j = int(order[used])
            acc &= bits(j)[rows[:, j]]
            used += 1
        # set bits: nonzero words, their nonzero bytes, the bytes' bits (little-endian
        # words: byte k of word w holds groups 64w + 8k .. 64w + 8k + 7)
        ti, wi = np.nonzero(acc)
        as_bytes = acc[ti, wi].view(np.uint8).reshape(-1, 8)
        k, bj = np.nonzero(as_bytes)
        k2, b = np.nonzero(np.unpackbits(as_bytes[k, bj][:, None], axis=1, bitorder="little"))
        k = k[k2]
        t = ti[k].astype(np.int64) + start
        g = wi[k].astype(np.int64) * 64 + bj[k2].astype(np.int64) * 8 + b
        for j in order[used:]:
            ok = covers[int(j)].covers(ut[t, int(j)], g)
            t, g = t[ok], g[ok]
        out_t.append(t)
        out_g.append(g)
    return np.concatenate(out_t), np.concatenate(out_g)


def _meaning(col: EncodedColumn, schema: Schema | None) -> tuple[Kind | None, Hierarchy | None]:
    """How to read column ``col``'s cells: (kind, hierarchy); kind ``None`` = decide from the
    data. The schema wins; else an in-process release's encoded column (numeric, or
    categorical with a real hierarchy); a flat categorical column may be a release read back
    from files, whose codes are the cell strings themselves, so it says nothing."""
    if schema is not None and col.name in {c.name for c in schema.columns}:
        sc = schema.column(col.name)
        return sc.kind, _schema_hierarchy(sc, schema)
    if col.kind == Kind.NUMERIC:
        return Kind.NUMERIC, col.hierarchy
    if col.hierarchy is not None and col.hierarchy.height > 1:
        return Kind.CATEGORICAL, col.hierarchy
    return None, None


_HIERARCHY_CACHE: dict[tuple[str, int], Hierarchy] = {}


def _schema_hierarchy(col: Column, schema: Schema) -> Hierarchy | None:
    h = col.hierarchy
    if h is None or isinstance(h, Hierarchy):
        return h
    path = Path(h)
    if not path.is_absolute() and schema.base_dir is not None:
        path = schema.base_dir / path
    try:
        key = (str(path.resolve()), path.stat().st_mtime_ns)
    except OSError:
        raise HierarchyError(f"column {col.name!r}: hierarchy file not found: {path}") from None
    if key not in _HIERARCHY_CACHE:
        try:
            _HIERARCHY_CACHE[key] = Hierarchy.read_csv(path)
        except HierarchyError as exc:
            raise HierarchyError(f"column {col.name!r}: {exc}") from None
    return _HIERARCHY_CACHE[key]


def _column_cover(
    pc: _PopColumn,
    kind: Kind | None,
    hierarchy: Hierarchy | None,
    cells: np.ndarray,
) -> tuple[_Cover, str | None]:
    """The cover of one column and a note on cells it could not match. The cells are read by
    :func:`kerckhoffs.data.cells.read_cells`; the population's coordinates on the same axis
    are its values (numeric), hierarchy leaf indices, or ranks among its distinct values."""
    name = pc.name
    if kind is None and hierarchy is not None:  # as Table.encode infers a kind: by dtype
        s = pc.series
        numeric = pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)
        kind = Kind.NUMERIC if numeric else Kind.CATEGORICAL
    if kind is None:  # numeric when every value and every cell reads as a number
        kind = Kind.CATEGORICAL
        if pc.numbers(strict=False) is not None:
            probe = read_cells(cells, column=name, kind=None)
            if probe.kind == Kind.NUMERIC:
                x = pc.numbers(strict=False)
                if x is None:  # checked just above
                    raise InternalError(f"column {name!r}: its numbers vanished")
                return _Cover(x, pc.codes, list(probe.runs), probe.index), None
    if kind == Kind.NUMERIC:
        cover = read_cells(cells, column=name, kind=Kind.NUMERIC, hierarchy=hierarchy)
        x = pc.numbers()
        if x is None:  # numbers() refuses a non-numeric value rather than return None
            raise InternalError(f"column {name!r}: no numbers for a numeric column")
        return _Cover(x, pc.codes, list(cover.runs), cover.index), None
    texts = pc.texts()
    if hierarchy is not None:
        leaf_of_unique = pc.leaves(hierarchy)
        bad = np.flatnonzero(leaf_of_unique < 0)
        if bad.size:
            raise InputError(
                f"population: column {name!r}: value {texts[bad[0]]!r} "
                f"(row {pc.first_row(int(bad[0]))}) is not a leaf of hierarchy {hierarchy.name}"
            )
        cover = read_cells(cells, column=name, kind=Kind.CATEGORICAL, hierarchy=hierarchy)
        note = None
        if cover.unmatched:
            note = f"column {name!r}: cell(s) matching no leaf, e.g. {cover.unmatched[0]!r}"
        x = leaf_of_unique.astype(float)
        return _Cover(x, pc.codes, list(cover.runs), cover.index), note
    # no hierarchy: rank of the value among the population's distinct values
    vocab, rank = np.unique(texts.astype(str), return_inverse=True)
    cover = read_cells(cells, column=name, kind=Kind.CATEGORICAL, vocabulary=vocab)
    note = None
    if cover.unmatched:
        note = (
            f"column {name!r}: {len(cover.unmatched)} published cell(s) match no population "
            f"value (e.g. {cover.unmatched[0]!r}); if they are hierarchy nodes, pass the schema"
        )
    x = rank.reshape(-1).astype(float)
    return _Cover(x, pc.codes, list(cover.runs), cover.index), note


def _strictly_sorted(who: np.ndarray, groups: np.ndarray) -> bool:
    """Whether (who, groups) pairs are strictly increasing (sorted, no duplicates)."""
    if who.size < 2:
        return True
    dw = np.diff(who)
    return bool(np.all((dw > 0) | ((dw == 0) & (np.diff(groups) > 0))))


def concat_ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(starts[i], starts[i] + counts[i])`` (vectorized)."""
    counts = np.asarray(counts, dtype=np.int64)
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.repeat(np.cumsum(counts) - counts, counts)
    return np.repeat(np.asarray(starts, dtype=np.int64), counts) + (
        np.arange(total, dtype=np.int64) - offsets
    )


__all__ = [
    "AMBIGUOUS",
    "NOT_FOUND",
    "Location",
    "locate",
    "locate_all",
    "locate_rows",
    "population_column",
    "population_table",
]
