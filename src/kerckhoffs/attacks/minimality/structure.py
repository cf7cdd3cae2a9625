"""The class structure of a release for the minimality attack (Wong, Fu, Wang, Pei; paper 001
section 4; steps 1-2 of the whole-table driver, ``docs/theory/minimality.md#attack-driver``): which
original classes each published equivalence class (EC) covers, and how many of each class's tuples
it holds.

1. **Classes and ECs.** The individuals' ground QIDs are grouped into classes ``C`` (size
   ``n_C``). Each published EC is a box of code ranges, one per QI: what its cells cover, read
   by :mod:`kerckhoffs.data.cells` (a numeric interval, or the leaf range of a hierarchy node:
   categorical codes follow the hierarchy's depth-first order). An EC whose box is a single
   point is *ungeneralized*: its tuples are the class with that QID (``n_{C,u}`` tuples); the
   class's other ``n_{C,g} = n_C - n_{C,u}`` tuples sit in generalized ECs.
2. **Cover.** A generalized EC covers the classes with ``n_{C,g} > 0`` inside its box. When a
   class is covered by several ECs, how its tuples split between them is unknown to the
   adversary (the paper assumes each class lies in one EC, which local recoding does not
   guarantee: ``docs/theory/minimality.md#err-split-class``) unless the counts force it: an EC with
   one undecided class holds the rest of its tuples from it, a class with one undecided EC puts the
   rest of its tuples there (repeated until nothing changes). The ECs linked by a split that stays
   unknown are *ambiguous* and form connected components. Matching cardinality (paper 001 Definition
   9) is checked throughout: the ECs must hold exactly the covered classes' generalized tuples, else
   :class:`~kerckhoffs.errors.InputError`.

Everything is numpy over classes, boxes and (class, EC) pairs; the Python loops are over QI
dimensions (box containment) and propagation rounds (splits, components).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kerckhoffs.data.cells import code_cover, group_code_cover
from kerckhoffs.data.table import EncodedColumn
from kerckhoffs.errors import InputError, InternalError
from kerckhoffs.release import Partition, Release

__all__ = ["Structure", "box_pairs", "cells_boxes", "published_boxes", "structure"]


# -- boxes: what each published EC covers ---------------------------------------------------------
def published_boxes(release: Release) -> tuple[np.ndarray, np.ndarray]:
    """Code boxes of the groups' published cells: the release's own cells when it carries
    them, else the cells :meth:`Release.generalized_cells` writes (read by
    :func:`kerckhoffs.data.cells.group_code_cover`, as the utility metrics read them)."""
    lo, hi = release.group_bounds()
    return group_code_cover(release.table.qi_columns, lo, hi, release.cells)


def cells_boxes(cells: pd.DataFrame, columns: Sequence[EncodedColumn]) -> tuple:
    """Code boxes of published cells (one row per group) on ``columns``' codes: each cell
    must cover one code range (:meth:`kerckhoffs.data.cells.CodeCover.box`)."""
    g = len(cells)
    lo = np.empty((g, len(columns)), dtype=np.int64)
    hi = np.empty((g, len(columns)), dtype=np.int64)
    for j, col in enumerate(columns):
        if col.name not in cells.columns:
            raise InputError(f"the published cells have no column {col.name!r}")
        lo[:, j], hi[:, j] = code_cover(cells[col.name].to_numpy(), col).box()
    return lo, hi


def box_pairs(points: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All (point, box) with ``lo[box] <= points[point] <= hi[box]`` on every dimension.

    For each box the candidates are the points inside its range on its most selective
    dimension (sorted codes and ``searchsorted``), then filtered on all dimensions; the loop
    is over dimensions only.
    """
    n_p, d = points.shape
    n_b = lo.shape[0]
    if n_p == 0 or n_b == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    orders = [np.argsort(points[:, j], kind="stable") for j in range(d)]
    starts = np.empty((n_b, d), dtype=np.int64)
    counts = np.empty((n_b, d), dtype=np.int64)
    for j in range(d):
        s = points[orders[j], j]
        a = np.searchsorted(s, lo[:, j], side="left")
        starts[:, j] = a
        counts[:, j] = np.searchsorted(s, hi[:, j], side="right") - a
    best = np.argmin(counts, axis=1)
    pts, boxes = [], []
    for j in range(d):
        b = np.flatnonzero(best == j)
        c = counts[b, j]
        if not c.sum():
            continue
        box = np.repeat(b, c)
        off = np.arange(int(c.sum())) - np.repeat(np.cumsum(c) - c, c)
        pts.append(orders[j][np.repeat(starts[b, j], c) + off])
        boxes.append(box)
    if not pts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    pt = np.concatenate(pts)
    bx = np.concatenate(boxes)
    # filter one dimension at a time, the most selective first, on shrinking candidates
    for j in np.argsort(counts.sum(axis=0), kind="stable").tolist():
        c = points[pt, j]
        keep = (c >= lo[bx, j]) & (c <= hi[bx, j])
        if not keep.all():
            pt, bx = pt[keep], bx[keep]
    return pt, bx


