"""Which individual is which row of a generalized release: the alignment Algorithm 7 needs when
a Hilb release is read from files (paper 000 section 8.3.1;
``docs/theory/asap.md#hilb-attack``).

Algorithm 7's adversary knows every individual's QIs and the algorithm, and reads each
group's Hilbert range off its members' exact QIs. A release read back from files publishes
per group its size, its QI cells (numeric ``[lo-hi]``, categorical the lowest common hierarchy
node) and its SA values, but not which individual is in which group. :func:`align` recovers
what the published data and the population's exact QIs (a table of the same individuals)
determine, and nothing more.

**Types and counts.** Individuals with identical QI vectors (a *type*) are interchangeable: the
release cannot tell them apart, and they share one ``Q_T``. The unknowns are the counts
``x[t, g]``: how many individuals of type ``t`` group ``g`` holds. They satisfy

- *containment*: ``x[t, g] > 0`` only when every cell of ``g`` covers ``t``
  (:func:`kerckhoffs.attacks.locate.locate`; Hilb's cells overlap, so a type usually has
  several candidate groups);
- *sizes*: ``sum_g x[t, g]`` is the number of individuals of type ``t`` and
  ``sum_t x[t, g]`` the published size of ``g`` (so the population must hold exactly the
  release's individuals, plus any who fall in no cell);
- *tight cells* (``tight=True``, for releases made by kerckhoffs's Hilb family, which publishes
  each group's tightest cells, :meth:`~kerckhoffs.release.Release.generalized_cells`): a
  numeric cell ``[lo-hi]`` holds a member of value ``lo`` and one of value ``hi``; a categorical
  cell that is an inner hierarchy node holds members under two of its children (else the
  lowest common node would be lower). (Applied to groups with at most
  :data:`TIGHT_CANDIDATES` candidate types on categorical columns, where it can bind; dropping a
  constraint is always sound.)

**Propagation.** Each count gets bounds ``lo <= x <= hi``, tightened in rounds until nothing
changes (at most ``max_rounds``): for every equality ``sum x = c``, ``x_e <= c - sum_{others}
lo`` and ``x_e >= c - sum_{others} hi``; for every "at least one" constraint ``x_e >= 1 -
sum_{others} hi``. Every bound is implied by the constraints, so the true counts lie within
them (sound), and a count with ``lo == hi`` is *fixed*: it holds in every alignment the
published data allow. (This includes "a group whose fixed rows fill its size takes no other
row" and "a group only one type can fill takes it"; it is bound propagation, not a complete
solver: a count fixed only by reasoning over several groups at once may stay open.) Bounds that
cross mean the population does not fit the release: one-line
:class:`~kerckhoffs.errors.InputError`.

**What is certain.** A group is *resolved* when all its counts are fixed: its members' QI
vectors (hence its Hilbert range) are known. A type is *settled* when all its counts are fixed:
each of its individuals is in one of the groups its counts name (in one group unless the type
is *split* over several). Individuals of unsettled types are *unresolved*: their group depends
on an alignment the published data do not determine. :class:`Alignment` lays the population on
the release's rows: each fixed count fills that many rows of its group with individuals of its
type (``settled`` rows); the rest of the population fills the remaining rows arbitrarily
(unresolved rows, whose group is *not* known). :mod:`kerckhoffs.attacks.hilb.order` draws
conclusions only from the certain part (its docstring).

**Speed.** ``locate`` runs on the distinct QI vectors, not on individuals; the counts are arrays
over (type, candidate group) pairs and each round is a few segment sums over them (no loop
over rows or groups; a loop over rounds and over QI columns). After the first round only the
types and groups holding a pair whose bounds changed are recomputed (``_propagate``): on
Adult at l = 3 (13 million pairs, 7 rounds) that touches 51 million pairs instead of 182
million, and the propagation runs x1.7-2.0 faster (``benchmarks/bench_hilb_align.py``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs.attacks.locate import locate, population_column
from kerckhoffs.data.hierarchy import Hierarchy
from kerckhoffs.data.schema import Column, Kind, Role, Schema
from kerckhoffs.data.table import Table
from kerckhoffs.errors import InputError, ParameterError
from kerckhoffs.release import Release, Scheme

__all__ = ["TIGHT_CANDIDATES", "Alignment", "align"]

TIGHT_CANDIDATES = 256
"""Categorical tight-cell constraints are applied to groups with at most this many candidate
types (a group with more rarely gets down to the few candidates where the constraint binds);
numeric ones to every group."""
MAX_ROUNDS = 64
_PLACEHOLDER_SA = "__kerckhoffs_placeholder_sa__"


@dataclass(frozen=True, eq=False)
class Alignment:
    """The population laid on a release's rows, with what is certain about it (module docstring).

    ``table``: the population's QIs encoded as the anonymizer encoded its input (the release's
    QI order, the schema's hierarchies; numeric codes are ranks over the located individuals),
    one row per release row: release row ``i`` holds population row ``individual[i]``; its
    sensitive column is a placeholder (the adversary does not know the SA).
    ``row_type[i]``: the type (distinct QI vector) of release row ``i``. ``settled[i]``: row
    ``i`` was filled by a fixed count, so its group certainly holds that many rows of its type;
    else its group is unknown. ``type_settled[t]``: every count of type ``t`` is fixed.
    ``open_type``, ``open_group``, ``open_lo``, ``open_hi``: the counts that are not fixed and
    may be positive, with their bounds. ``person_type[p]``: population row ``p``'s type, -1 when
    no group's cells cover it. ``counts``: figures for reports (``located``, ``not_located``,
    ``ambiguous``: located individuals with several candidate groups; ``resolved``: of those,
    the ones whose type got settled; ``unresolved``: individuals of unsettled types; ``split``:
    individuals of settled types spread over several groups; ``types``, ``pairs``, ``rounds``,
    ``resolved_groups``).
    """

    table: Table
    individual: np.ndarray
    row_type: np.ndarray
    settled: np.ndarray
    type_settled: np.ndarray
    open_type: np.ndarray
    open_group: np.ndarray
    open_lo: np.ndarray
    open_hi: np.ndarray
    person_type: np.ndarray
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def n_population(self) -> int:
        """Number of population rows (located or not)."""
        return int(self.person_type.shape[0])

    @property
    def not_located(self) -> np.ndarray:
        """Population rows no group's cells cover."""
        return np.flatnonzero(self.person_type < 0)

    @property
    def unresolved(self) -> np.ndarray:
        """Located population rows whose group the published data do not determine."""
        located = self.person_type >= 0
        bad = np.zeros(self.person_type.shape[0], dtype=bool)
        bad[located] = ~self.type_settled[self.person_type[located]]
        return np.flatnonzero(bad)


