"""The one reader of published cells: what a generalized cell covers.

A generalized release publishes, per group and quasi-identifier, a *cell*: a string saying
which original values the group's rows may hold. kerckhoffs writes ``[lo-hi]`` or the value
for a numeric column and the lowest common hierarchy node for a categorical one
(:meth:`~kerckhoffs.data.table.EncodedColumn.generalize`, whose inverse this module is);
full-domain generalization writes hierarchy nodes for both kinds; other tools write other
forms. Every consumer (locating individuals, paper 004,
``docs/theory/composition.md#locators``; the
minimality attack, paper 001 section 4; the utility metrics, which measure the published
cover) reads cells here, so a release one of them reads is read the same way by the others.

**What a cell covers** is a set of disjoint closed ranges (*runs*) on the column's axis:

- numeric columns: the real line of values. ``*`` (everything); a value (``37``); intervals
  ``[lo-hi]`` (negative and exponent numbers are fine, ``[-5--1]``), half-open ``[lo-hi)``
  (:meth:`Hierarchy.intervals` on non-integral data), ARX-style ``[lo, hi[``, ``[lo, hi]``
  and bare ``lo-hi`` (anonypyx); comparisons ``<30``, ``<=30``, ``≤30``, ``>40``, ``>=40``,
  ``≥40``; digit masks ``3*`` = 30..39, ``130**`` = 13000..13099 (paper 004 Table 1); a node
  label of the column's hierarchy, covering ``[smallest leaf, largest leaf]`` under it; else
  a set of such cells (below), covering the union of its members;
- categorical columns with a hierarchy: leaf indices (depth-first order, so a node is one
  run). ``*``; a node label (a label used by several nodes covers the union of their leaves:
  the string cannot say which node was meant); a mask such as ``1305*`` (each ``*`` one
  character, matched against leaf labels); else a set of such cells. Anything else raises;
- categorical columns without a hierarchy: positions in a given *vocabulary* (the known
  values, e.g. a population's distinct values): a value, a mask, ``*`` or a set of them. A
  cell matching no known value covers nothing and is listed in :attr:`CellCover.unmatched`
  (its people may be absent; usually it means the hierarchy was not given).

**Set-valued cells** (both kinds): the distinct values of a group joined by commas, as
anonypyx and AnonyPy publish categorical cells (``Black,White``), bracketed (``{Black,
White}``, ``[Black|White]``) or a printed Python set (``{'Black', 'White'}``); the separator
is a comma if there is one, else ``|``, else ``;``. A cell is read whole before it is split,
so a hierarchy label holding a comma stays one label; the comma form of an interval needs both
brackets (``[20, 30[``), so a bare ``20,30`` is the set of two values.

An unreadable cell is an :class:`~kerckhoffs.errors.InputError` of one line naming the column
and the cell. Cells are parsed once per *distinct* string (a loop over distinct cells, never
over rows); :func:`code_cover` maps the runs onto an encoded column's codes with numpy.
"""

from __future__ import annotations

import math
import re
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kerckhoffs.data.hierarchy import ROOT, Hierarchy
from kerckhoffs.data.schema import Kind
from kerckhoffs.data.table import EncodedColumn
from kerckhoffs.errors import InputError, InternalError

Runs = list[tuple[float, float]]
"""What one cell covers on its column's axis: sorted, disjoint closed ranges ``[lo, hi]``."""

FULL: tuple[float, float] = (-math.inf, math.inf)