def _components(n_box: int, cls: np.ndarray, box: np.ndarray, n_cls: int) -> np.ndarray:
    """Connected components of the bipartite graph class -- box, as the smallest box id of
    each box's component (label propagation with pointer jumping)."""
    lab = np.arange(n_box, dtype=np.int64)
    if cls.size == 0:
        return lab
    while True:
        cmin = np.full(n_cls, n_box, dtype=np.int64)
        np.minimum.at(cmin, cls, lab[box])
        new = lab.copy()
        np.minimum.at(new, box, cmin[cls])
        while True:
            jumped = new[new]
            if np.array_equal(jumped, new):
                break
            new = jumped
        if np.array_equal(new, lab):
            return lab
        lab = new


# -- the published structure ----------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Structure:
    """Classes, ECs and who covers whom (module docstring)."""

    cls: np.ndarray  # class id per individual
    n_c: np.ndarray  # class sizes
    ungen_group: np.ndarray  # ids of the ungeneralized groups
    ungen_class: np.ndarray  # their class
    n_u: np.ndarray  # ungeneralized tuples per class
    n_g: np.ndarray  # generalized tuples per class
    item_group: np.ndarray  # resolved ECs: (group, class, slots) per covered class
    item_class: np.ndarray
    item_slots: np.ndarray
    amb_class: np.ndarray  # classes with tuples in ambiguous ECs
    amb_slots: np.ndarray  # how many of their tuples are there
    amb_comp: np.ndarray  # the ambiguous component (a group id) they are in
    comp_of_group: np.ndarray  # per ambiguous group: its component id, -1 for others
    generalized: np.ndarray  # bool per group
    ambiguous_groups: np.ndarray  # bool per group
    forced_splits: int  # classes over several ECs whose split the counts force


def resolve_splits(
    pair_cls: np.ndarray, pair_grp: np.ndarray, need: np.ndarray, room: np.ndarray
) -> np.ndarray:
    """How many tuples of each class sit in each covering EC, where matching cardinality
    forces it (``-1`` where it does not): an EC with one undecided class gets its remaining
    room, a class with one undecided EC puts its remaining tuples there, a full EC or an
    exhausted class gets 0; repeated until nothing changes (unit propagation, vectorized over
    all pairs). ``need``: generalized tuples per class; ``room``: tuples per group."""
    flow = np.full(pair_cls.shape, -1, dtype=np.int64)
    rem_c = need.astype(np.int64).copy()
    rem_g = room.astype(np.int64).copy()

    def assign(sel: np.ndarray, values: np.ndarray) -> None:
        flow[sel] = values
        np.subtract.at(rem_c, pair_cls[sel], values)
        np.subtract.at(rem_g, pair_grp[sel], values)

    while True:
        unk = flow < 0
        if not unk.any():
            break
        zero = unk & ((rem_g[pair_grp] == 0) | (rem_c[pair_cls] == 0))
        flow[zero] = 0
        unk &= ~zero
        progress = bool(zero.any())
        cnt_g = np.bincount(pair_grp[unk], minlength=room.shape[0])
        sel = np.flatnonzero(unk & (cnt_g[pair_grp] == 1))
        if sel.size:
            assign(sel, rem_g[pair_grp[sel]])
            unk[sel] = False
            progress = True
        cnt_c = np.bincount(pair_cls[unk], minlength=need.shape[0])
        sel = np.flatnonzero(unk & (cnt_c[pair_cls] == 1))
        if sel.size:
            assign(sel, rem_c[pair_cls[sel]])
            progress = True
        if (rem_c < 0).any() or (rem_g < 0).any() or (flow < -1).any():
            g = int(pair_grp[np.argmax((rem_g[pair_grp] < 0) | (rem_c[pair_cls] < 0))])
            raise InputError(
                f"published group {g} and the groups sharing its classes cannot hold the "
                "individuals that generalize to them (matching cardinality, Definition 9)"
            )
        if not progress:
            break
    open_g = np.bincount(pair_grp[flow < 0], minlength=room.shape[0]) > 0
    open_c = np.bincount(pair_cls[flow < 0], minlength=need.shape[0]) > 0
    bad = np.flatnonzero((rem_g != 0) & ~open_g)
    if bad.size or ((rem_c != 0) & ~open_c).any():
        g = int(bad[0]) if bad.size else int(pair_grp[np.argmax((rem_c != 0)[pair_cls])])
        raise InputError(
            f"published group {g} does not hold exactly the individuals that generalize to it "
            "(matching cardinality, Definition 9)"
        )
    return flow