def align(
    release: Release,
    population: pd.DataFrame,
    schema: Schema | None,
    *,
    tight: bool = True,
    max_rounds: int = MAX_ROUNDS,
) -> Alignment:
    """Align ``population`` (one row per individual, the release's QI columns with exact
    values; other columns are ignored) with the groups of the generalized ``release`` (module
    docstring). ``schema`` gives the QIs' kinds and hierarchies (needed to read categorical
    cells and to encode the QIs as the anonymizer did). ``tight``: the cells are each group's
    tightest cells (kerckhoffs's Hilb family), which adds constraints.

    Raises :class:`~kerckhoffs.errors.InputError` when the population does not fit: a QI
    missing, more or fewer located individuals than release rows, or counts no alignment
    satisfies.
    """
    if release.scheme != Scheme.GENERALIZATION:
        raise ParameterError(
            "alignment is for generalized releases (a bucketized one publishes exact QIs)"
        )
    if schema is None:
        raise ParameterError(
            "aligning a population with published cells needs the schema (its hierarchies read "
            "the cells and give the anonymizer's QI codes)"
        )
    if not isinstance(population, pd.DataFrame):
        raise ParameterError("the population must be a pandas DataFrame of QI values")
    if max_rounds < 1:
        raise ParameterError(f"max_rounds must be at least 1, got {max_rounds}")
    names = release.table.qi_names
    pop = pd.DataFrame(
        {c: population_column(population, c, schema).reset_index(drop=True) for c in names}
    )
    m = len(pop)
    n = release.table.n
    part = release.partition
    n_groups = part.n_groups
    sizes = part.sizes.astype(np.int64)

    # types: distinct QI vectors, located once each
    person_type = pop.groupby(names, sort=False).ngroup().to_numpy().astype(np.int64)
    n_types = int(person_type.max()) + 1 if m else 0
    first = np.full(n_types, m, dtype=np.int64)
    np.minimum.at(first, person_type, np.arange(m, dtype=np.int64))
    types = pop.iloc[first].reset_index(drop=True)
    type_count = np.bincount(person_type, minlength=n_types).astype(np.int64)
    loc = locate(release, types, schema)
    n_cand = loc.n_matches.astype(np.int64)
    located_type = n_cand > 0
    located = int(type_count[located_type].sum())
    if located != n:
        raise InputError(
            f"the population has {located:,} individuals inside the release's cells "
            f"({m - located:,} outside every cell) but the release has {n:,} rows: Algorithm 7 "
            "needs exactly the release's individuals (paper 000 section 8.3.1)"
        )

    # renumber located types 0..T-1; encode them as the anonymizer encoded its input
    new_id = np.cumsum(located_type) - 1
    person_type = np.where(located_type[person_type], new_id[person_type], -1)
    kept = np.flatnonzero(located_type)
    n_types = kept.size
    ct = type_count[kept]
    types = types.iloc[kept].reset_index(drop=True)
    n_cand = n_cand[kept]
    table = _encode(types, names, schema)

    # (type, candidate group) pairs: the unknown counts
    et = np.repeat(np.arange(n_types, dtype=np.int64), n_cand)
    eg = _gather(loc.indptr, loc.candidates, kept, n_cand).astype(np.int64)
    constraints = _tight_constraints(release, table, et, eg, n_groups) if tight else []
    lo, hi, rounds = _propagate(et, eg, ct, sizes, constraints, max_rounds)

    fixed = lo == hi
    type_settled = np.bincount(et, weights=~fixed, minlength=n_types) == 0
    row_type, settled = _place(part, et, eg, hi, fixed, ct, n)
    individual = np.empty(n, dtype=np.int64)
    by_type = np.argsort(row_type, kind="stable")
    persons = np.flatnonzero(person_type >= 0)
    individual[by_type] = persons[np.argsort(person_type[persons], kind="stable")]
    open_ = ~fixed & (hi > 0)
    in_groups = np.bincount(et[fixed & (hi > 0)], minlength=n_types)
    ambiguous_type = n_cand > 1
    counts = {
        "located": located,
        "not_located": m - located,
        "ambiguous": int(ct[ambiguous_type].sum()),
        "resolved": int(ct[ambiguous_type & type_settled].sum()),
        "unresolved": int(ct[~type_settled].sum()),
        "split": int(ct[type_settled & (in_groups > 1)].sum()),
        "types": int(n_types),
        "pairs": int(et.size),
        "rounds": int(rounds),
        "resolved_groups": int((np.bincount(eg[open_], minlength=n_groups) == 0).sum()),
    }
    return Alignment(
        Table(
            table.schema,
            table.qi[row_type],
            np.zeros(n, dtype=np.int32),
            table.qi_columns,
            table.sa_column,
            table.sensitive,
        ),
        individual,
        row_type,
        settled,
        type_settled,
        et[open_],
        eg[open_],
        lo[open_],
        hi[open_],
        person_type,
        counts,
    )


