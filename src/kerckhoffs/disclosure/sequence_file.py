"""Reading a generalization sequence from a TOML file (the formats of
``examples/disclosure/sequence.toml`` and ``sequence_by_age.toml``; paper 002 Table 2 is the
example).

One ``[[generalization]]`` table per candidate, most useful first (the sequence ends
implicitly in "release nothing"). A file gives its candidates in one of two ways.

**By row position** (:func:`read_sequence`; the candidates of one table only): each entry
gives its partition of the data rows (0 = the first data row), as either

- ``groups = [[0, 1], [2, 3], ...]``: the rows of each group, every row exactly once; or
- ``labels = [...]``: one group label per row (ints or strings, relabelled by first
  appearance),

plus an optional ``name`` (default ``g1``, ``g2``, ...) and ``group_names`` (display labels,
one per group; checked for count only).

**By QI values** (:func:`read_value_sequence`, :func:`read_sequence_by_values`): each entry names
quasi-identifiers and, for each, its bins: closed numeric ranges ``age = [[20, 29], [30, 39]]``
(disjoint; a value equal on both ends is one value) or, for a categorical QI, value sets
``sex = [["F"], ["M"]]``. A row's group is the combination of its bins; a QI the entry does not name
is not split (published as ``*``). Such candidates depend only on public QI values, never on row ids
or the sensitive values (the paper leaves this unsaid, every example does it:
``docs/theory/disclosure-sets.md#err-qi-only``), so they apply to any table with those QIs: the
publisher's own table, and the adversary's population (the ``sequence`` algorithm records them in
its provenance; the ``disclosure-set`` attack re-applies them to the people it knows,
``docs/theory/disclosure-sets.md#naive-algorithm``). A value in no bin of an entry is an error.

Every problem is one :class:`InputError` line naming the file and the generalization.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from kerckhoffs.data.hierarchy import format_value
from kerckhoffs.data.io import load_toml
from kerckhoffs.disclosure.sequence import GeneralizationSequence
from kerckhoffs.errors import InputError, ParameterError

if TYPE_CHECKING:
    from kerckhoffs.data.table import Table


def read_sequence(path: str | Path, n_rows: int) -> GeneralizationSequence:
    """The sequence in the TOML file ``path`` for a table of ``n_rows`` rows.

    Example: ``read_sequence("examples/disclosure/sequence.toml", 10).names`` is
    ``("g1", "g2", "g3")``, paper 002's Table 2.
    """
    p = Path(path)
    entries = _entries(p)
    if not any({"groups", "labels"} & set(e) for e in entries if isinstance(e, dict)):
        raise InputError(
            f"{p}: gives its candidates by QI values, not row positions "
            "(read it with read_sequence_by_values)"
        )
    labels, names = [], []
    for k, entry in enumerate(entries):
        where = f"{p}: generalization {k + 1}"
        if not isinstance(entry, dict):
            raise InputError(f"{where} is not a table")
        labels.append(_partition(entry, n_rows, where))
        name = entry.get("name", f"g{k + 1}")
        if not isinstance(name, str) or not name:
            raise InputError(f"{where}: name must be a non-empty string")
        names.append(name)
        group_names = entry.get("group_names")
        n_groups = int(labels[-1].max()) + 1
        if group_names is not None and (
            not isinstance(group_names, list) or len(group_names) != n_groups
        ):
            raise InputError(f"{where}: group_names must list {n_groups} labels, one per group")
    if len(set(names)) != len(names):
        raise InputError(f"{p}: generalization names must be distinct")
    try:
        return GeneralizationSequence.from_labels(labels, names)
    except ParameterError as e:
        raise InputError(f"{p}: {e}") from None


def _entries(p: Path) -> list[Any]:
    if not p.exists():
        raise InputError(f"{p}: cannot read the sequence file (no such file)")
    raw = load_toml(p, "sequence file")  # a regular file, bounded: one line otherwise
    entries = raw.get("generalization")
    if not isinstance(entries, list) or not entries:
        raise InputError(f"{p}: no [[generalization]] entries")
    unknown = sorted(set(raw) - {"generalization"})
    if unknown:
        raise InputError(f"{p}: unknown key {unknown[0]!r} (expected [[generalization]])")
    return entries


def _partition(entry: dict[str, Any], n_rows: int, where: str) -> np.ndarray:
    unknown = sorted(set(entry) - {"name", "groups", "labels", "group_names"})
    if unknown:
        raise InputError(f"{where}: unknown key {unknown[0]!r}")
    has_groups, has_labels = "groups" in entry, "labels" in entry
    if has_groups == has_labels:
        raise InputError(f"{where}: give exactly one of groups = [[rows]] or labels = [...]")
    if has_labels:
        values = entry["labels"]
        if not isinstance(values, list) or len(values) != n_rows:
            raise InputError(f"{where}: labels must list one group per row ({n_rows} rows)")
        if not all(isinstance(v, int | str) and not isinstance(v, bool) for v in values):
            raise InputError(f"{where}: labels must be integers or strings")
        first: dict[object, int] = {}
        return np.array([first.setdefault(v, len(first)) for v in values], dtype=np.int64)
    groups = entry["groups"]
    if not isinstance(groups, list) or not all(isinstance(g, list) and g for g in groups):
        raise InputError(f"{where}: groups must be a list of non-empty lists of row positions")
    out = np.full(n_rows, -1, dtype=np.int64)
    for gid, rows in enumerate(groups):
        for r in rows:
            if not isinstance(r, int) or isinstance(r, bool) or not 0 <= r < n_rows:
                raise InputError(f"{where}: row {r!r} is not a position 0..{n_rows - 1}")
            if out[r] != -1:
                raise InputError(f"{where}: row {r} is in more than one group")
            out[r] = gid
    missing = np.flatnonzero(out < 0)
    if missing.size:
        raise InputError(f"{where}: row {int(missing[0])} is in no group")
    return out


# -- candidates by QI values ------------------------------------------------------------------
Bin = tuple[float, float] | tuple[str, ...]
"""One bin of a QI: a closed numeric range ``(lo, hi)`` or a set of categorical values."""


@dataclass(frozen=True)
class ValueGeneralization:
    """One candidate given by QI values (module docstring): ``name`` and, per QI it splits,
    its bins in file order (numeric ``(lo, hi)`` ranges sorted by ``lo``, or value sets).

    >>> g = ValueGeneralization("g", {"age": ((20.0, 29.0), (30.0, 44.0))})
    >>> g.cell("age", 1), g.to_data()
    ('[30-44]', {'name': 'g', 'age': [[20, 29], [30, 44]]})
    """

    name: str
    bins: Mapping[str, tuple[Bin, ...]]

    def numeric(self, column: str) -> bool:
        """Whether ``column``'s bins are numeric ranges."""
        return bool(self.bins[column]) and not isinstance(self.bins[column][0][0], str)

    def bin_of(self, column: str, values: np.ndarray | pd.Series) -> np.ndarray:
        """The bin index of every value of ``column`` (int64; -1 where no bin holds it).
        Numeric: one ``searchsorted`` over the ranges; categorical: one lookup per distinct
        value."""
        bins = self.bins[column]
        if self.numeric(column):
            x = pd.to_numeric(pd.Series(np.asarray(values, dtype=object)), errors="coerce")
            v = x.to_numpy(dtype=float)
            lo = np.array([b[0] for b in bins], dtype=float)
            hi = np.array([b[1] for b in bins], dtype=float)
            k = np.searchsorted(lo, v, side="right") - 1
            ok = (k >= 0) & ~np.isnan(v)
            ok &= v <= hi[np.clip(k, 0, None)]
            return np.where(ok, k, -1).astype(np.int64)
        lookup = {m: j for j, b in enumerate(bins) for m in b}
        codes, uniq = pd.factorize(pd.Series(np.asarray(values, dtype=object)))
        mapped = np.array([lookup.get(format_value(u), -1) for u in uniq] + [-1], dtype=np.int64)
        return mapped[np.where(codes >= 0, codes, len(uniq))]  # missing values: -1

    def cell(self, column: str, b: int) -> str:
        """The published cell of bin ``b``: ``[lo-hi]`` (the value when ``lo == hi``) or the
        value set ``{a,b}`` (the value alone when it is one); what
        :mod:`kerckhoffs.data.cells` reads back."""
        bin_ = self.bins[column][b]
        if self.numeric(column):
            lo, hi = (format_value(float(x)) for x in bin_)
            return lo if lo == hi else f"[{lo}-{hi}]"
        members = [str(m) for m in bin_]
        return members[0] if len(members) == 1 else "{" + ",".join(members) + "}"

    def to_data(self) -> dict[str, Any]:
        """The entry as plain data (the file's form; JSON for a release's provenance)."""
        out: dict[str, Any] = {"name": self.name}
        for col, bins in self.bins.items():
            out[col] = [
                [_plain_number(x) for x in b] if self.numeric(col) else list(b) for b in bins
            ]
        return out