def structure(
    quasi: np.ndarray,
    group_sizes: np.ndarray,
    lo: np.ndarray | None,
    hi: np.ndarray | None,
    member_pairs: tuple[np.ndarray, np.ndarray] | None = None,
) -> Structure:
    """Classes and covers (module docstring). Generalization: ``lo``/``hi`` are the groups' code
    boxes. Bucketization: ``member_pairs`` = (class of each row, group of each row) instead,
    since the QI table shows how many tuples of each class each group holds."""
    n_groups = group_sizes.shape[0]
    cls = Partition.from_columns(quasi).group.astype(np.int64)
    n_cls = int(cls.max()) + 1
    n_c = np.bincount(cls, minlength=n_cls).astype(np.int64)
    _, first = np.unique(cls, return_index=True)
    points = quasi[first].astype(np.int64)

    known_flow = None
    if member_pairs is None:
        if lo is None or hi is None:
            raise InternalError("structure: a generalized release needs its groups' boxes")
        ungen = np.all(lo == hi, axis=1)
        ug = np.flatnonzero(ungen)
        key = Partition.from_columns(np.concatenate([points, lo[ug]])).group.astype(np.int64)
        ug_cls = key[n_cls:]
        if (ug_cls >= n_cls).any():
            g = int(ug[np.argmax(ug_cls >= n_cls)])
            raise InputError(
                f"published group {g} has ungeneralized QIs that no individual of the "
                "population has (the population does not match the release)"
            )
    else:
        row_cls, row_grp = member_pairs
        pair, counts = np.unique(row_grp.astype(np.int64) * n_cls + row_cls, return_counts=True)
        p_grp, p_cls = pair // n_cls, pair % n_cls
        ungen = np.bincount(p_grp, minlength=n_groups) == 1
        ug = np.flatnonzero(ungen)
        ug_cls = np.empty(n_groups, dtype=np.int64)
        ug_cls[p_grp] = p_cls
        ug_cls = ug_cls[ug]
    n_u = np.bincount(ug_cls, weights=group_sizes[ug], minlength=n_cls).astype(np.int64)
    over = np.flatnonzero(n_u > n_c)
    if over.size:
        c = int(over[0])
        raise InputError(
            f"the ungeneralized groups with QIs {points[c].tolist()} hold {int(n_u[c])} tuples "
            f"but only {int(n_c[c])} individuals have them (matching cardinality, Definition 9)"
        )
    n_g = n_c - n_u
    gen_groups = np.flatnonzero(~ungen)
    if member_pairs is None:
        if lo is None or hi is None:
            raise InternalError("structure: a generalized release needs its groups' boxes")
        need = np.flatnonzero(n_g > 0)
        pt, bx = box_pairs(points[need], lo[gen_groups], hi[gen_groups])
        pair_cls, pair_grp = need[pt], gen_groups[bx]
    else:
        multi = ~ungen[p_grp]
        pair_cls, pair_grp = p_cls[multi], p_grp[multi]
        known_flow = counts[multi].astype(np.int64)
    covered = np.bincount(pair_cls, minlength=n_cls) > 0
    lost = np.flatnonzero((n_g > 0) & ~covered)
    if lost.size:
        c = int(lost[0])
        raise InputError(
            f"{int(n_g[c])} individual(s) with QIs {points[c].tolist()} are in no published "
            "group (the population does not match the release)"
        )
    targets = np.bincount(pair_cls, minlength=n_cls)
    flow = (
        known_flow
        if known_flow is not None
        else resolve_splits(pair_cls, pair_grp, n_g, np.where(ungen, 0, group_sizes))
    )
    forced = int(np.count_nonzero((targets > 1) & (n_g > 0)))
    undecided = flow < 0
    forced -= int(np.unique(pair_cls[undecided]).size)
    amb_group, comp, resolved, amb_need, cls_comp, amb_cls, comp_need, comp_tuples = _ambiguous(
        pair_cls, pair_grp, flow, n_g, group_sizes, n_cls
    )
    item_slots = flow[resolved]
    bad = np.flatnonzero(comp_need != comp_tuples)
    if bad.size:
        g = int(bad[0])
        raise InputError(
            f"published group {g} (with the groups sharing its classes) holds "
            f"{int(comp_tuples[g])} tuples but {int(comp_need[g])} individuals generalize to it "
            "(matching cardinality, Definition 9)"
        )
    return Structure(
        cls=cls,
        n_c=n_c,
        ungen_group=ug,
        ungen_class=ug_cls,
        n_u=n_u,
        n_g=n_g,
        item_group=pair_grp[resolved],
        item_class=pair_cls[resolved],
        item_slots=item_slots,
        amb_class=amb_cls,
        amb_slots=amb_need[amb_cls],
        amb_comp=cls_comp[amb_cls],
        comp_of_group=comp,
        generalized=~ungen,
        ambiguous_groups=amb_group,
        forced_splits=max(forced, 0),
    )