# -- steps -----------------------------------------------------------------------------------------
def _gather(
    indptr: np.ndarray, candidates: np.ndarray, kept: np.ndarray, n_cand: np.ndarray
) -> np.ndarray:
    """The CSR candidate lists of types ``kept``, concatenated."""
    starts = indptr[kept]
    total = int(n_cand.sum())
    ramp = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(n_cand) - n_cand, n_cand)
    return candidates[np.repeat(starts, n_cand) + ramp]


def _encode(types: pd.DataFrame, names: list[str], schema: Schema) -> Table:
    """The types' QIs encoded with the schema's QI columns in the release's QI order (the
    anonymizer's codes: hierarchy leaves, ranks of the distinct numeric values)."""
    by_name = {c.name: c for c in schema.columns}
    absent = [c for c in names if c not in by_name]
    if absent:
        raise InputError(f"schema: the release's quasi-identifier {absent[0]!r} is not in it")
    cols = [dataclasses.replace(by_name[c], role=Role.QUASI) for c in names]
    cols.append(Column(_PLACEHOLDER_SA, Role.SENSITIVE, kind=Kind.CATEGORICAL))
    reduced = dataclasses.replace(schema, columns=tuple(cols), sensitive_values=None)
    df = types.copy()
    df[_PLACEHOLDER_SA] = "?"  # the adversary does not know the SA; Table needs a column
    return Table.encode(df, reduced, strict_sensitive=False)