def _plain_number(x: object) -> int | float:
    f = float(x)  # type: ignore[arg-type]
    return int(f) if math.isfinite(f) and f.is_integer() else f


@dataclass(frozen=True)
class ValueSequence:
    """Candidates by QI values, best first (module docstring). :meth:`on` lays them on the
    rows of a table or a population; :meth:`to_data` / :meth:`from_data` carry them in a
    release's provenance (public definitions: the bins, never row ids)."""

    candidates: tuple[ValueGeneralization, ...]

    def __len__(self) -> int:
        return len(self.candidates)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.candidates)

    @property
    def columns(self) -> tuple[str, ...]:
        """Every QI some candidate splits, in first-mention order."""
        return tuple(dict.fromkeys(col for c in self.candidates for col in c.bins))

    def groups(self, i: int, values: Table | pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """Candidate ``i`` on the rows of ``values`` (a Table, or a DataFrame holding the QI
        columns): the group id of every row (``0..g-1``, groups numbered by their bins, so the
        same on any table) and, per group, its bins (``int64 [g, columns of candidate i]``).
        A value in no bin raises a one-line InputError naming it."""
        frame = _values_frame(values, self.candidates[i].bins)
        cand = self.candidates[i]
        n = len(frame)
        if not cand.bins:
            return np.zeros(n, dtype=np.int64), np.zeros((1, 0), dtype=np.int64)
        idx = []
        for col in cand.bins:
            b = cand.bin_of(col, frame[col].to_numpy())
            bad = np.flatnonzero(b < 0)
            if bad.size:
                r = int(bad[0])
                raise InputError(
                    f"generalization {cand.name}: {col} {format_value(frame[col].iloc[r])!r} "
                    f"(row {r}) is in none of its bins"
                )
            idx.append(b)
        dims = tuple(len(cand.bins[c]) for c in cand.bins)
        key = np.ravel_multi_index(tuple(idx), dims)
        uniq, inv = np.unique(key, return_inverse=True)
        per_group = np.stack(np.unravel_index(uniq, dims), axis=1).astype(np.int64)
        return inv.reshape(-1).astype(np.int64), per_group

    def cells(self, i: int, per_group: np.ndarray, qi_names: Sequence[str]) -> pd.DataFrame:
        """The published cells of candidate ``i``'s groups (``per_group`` from :meth:`groups`),
        one row per group, one column per QI of ``qi_names`` (``*`` where it does not split)."""
        cand = self.candidates[i]
        pos = {c: j for j, c in enumerate(cand.bins)}
        data = {}
        for name in qi_names:
            if name in pos:
                text = [cand.cell(name, int(b)) for b in per_group[:, pos[name]]]
            else:
                text = ["*"] * per_group.shape[0]
            data[name] = pd.array(text, dtype="str")
        return pd.DataFrame(data)

    def on(self, values: Table | pd.DataFrame) -> GeneralizationSequence:
        """Every candidate's partition of the rows of ``values``."""
        labels = [self.groups(i, values)[0] for i in range(len(self))]
        return GeneralizationSequence.from_labels(labels, self.names)

    def to_data(self) -> list[dict[str, Any]]:
        """The candidates as plain data (one dict per entry, as in the file)."""
        return [c.to_data() for c in self.candidates]

    @classmethod
    def from_data(cls, entries: object, source: str = "sequence") -> ValueSequence:
        """From plain data (:meth:`to_data`, or a file's ``[[generalization]]`` list)."""
        if not isinstance(entries, list) or not entries:
            raise InputError(f"{source}: no [[generalization]] entries")
        cands = []
        for k, entry in enumerate(entries):
            where = f"{source}: generalization {k + 1}"
            if not isinstance(entry, dict):
                raise InputError(f"{where} is not a table")
            cands.append(_value_entry(entry, k, where))
        names = [c.name for c in cands]
        if len(set(names)) != len(names):
            raise InputError(f"{source}: generalization names must be distinct")
        return cls(tuple(cands))


def _values_frame(values: Table | pd.DataFrame, bins: Mapping[str, object]) -> pd.DataFrame:
    if isinstance(values, pd.DataFrame):
        frame = values
    else:
        frame = pd.DataFrame({c.name: values.decode_qi(j) for j, c in enumerate(values.qi_columns)})
    missing = [c for c in bins if c not in frame.columns]
    if missing:
        raise InputError(
            f"the candidates split {missing[0]!r}, which the table has no column for "
            f"(columns: {', '.join(map(str, frame.columns))})"
        )
    return frame


def _value_entry(entry: dict[str, Any], k: int, where: str) -> ValueGeneralization:
    if {"groups", "labels"} & set(entry):
        raise InputError(f"{where}: gives row positions (groups / labels), not QI values")
    name = entry.get("name", f"g{k + 1}")
    if not isinstance(name, str) or not name:
        raise InputError(f"{where}: name must be a non-empty string")
    bins: dict[str, tuple[Bin, ...]] = {}
    for col, raw in entry.items():
        if col in ("name", "group_names"):
            continue
        bins[col] = _bins(raw, f"{where} ({name}): {col}")
    return ValueGeneralization(name, bins)


def _is_number(x: object) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def _bins(raw: object, where: str) -> tuple[Bin, ...]:
    if not isinstance(raw, list) or not raw or not all(isinstance(b, list) and b for b in raw):
        raise InputError(
            f"{where}: give a list of bins: ranges [[lo, hi], ...] or value sets [[a, b], ...]"
        )
    if all(len(b) == 2 and all(_is_number(x) for x in b) for b in raw):
        ranges = sorted((float(b[0]), float(b[1])) for b in raw)
        for lo, hi in ranges:
            if lo > hi:
                raise InputError(f"{where}: range [{lo:g}, {hi:g}] has lo > hi")
        for (_, h1), (l2, _) in pairwise(ranges):
            if l2 <= h1:
                raise InputError(f"{where}: ranges overlap at {format_value(l2)}")
        return tuple(ranges)
    if all(all(isinstance(x, str) for x in b) for b in raw):
        seen: set[str] = set()
        sets: list[tuple[str, ...]] = []
        for b in raw:
            for x in b:
                if x in seen:
                    raise InputError(f"{where}: value {x!r} is in more than one set")
                seen.add(x)
            sets.append(tuple(b))
        return tuple(sets)
    raise InputError(
        f"{where}: every bin must be a numeric range [lo, hi] or a list of text values"
    )


def read_value_sequence(path: str | Path) -> ValueSequence:
    """The candidates by QI values in the TOML file ``path`` (module docstring).

    Example: ``read_value_sequence("examples/disclosure/sequence_by_age.toml").names`` is
    ``("g1", "g2", "g3")``, paper 002's Table 2 by age ranges.
    """
    p = Path(path)
    entries = _entries(p)
    return ValueSequence.from_data(entries, str(p))


def read_sequence_by_values(
    path: str | Path, values: Table | pd.DataFrame
) -> GeneralizationSequence:
    """The partitions of the rows of ``values`` (a Table, or a DataFrame with the QI columns)
    under the candidates by QI values in the file ``path``: :func:`read_value_sequence`, then
    :meth:`ValueSequence.on`."""
    return read_value_sequence(path).on(values)