# -- the result -----------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class CellCover:
    """What each distinct published cell of one column covers.

    ``cells[c]`` is distinct cell ``c`` (stripped text) and ``runs[c]`` its runs on the
    column's ``axis``: ``"value"`` (numeric: real values), ``"leaf"`` (hierarchy leaf
    indices) or ``"vocabulary"`` (positions in the vocabulary given to :func:`read_cells`).
    ``index[i]`` is the distinct cell of input value ``i``. ``unmatched`` lists the cells
    that cover nothing (possible only on the vocabulary axis).
    """

    column: str
    kind: Kind
    axis: str
    cells: tuple[str, ...]
    runs: tuple[Runs, ...]
    index: np.ndarray
    unmatched: tuple[str, ...] = ()
    nodes: tuple[Runs | None, ...] = ()

    def hull(self) -> tuple[np.ndarray, np.ndarray]:
        """Smallest and largest covered point of each distinct cell (float; ``inf, -inf`` for
        a cell that covers nothing)."""
        lo = np.array([r[0][0] if r else math.inf for r in self.runs], dtype=np.float64)
        hi = np.array([r[-1][1] if r else -math.inf for r in self.runs], dtype=np.float64)
        return lo, hi

    def of(self, text: str) -> Runs:
        """The runs of the distinct cell ``text``."""
        return self.runs[self.cells.index(text.strip())]