@dataclass
class _AtLeastOne:
    """``sum of x over members >= 1``, for many member sets at once: member ``k`` is pair
    ``edge[k]`` of set ``owner[k]``."""

    edge: np.ndarray
    owner: np.ndarray
    n_sets: int

    def tighten(self, lo: np.ndarray, hi: np.ndarray) -> None:
        total = np.bincount(self.owner, weights=hi[self.edge], minlength=self.n_sets)
        if (total < 1).any():
            raise _misfit("a tight cell's bound value")
        np.maximum.at(lo, self.edge, (1 - (total[self.owner] - hi[self.edge])).astype(lo.dtype))


class _TwoChildren:
    """For each group: its members are not all under one child of its categorical cell's node
    (``sum of x outside child c >= 1`` for every child ``c``). Pair ``edge[k]`` of group
    ``group[k]`` lies under child ``child[k]`` (an id unique across groups)."""

    def __init__(
        self, edge: np.ndarray, group: np.ndarray, child: np.ndarray, n_groups: int
    ) -> None:
        self.edge, self.group, self.n_groups = edge, group, n_groups
        ids, self.inv = np.unique(child, return_inverse=True)
        self.n_children = ids.size
        self.owner = np.zeros(ids.size, dtype=np.int64)  # each child's group
        self.owner[self.inv] = group
        self.used = np.unique(group)

    def tighten(self, lo: np.ndarray, hi: np.ndarray) -> None:
        h = hi[self.edge].astype(np.float64)
        per_child = np.bincount(self.inv, weights=h, minlength=self.n_children)
        total = np.bincount(self.group, weights=h, minlength=self.n_groups)
        top = np.full(self.n_groups, -1.0)
        np.maximum.at(top, self.owner, per_child)
        if (total[self.used] - top[self.used] < 1).any():
            raise _misfit("a categorical cell's node")
        is_top = per_child == top[self.owner]
        best = np.full(self.n_groups, -1, dtype=np.int64)  # one child attaining the top
        best[self.owner[is_top]] = np.flatnonzero(is_top)
        rest = per_child.copy()
        rest[best[best >= 0]] = -1.0
        second = np.zeros(self.n_groups)
        np.maximum.at(second, self.owner, rest)
        # the constraint of the heaviest other child binds hardest
        other = np.where(self.inv == best[self.group], second[self.group], top[self.group])
        bound = 1 - (total[self.group] - h - other)
        np.maximum.at(lo, self.edge, bound.astype(lo.dtype))


def _misfit(what: str) -> InputError:
    return InputError(
        f"the population does not fit the release: no alignment of its individuals with the "
        f"groups' sizes and cells exists ({what}); is it the release's population and schema?"
    )


def _tight_constraints(
    release: Release, table: Table, et: np.ndarray, eg: np.ndarray, n_groups: int
) -> list[_AtLeastOne | _TwoChildren]:
    """The tight-cell constraints of the module docstring (a loop over QI columns)."""
    part = release.partition
    head = part.order()[part.starts()]  # one row per group
    pairs_per_group = np.bincount(eg, minlength=n_groups)
    out: list[_AtLeastOne | _TwoChildren] = []
    ends: list[tuple[np.ndarray, np.ndarray]] = []  # (pairs, set id) of numeric bound values
    wanted: list[np.ndarray] = []
    n_sets = 0
    for j, col in enumerate(table.qi_columns):
        pub = release.table.qi_columns[j]
        # each group's cell, as an index into the distinct cells (read once each)
        cell_id, texts = pd.factorize(
            np.asarray(pub.labels[release.table.qi[head, j]], dtype=object), sort=False
        )
        values = table.qi[:, j]
        if col.kind == Kind.NUMERIC:
            bounds = [_numeric_bounds(str(c)) for c in texts]  # a loop over distinct cells
            wide = np.array([b is not None for b in bounds], dtype=bool)[cell_id]
            lo_cell = np.array([b[0] if b else np.nan for b in bounds])[cell_id]
            hi_cell = np.array([b[1] if b else np.nan for b in bounds])[cell_id]
            v = np.asarray(col.values, dtype=float)[values][et]
            for side, target in enumerate((lo_cell, hi_cell)):
                hit = np.flatnonzero(wide[eg] & (v == target[eg]))
                ends.append((hit, eg[hit] * 2 + side + n_sets))
                wanted.append(np.flatnonzero(wide) * 2 + side + n_sets)
            n_sets += 2 * n_groups
            continue
        h = col.hierarchy
        if h is None or h.height < 1:
            continue
        nodes = _inner_nodes(h)
        level = np.array([nodes.get(str(c), (0, 0))[0] for c in texts], dtype=np.int64)[cell_id]
        use = (level > 0) & (pairs_per_group <= TIGHT_CANDIDATES)
        sel = np.flatnonzero(use[eg])
        if sel.size == 0:
            continue
        leaf = values[et[sel]]
        below = level[eg[sel]] - 1
        stack = np.stack(h.node_ids)  # [levels, leaves]
        child = stack[below, leaf].astype(np.int64)
        child = (eg[sel] * (len(h.leaves) + 1) + child).astype(np.int64)
        out.append(_TwoChildren(sel, eg[sel], child, n_groups))
    if wanted:
        need = np.concatenate(wanted)  # every wide cell's two sets, empty ones too
        edge = np.concatenate([e for e, _ in ends])
        owner = np.concatenate([o for _, o in ends])
        if np.setdiff1d(need, owner).size:
            raise _misfit("a numeric cell's bound value")
        ids, inv = np.unique(owner, return_inverse=True)
        out.insert(0, _AtLeastOne(edge, inv.astype(np.int64), ids.size))
    return out