def _ambiguous(
    pair_cls: np.ndarray,
    pair_grp: np.ndarray,
    flow: np.ndarray,
    n_g: np.ndarray,
    group_sizes: np.ndarray,
    n_cls: int,
) -> tuple[np.ndarray, ...]:
    """The ECs whose split stays undecided (``flow < 0``) and the components they form through
    the classes they share (step 2 of :mod:`kerckhoffs.attacks.minimality.driver`'s docstring):
    (ambiguous groups, component of each group, resolved pairs, tuples each class still needs,
    component of each class, ambiguous classes, tuples needed and held per component)."""
    n_groups = group_sizes.shape[0]
    undecided = flow < 0
    # ECs with an undecided pair are ambiguous; they couple through the classes they share
    amb_group = np.zeros(n_groups, dtype=bool)
    amb_group[pair_grp[undecided]] = True
    in_amb = amb_group[pair_grp]
    amb_groups = np.flatnonzero(amb_group)
    local = np.full(n_groups, -1, dtype=np.int64)
    local[amb_groups] = np.arange(amb_groups.size)
    comp_local = _components(amb_groups.size, pair_cls[in_amb], local[pair_grp[in_amb]], n_cls)
    comp = np.full(n_groups, -1, dtype=np.int64)
    comp[amb_groups] = amb_groups[comp_local]
    resolved = ~in_amb & (flow > 0)
    item_slots = flow[resolved]
    amb_need = n_g - np.bincount(pair_cls[resolved], weights=item_slots, minlength=n_cls).astype(
        np.int64
    )
    cls_comp = np.full(n_cls, -1, dtype=np.int64)
    cls_comp[pair_cls[in_amb]] = comp[pair_grp[in_amb]]
    amb_cls = np.flatnonzero((cls_comp >= 0) & (amb_need > 0))
    comp_tuples = np.bincount(comp[amb_groups], weights=group_sizes[amb_groups], minlength=n_groups)
    comp_need = np.bincount(cls_comp[amb_cls], weights=amb_need[amb_cls], minlength=n_groups)
    return amb_group, comp, resolved, amb_need, cls_comp, amb_cls, comp_need, comp_tuples