@dataclass(frozen=True, eq=False)
class CodeCover:
    """What each published cell of one column covers on an encoded column's codes.

    Distinct cell ``c`` covers the codes ``box_lo[c]..box_hi[c]`` when ``one_range[c]`` (the
    union of what it covers is one code range; else the union has gaps, or is empty).
    Its *alternatives* are the code ranges ``lo[indptr[c]:indptr[c+1]]`` ..
    ``hi[...]``: the nodes a label several hierarchy nodes share may name, else the maximal
    runs of its cover. ``index[i]`` is the distinct cell of input value ``i``."""

    column: str
    cells: tuple[str, ...]
    index: np.ndarray
    box_lo: np.ndarray
    box_hi: np.ndarray
    one_range: np.ndarray
    empty: np.ndarray
    indptr: np.ndarray
    lo: np.ndarray
    hi: np.ndarray

    def box(self) -> tuple[np.ndarray, np.ndarray]:
        """The code range ``[lo, hi]`` of every input value's cell (int64 arrays); a cell that
        covers no code, or covers codes that are not one range, is an InputError."""
        bad = np.flatnonzero(~self.one_range)
        if bad.size:
            c = int(bad[0])
            what = "no value of the column" if self.empty[c] else "values that are not one range"
            raise InputError(
                f"column {self.column!r}: published cell {self.cells[c]!r} covers {what}"
            )
        return self.box_lo[self.index], self.box_hi[self.index]

    def around(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For input value ``i`` whose group holds codes ``lo[i]..hi[i]``: the narrowest
        alternative of its cell that contains them (a label several nodes share names the one
        holding the group). Returns its bounds and a mask of the values whose cell has such an
        alternative (the others keep ``lo``, ``hi``). Vectorized over (value, alternative)."""
        lo = np.asarray(lo, dtype=np.int64)
        hi = np.asarray(hi, dtype=np.int64)
        start = self.indptr[:-1][self.index]
        count = np.diff(self.indptr)[self.index]
        who = np.repeat(np.arange(lo.size), count)
        alt = np.repeat(start - (np.cumsum(count) - count), count) + np.arange(int(count.sum()))
        ok = (self.lo[alt] <= lo[who]) & (hi[who] <= self.hi[alt])
        who, alt = who[ok], alt[ok]
        # per value, the narrowest alternative: sort by (value, width), keep the first
        order = np.lexsort((self.hi[alt] - self.lo[alt], who))
        who, alt = who[order], alt[order]
        first = np.r_[True, who[1:] != who[:-1]] if who.size else np.zeros(0, dtype=bool)
        who, alt = who[first], alt[first]
        found = np.zeros(lo.size, dtype=bool)
        found[who] = True
        out_lo, out_hi = lo.copy(), hi.copy()
        out_lo[who], out_hi[who] = self.lo[alt], self.hi[alt]
        return out_lo, out_hi, found


# -- entry points ---------------------------------------------------------------------------------
def read_cells(
    values: Sequence[object] | np.ndarray | pd.Series,
    *,
    column: str,
    kind: Kind | None,
    hierarchy: Hierarchy | None = None,
    vocabulary: Sequence[str] | np.ndarray | None = None,
) -> CellCover:
    """What each published cell in ``values`` (one column's cells, repeats allowed) covers.

    ``kind``: how to read the column; ``None`` reads it as numeric when every cell reads as
    a number, an interval, a comparison, a digit mask or a set of them, else as categorical.
    ``hierarchy``: the column's taxonomy (node labels; leaf indices are the categorical
    axis). ``vocabulary``: for a categorical column without a hierarchy, the known values
    (the axis is their position). Raises :class:`~kerckhoffs.errors.InputError` naming the
    column and the first cell it cannot read.

    >>> cover = read_cells(["[20-29]", "<=18", "3*"], column="age", kind=Kind.NUMERIC)
    >>> cover.runs
    ([(20.0, 29.0)], [(-inf, 18.0)], [(30.0, 39.0)])
    """
    ids, distinct = pd.factorize(pd.Series(np.asarray(values, dtype=object)), sort=False)
    texts = tuple(str(c).strip() for c in np.asarray(distinct, dtype=object))
    index = np.asarray(ids, dtype=np.int64)
    if kind is None:
        numeric = [numeric_runs(t, None) for t in texts]
        if all(r is not None for r in numeric):
            runs = tuple(r for r in numeric if r is not None)
            return CellCover(column, Kind.NUMERIC, "value", texts, runs, index)
        kind = Kind.CATEGORICAL
    if kind == Kind.NUMERIC:
        out: list[Runs] = []
        for t in texts:  # a loop over distinct cells, not over rows
            r = numeric_runs(t, hierarchy)
            if r is None:
                where = f" nor a node of hierarchy {hierarchy.name}" if hierarchy else ""
                raise InputError(
                    f"column {column!r}: published cell {t!r} is not a number, an interval "
                    f"such as [20-29], a set such as {{20, 25}}, '*'{where}"
                )
            out.append(r)
        return CellCover(column, Kind.NUMERIC, "value", texts, tuple(out), index)
    if hierarchy is not None:
        runs_h, unmatched = _read_categorical(
            list(texts), _hierarchy_reader(hierarchy), _unreadable(column, hierarchy)
        )
        labels = label_ranges(hierarchy)
        nodes = tuple(
            [(float(a), float(b)) for a, b in labels[t]] if len(labels.get(t, ())) > 1 else None
            for t in texts
        )
        return CellCover(
            column, Kind.CATEGORICAL, "leaf", texts, tuple(runs_h), index, tuple(unmatched), nodes
        )
    vocab = np.asarray([] if vocabulary is None else vocabulary, dtype=object).astype(str)
    runs_v, unmatched = _read_categorical(list(texts), _vocabulary_reader(vocab), None)
    return CellCover(
        column, Kind.CATEGORICAL, "vocabulary", texts, tuple(runs_v), index, tuple(unmatched)
    )


def code_cover(values: Sequence[object] | np.ndarray | pd.Series, col: EncodedColumn) -> CodeCover:
    """What each published cell in ``values`` covers on the codes of encoded column ``col``
    (numeric codes are ranks of the column's values; categorical codes are hierarchy leaves
    in depth-first order): the inverse of :meth:`EncodedColumn.generalize`, and of every
    other cell format :func:`read_cells` knows.

    >>> ages = EncodedColumn("age", Kind.NUMERIC, np.array([20, 25, 31, 40]))
    >>> cc = code_cover(["[20-31]", "40", "*"], ages)
    >>> [tuple(map(int, b)) for b in cc.box()]
    [(0, 3, 0), (2, 3, 3)]
    """
    kind = col.kind
    vocabulary = col.labels.astype(object) if col.hierarchy is None else None
    cover = read_cells(
        values, column=col.name, kind=kind, hierarchy=col.hierarchy, vocabulary=vocabulary
    )
    if kind == Kind.NUMERIC:
        axis = np.asarray(col.values, dtype=np.float64)
    elif col.hierarchy is None:  # vocabulary positions are the codes
        axis = np.arange(col.size, dtype=np.float64)
    else:  # codes -> leaves is non-decreasing: a leaf run is a code run
        axis = np.asarray(col.leaves(np.arange(col.size)), dtype=np.float64)
    n = len(cover.cells)
    box = np.zeros((2, n), dtype=np.int64)
    one_range = np.zeros(n, dtype=bool)
    empty = np.zeros(n, dtype=bool)
    indptr = np.zeros(n + 1, dtype=np.int64)
    alts: list[tuple[np.ndarray, np.ndarray]] = []
    for c, runs in enumerate(cover.runs):  # a loop over distinct cells
        lo, hi = _code_runs(axis, runs)
        one_range[c], empty[c] = lo.size == 1, lo.size == 0
        if lo.size:
            box[:, c] = lo[0], hi[-1]
        nodes = cover.nodes[c] if cover.nodes else None
        if nodes is not None:
            lo, hi = _code_runs(axis, nodes, join=False)
        indptr[c + 1] = indptr[c] + lo.size
        alts.append((lo, hi))
    alt_lo = np.concatenate([a for a, _ in alts]) if alts else np.zeros(0, dtype=np.int64)
    alt_hi = np.concatenate([b for _, b in alts]) if alts else np.zeros(0, dtype=np.int64)
    return CodeCover(
        col.name, cover.cells, cover.index, box[0], box[1], one_range, empty, indptr, alt_lo, alt_hi
    )


def _code_runs(axis: np.ndarray, runs: Runs, join: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The code ranges whose axis values fall in each run (``axis`` non-decreasing per code);
    empty ones dropped; with ``join``, ranges no code separates are joined."""
    a = np.array([r[0] for r in runs], dtype=np.float64)
    b = np.array([r[1] for r in runs], dtype=np.float64)
    lo = np.searchsorted(axis, a, side="left").astype(np.int64)
    hi = np.searchsorted(axis, b, side="right").astype(np.int64) - 1
    keep = lo <= hi
    lo, hi = lo[keep], hi[keep]
    if join and lo.size > 1:  # runs are sorted and disjoint: join adjacent codes
        new = np.r_[True, lo[1:] > hi[:-1] + 1]
        lo, hi = lo[new], np.maximum.reduceat(hi, np.flatnonzero(new))
    return lo, hi


def published_cover(
    col: EncodedColumn, lo: np.ndarray, hi: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The codes covered by the cell :meth:`EncodedColumn.generalize` publishes for groups
    whose codes span ``lo..hi``, computed without writing the cell: numeric ``[lo-hi]``
    covers ``lo..hi``; a categorical lowest common hierarchy node covers every code under it
    (present in the data or not). Vectorized over groups (int64 arrays)."""
    if col.kind == Kind.NUMERIC or col.hierarchy is None:
        return np.asarray(lo, dtype=np.int64).copy(), np.asarray(hi, dtype=np.int64).copy()
    return node_cover(col, lo, hi)


def node_cover(col: EncodedColumn, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The codes under the lowest common hierarchy node of codes ``lo`` and ``hi`` of a
    column with a hierarchy (its codes map to leaves in non-decreasing order, so a node is a
    contiguous code range). Vectorized over pairs (int64 arrays)."""
    lo = np.asarray(lo, dtype=np.int64).copy()
    hi = np.asarray(hi, dtype=np.int64).copy()
    h = col.hierarchy
    if h is None:
        raise InternalError(f"column {col.name!r} has no hierarchy")
    level = h.lca_level(col.leaves(lo), col.leaves(hi))
    for j in np.unique(level).tolist():
        if j == 0:
            continue
        at = level == j
        node_of_code = h.node_ids[j][col.leaves(np.arange(col.size))]  # non-decreasing
        node = node_of_code[lo[at]]
        lo[at] = np.searchsorted(node_of_code, node, side="left")
        hi[at] = np.searchsorted(node_of_code, node, side="right") - 1
    return lo, hi


def group_code_cover(
    columns: Sequence[EncodedColumn],
    lo: np.ndarray,
    hi: np.ndarray,
    cells: pd.DataFrame | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The code range each group's published cell covers on each QI: int64 ``[groups, d]``.

    ``lo``/``hi``: each group's smallest and largest code per QI. Without ``cells`` (the
    release publishes :meth:`EncodedColumn.generalize`'s cells), :func:`published_cover`.
    With ``cells`` (an algorithm that chose its cells, such as full-domain generalization
    publishing a lattice level's node, wider than the rows it holds), each cell is read by
    :func:`code_cover`, and of its runs the one holding the group's codes is taken (a label
    several nodes share names the one holding the group); a column missing from ``cells``,
    or a cell none of whose runs holds the group, falls back to :func:`published_cover`.
    """
    out_lo = np.empty(lo.shape, dtype=np.int64)
    out_hi = np.empty(hi.shape, dtype=np.int64)
    for j, col in enumerate(columns):  # a loop over columns
        a, b = published_cover(col, lo[:, j], hi[:, j])
        if cells is not None and col.name in cells.columns:
            c_lo, c_hi, found = code_cover(cells[col.name].to_numpy(), col).around(
                lo[:, j], hi[:, j]
            )
            a = np.where(found, c_lo, a)
            b = np.where(found, c_hi, b)
        out_lo[:, j], out_hi[:, j] = a, b
    return out_lo, out_hi


def numeric_cell(text: str, hierarchy: Hierarchy | None = None) -> tuple[float, float] | None:
    """The closed range ``[lo, hi]`` (floats) one numeric cell covers, or None if it is not
    a value, interval, comparison, digit mask, ``*`` or node label of ``hierarchy`` (a set is
    not one range: :func:`numeric_runs`)."""
    s = text.strip()
    if s == ROOT:
        return FULL
    v = _number(s)
    if v is not None:
        return (v, v)
    for op, above in _COMPARISONS:
        if s.startswith(op) and (w := _number(s[len(op) :])) is not None:
            return (w, math.inf) if above else (-math.inf, w)
    for op, above in _STRICT:
        if s.startswith(op) and (w := _number(s[len(op) :])) is not None:
            if above:
                return (math.nextafter(w, math.inf), math.inf)
            return (-math.inf, math.nextafter(w, -math.inf))
    if _DIGIT_MASK.fullmatch(s) and any(ch.isdigit() for ch in s):
        lo, hi = float(s.replace("*", "0")), float(s.replace("*", "9"))
        return (min(lo, hi), max(lo, hi))
    interval = _interval(s)
    if interval is not None:
        return interval
    if hierarchy is not None:
        return _hierarchy_span(hierarchy, s)
    return None


def numeric_runs(text: str, hierarchy: Hierarchy | None = None) -> Runs | None:
    """The runs a numeric cell covers: one for a value, an interval, a comparison, a digit
    mask or a node; their union for a set (``{20, 25}``, ``20,25,31``, anonypyx's values of a
    column it treated as categorical, or ``{20-29, 40-49}``); None if unreadable."""
    b = numeric_cell(text, hierarchy)
    if b is not None:
        return [b]
    members = set_members(text)
    if members is None:
        return None
    parts: Runs = []
    for m in members:
        b = numeric_cell(m, hierarchy)
        if b is None:
            return None
        parts.append(b)
    return merge_runs(parts, gap=0.0)


_SET_BRACKETS = {"{": "}", "[": "]"}
_SET_SEPARATORS = (",", "|", ";")
_QUOTES = ("'", '"')


def set_members(text: str) -> list[str] | None:
    """The members of a set-valued cell, or None when ``text`` is not written as a set.

    Members are split on a comma if the text holds one, else on ``|``, else on ``;`` (one
    separator per cell) and stripped of spaces and matching quotes; empty members are dropped
    (``{}`` is the empty set). A bracketed text is a set even with one member."""
    s = text.strip()
    bracketed = len(s) >= 2 and _SET_BRACKETS.get(s[0]) == s[-1]
    inner = s[1:-1] if bracketed else s
    sep = next((c for c in _SET_SEPARATORS if c in inner), None)
    if sep is None and not bracketed:
        return None
    out = []
    for part in inner.split(sep) if sep is not None else [inner]:
        m = part.strip()
        if len(m) >= 2 and m[0] == m[-1] and m[0] in _QUOTES:
            m = m[1:-1].strip()
        if m:
            out.append(m)
    return out


def merge_runs(ranges: Runs, gap: float = 1.0) -> Runs:
    """Sorted, disjoint union of closed ranges, joining ranges less than ``gap`` apart: 1 for
    integer leaf indices and ranks (adjacent ones joined), 0 for real numbers."""
    out: Runs = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1] + gap:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


_LABELS: weakref.WeakKeyDictionary[Hierarchy, dict[str, list[tuple[int, int]]]] = (
    weakref.WeakKeyDictionary()
)


def label_ranges(h: Hierarchy) -> dict[str, list[tuple[int, int]]]:
    """Every label of ``h`` (nodes at every level, leaves included) -> the leaf ranges of the
    nodes so named (cached per hierarchy)."""
    if h in _LABELS:
        return _LABELS[h]
    out: dict[str, list[tuple[int, int]]] = {}
    for level in range(1, h.height + 1):
        ids = h.node_ids[level]
        starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
        ends = np.r_[starts[1:] - 1, ids.size - 1]
        for lab, a, b in zip(h.node_labels(level).tolist(), starts, ends, strict=True):
            out.setdefault(str(lab), []).append((int(a), int(b)))
    for i, leaf in enumerate(h.leaves.tolist()):
        out.setdefault(str(leaf), []).append((i, i))
    _LABELS[h] = out
    return out


# -- categorical ----------------------------------------------------------------------------------
def _hierarchy_reader(h: Hierarchy) -> Callable[[str], Runs | None]:
    ranges = label_ranges(h)
    leaf_labels = pd.Series(np.asarray(h.leaves, dtype=object))
    full: Runs = [FULL]

    def read(text: str) -> Runs | None:
        if text == ROOT:
            return full
        if text in ranges:
            return merge_runs([(float(a), float(b)) for a, b in ranges[text]])
        if "*" in text:
            return _runs_of(leaf_labels.str.fullmatch(_mask_regex(text)).to_numpy())
        return None

    return read


def _vocabulary_reader(vocab: np.ndarray) -> Callable[[str], Runs | None]:
    position = {v: k for k, v in enumerate(vocab.tolist())}
    as_series = pd.Series(vocab.astype(object))
    full: Runs = [FULL]

    def read(text: str) -> Runs | None:
        if text == ROOT:
            return full
        k = position.get(text)
        if k is not None:
            return [(float(k), float(k))]
        if "*" in text:
            return _runs_of(as_series.str.fullmatch(_mask_regex(text)).to_numpy())
        return []  # a value outside the vocabulary covers nothing

    return read


def _unreadable(column: str, h: Hierarchy) -> Callable[[str, str], InputError]:
    def error(cell: str, member: str) -> InputError:
        part = "" if member == cell else f" (member {member!r})"
        return InputError(
            f"column {column!r}: published cell {cell!r}{part} is not a node of hierarchy {h.name}"
        )

    return error


def _read_categorical(
    cells: list[str],
    single: Callable[[str], Runs | None],
    unreadable: Callable[[str, str], InputError] | None,
) -> tuple[list[Runs], list[str]]:
    """Each distinct cell's runs and the cells covering nothing. ``single`` reads one label
    (None: not a label it knows); a cell it cannot read whole is read as a set of members
    (the union of theirs). A member or cell ``single`` cannot read raises
    ``unreadable(cell, member)``; without ``unreadable`` it covers nothing."""
    runs: list[Runs] = []
    unmatched: list[str] = []
    for text in cells:  # a loop over distinct published cells, not over rows
        r = single(text)
        members = None if r else set_members(text)
        if members is not None:
            parts: Runs = []
            for member in members:
                m = single(member)
                if m is None:
                    if unreadable is not None:
                        raise unreadable(text, member)
                    m = []
                parts.extend(m)
            r = merge_runs(parts)
        if r is None:
            if unreadable is not None:
                raise unreadable(text, text)
            r = []
        if not r:
            unmatched.append(text)
        runs.append(r)
    return runs, unmatched


def _runs_of(hit: np.ndarray) -> Runs:
    """The maximal runs of True in ``hit``, as closed index ranges."""
    edges = np.diff(np.r_[0, hit.astype(np.int8), 0])
    starts = np.flatnonzero(edges == 1)
    ends = np.flatnonzero(edges == -1) - 1
    return [(float(a), float(b)) for a, b in zip(starts, ends, strict=True)]


def _mask_regex(text: str) -> str:
    """``1305*`` -> a regex where each ``*`` is one character."""
    return "".join("." if ch == "*" else re.escape(ch) for ch in text)


# -- numbers --------------------------------------------------------------------------------------
def _number(text: str) -> float | None:
    try:
        v = float(text)
    except ValueError:
        return None
    return None if math.isnan(v) else v


_DIGIT_MASK = re.compile(r"-?\d*\*+")
_COMPARISONS = (("<=", False), ("≤", False), (">=", True), ("≥", True))
_STRICT = (("<", False), (">", True))


def _interval(s: str) -> tuple[float, float] | None:
    """``[a-b]``, ``[a-b)``, ``(a-b]``, ``[a, b[`` (ARX), ``[a, b]``, ``a-b``. The comma form
    needs both brackets: a bare ``a,b`` is a set of two values (:func:`set_members`)."""
    lo_open = hi_open = bracketed = False
    if len(s) >= 2 and s[0] in "[(" and s[-1] in "])[":
        bracketed = True
    if s and s[0] in "[(":
        lo_open = s[0] == "("
        s = s[1:]
    if s and s[-1] in "])[":
        hi_open = s[-1] != "]"
        s = s[:-1]
    a = b = None
    if s.count(",") == 1 and bracketed:
        left, right = s.split(",")
        a, b = _number(left.strip()), _number(right.strip())
    else:
        for k in range(1, len(s) - 1):
            if s[k] == "-":
                a, b = _number(s[:k]), _number(s[k + 1 :])
                if a is not None and b is not None:
                    break
    if a is None or b is None or a > b:
        return None
    if lo_open:
        a = math.nextafter(a, math.inf)
    if hi_open:
        b = math.nextafter(b, -math.inf)
    return (a, b)


def _hierarchy_span(h: Hierarchy, label: str) -> tuple[float, float] | None:
    """``[smallest leaf, largest leaf]`` under the node(s) labelled ``label``."""
    ranges = label_ranges(h).get(label)
    if not ranges:
        return None
    leaves = np.array([_number(str(x)) for x in h.leaves.tolist()], dtype=object)
    picked = np.concatenate([np.arange(a, b + 1) for a, b in ranges])
    nums = [v for v in leaves[picked].tolist() if v is not None]
    if not nums:
        return None
    return (min(nums), max(nums))


__all__ = [
    "CellCover",
    "CodeCover",
    "Runs",
    "code_cover",
    "group_code_cover",
    "label_ranges",
    "merge_runs",
    "node_cover",
    "numeric_cell",
    "numeric_runs",
    "published_cover",
    "read_cells",
    "set_members",
]