def _numeric_bounds(text: str) -> tuple[float, float] | None:
    """``(lo, hi)`` of a published numeric interval ``[lo-hi]`` with ``lo < hi`` (what
    :meth:`~kerckhoffs.data.table.EncodedColumn.generalize` writes), else None."""
    s = text.strip()
    if len(s) < 5 or s[0] != "[" or s[-1] != "]":
        return None
    s = s[1:-1]
    for k in range(1, len(s) - 1):
        if s[k] == "-":
            try:
                a, b = float(s[:k]), float(s[k + 1 :])
            except ValueError:
                continue
            return (a, b) if a < b else None
    return None


def _inner_nodes(h: Hierarchy) -> dict[str, tuple[int, int]]:
    """Labels naming one inner node with at least two children: label -> (its lowest level,
    node id). A label shared by nodes covering different leaves is left out (the cell does not
    say which node it is), as is a node with one child (no group's lowest common node)."""
    spans: dict[str, list[tuple[int, int, int, int]]] = {}
    for level in range(1, h.height + 1):
        ids = h.node_ids[level]
        starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
        stops = np.r_[starts[1:], ids.size]
        labels = h.node_labels(level)
        for node, (a, b) in enumerate(zip(starts.tolist(), stops.tolist(), strict=True)):
            spans.setdefault(str(labels[node]), []).append((level, node, a, b))
    for leaf in h.leaves.tolist():
        spans.setdefault(str(leaf), []).append((0, -1, 0, 0))
    out: dict[str, tuple[int, int]] = {}
    for label, found in spans.items():
        inner = {(a, b) for lv, _, a, b in found if lv > 0}
        if len(inner) != 1 or any(lv == 0 for lv, *_ in found):
            continue
        level, node, a, b = min(found)
        below = h.node_ids[level - 1][a:b]
        if below[0] != below[-1]:  # two children or more
            out[label] = (level, node)
    return out


def _propagate(
    et: np.ndarray,
    eg: np.ndarray,
    ct: np.ndarray,
    sizes: np.ndarray,
    constraints: list[Any],
    max_rounds: int,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Bounds on every count (module docstring), and the number of rounds run. Sums run over
    contiguous segments: pairs come sorted by type, and one permutation sorts them by group.

    A round tightens every type, then every group, then the constraints. Only *dirty*
    segments are recomputed: those holding a pair whose bounds changed since the segment was
    last tightened (all of them in the first round). A clean segment would see the inputs it
    last saw, which left it unchanged, so the rounds, and the bounds after each, are those of
    recomputing every segment. On Adult at l = 3 (13 million pairs) the first round touches 26
    million pairs and the six after it 25 million together, where each used to touch 26."""
    n_groups = sizes.size
    g_counts = np.bincount(eg, minlength=n_groups)
    if (g_counts == 0).any():
        raise _misfit("a group whose cells cover no individual")
    t_counts = np.bincount(et, minlength=ct.size)  # et is sorted, every type has pairs
    by_group = np.argsort(eg, kind="stable")
    g_starts = np.cumsum(g_counts) - g_counts
    t_starts = np.cumsum(t_counts) - t_counts
    lo = np.zeros(et.size, dtype=np.int32)
    hi = np.minimum(ct[et], sizes[eg]).astype(np.int32)
    dirty = [np.ones(ct.size, dtype=bool), np.ones(n_groups, dtype=bool)]  # types, groups
    rounds = 0
    while rounds < max_rounds:  # a loop over rounds of propagation
        rounds += 1
        moved: list[np.ndarray] = []  # pairs whose bounds changed this round
        for side in (0, 1):
            # per type, the sum over its groups is its count; per group, the sum over its
            # types is its size: each pair is at most what the others' lows leave, at least
            # what the others' highs leave
            cap, starts, counts = (
                (ct, t_starts, t_counts) if side == 0 else (sizes, g_starts, g_counts)
            )
            seg = np.flatnonzero(dirty[side])
            dirty[side][:] = False
            if seg.size == 0:
                continue
            n_seg = counts[seg]
            if seg.size == cap.size:  # every segment (the first round): no gather
                local = starts
                idx = np.arange(et.size) if side == 0 else by_group
            else:
                local = np.cumsum(n_seg) - n_seg
                pos = np.repeat(starts[seg] - local, n_seg) + np.arange(int(n_seg.sum()))
                idx = pos if side == 0 else by_group[pos]  # the segments' pairs, in order
            lo_s, hi_s = lo[idx], hi[idx]
            s_lo = np.add.reduceat(lo_s, local, dtype=np.int64)
            s_hi = np.add.reduceat(hi_s, local, dtype=np.int64)
            if (s_lo > cap[seg]).any() or (s_hi < cap[seg]).any():
                raise _misfit("the groups' sizes")
            new_hi = np.minimum(hi_s, np.repeat((cap[seg] - s_lo).astype(np.int32), n_seg) + lo_s)
            new_lo = np.maximum(lo_s, np.repeat((cap[seg] - s_hi).astype(np.int32), n_seg) + hi_s)
            hit = (new_hi != hi_s) | (new_lo != lo_s)
            if hit.any():
                lo[idx], hi[idx] = new_lo, new_hi
                moved.append(idx[hit])
                dirty[0][et[idx[hit]]] = True
                dirty[1][eg[idx[hit]]] = True
        for c in constraints:
            before = lo[c.edge]
            c.tighten(lo, hi)
            up = c.edge[lo[c.edge] != before]
            if up.size:
                moved.append(up)
                dirty[0][et[up]] = True
                dirty[1][eg[up]] = True
        if not moved:
            break
        if any((lo[m] > hi[m]).any() for m in moved):
            raise _misfit("the groups' sizes and cells")
    return lo.astype(np.int64), hi.astype(np.int64), rounds


def _place(
    part: Any,
    et: np.ndarray,
    eg: np.ndarray,
    hi: np.ndarray,
    fixed: np.ndarray,
    ct: np.ndarray,
    n: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Each release row's type: fixed counts fill their groups' rows (settled), the other
    individuals the remaining rows in type order."""
    rows_by_group = part.order()
    starts = part.starts()
    fe = np.flatnonzero(fixed & (hi > 0))
    fe = fe[np.argsort(eg[fe], kind="stable")]
    cnt = hi[fe]
    g = eg[fe]
    before = np.cumsum(cnt) - cnt
    new = np.r_[True, g[1:] != g[:-1]] if g.size else np.zeros(0, dtype=bool)
    base = before[np.flatnonzero(new)][np.cumsum(new) - 1] if g.size else before
    slot0 = starts[g] + (before - base)
    total = int(cnt.sum())
    ramp = np.arange(total, dtype=np.int64) - np.repeat(before, cnt)
    rows = rows_by_group[np.repeat(slot0, cnt) + ramp]
    row_type = np.full(n, -1, dtype=np.int64)
    row_type[rows] = np.repeat(et[fe], cnt)
    settled = row_type >= 0
    left = ct - np.bincount(et[fe], weights=cnt, minlength=ct.size).astype(np.int64)
    free = np.flatnonzero(~settled)
    row_type[free] = np.repeat(np.arange(ct.size, dtype=np.int64), left)
    return row_type, settled
