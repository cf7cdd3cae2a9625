"""Placing a coalition's own records in the groups of a published release: a transportation
problem (paper 003's insider attack, section I and Table I, run from the published files).

An insider coalition knows its own records (QI and SA values) but not which published rows
they are: the files hold no provider column. A record can only be in a group whose published
cells cover its QIs *and* whose published SA counts hold its value. When the groups' boxes do
not overlap (strict Mondrian) that is one group; a ``provider-aware`` release (paper 003
Algorithm 2) cuts along the providers too, so its boxes may overlap or coincide and a record
may fit several. Placing the records one at a time, or leaving those that fit two boxes
unplaced, then subtracts the wrong rows: the coalition "discovers" its own records.

The coalition knows more than the boxes: every one of its records is in the release, and a
group holds exactly its published number of rows of each SA value. So a placement is an
assignment of records to cells ``(group, SA value)`` in which each record goes to a cell its
QIs and value fit, and cell ``c`` receives at most ``capacity[c]`` records (its published
count): a bipartite b-matching, i.e. a maximum flow from the records through the cells. The
true placement is one of the maximum ones (all of them, when every record is placed). What
the coalition may subtract from a group is the number of its records placed in each of the
group's cells, the cell's *load*; rows of one cell are interchangeable in the release, so
the loads are all that matters.

**When the loads are known.** Two maximum flows differ by a circulation in the residual graph
of either one (Ford and Fulkerson), so a cell's load is the same in every maximum placement
unless a residual cycle runs through the cell's own edge to the sink: records can leave the
cell for another cell with room, or come into it from another cell holding records, along
residual paths that avoid the sink. :func:`place` computes one maximum placement and marks the
cells whose load can vary (``variable``); a group with such a cell cannot be attacked without
claiming what only one placement gives.

Records with identical candidate cells are interchangeable; they are one node of the flow (a
*class*, with their number as its supply), so the graph has as many nodes as distinct
candidate sets and cells, whatever the number of records. The flow is found by a greedy
start and augmenting paths (breadth first search, Edmonds and Karp), both over classes and
cells; no loop runs over the release's rows.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Placement", "place"]

Node = tuple[str, int]
"""A node of the residual graph: ("s", 0) the source, ("t", 0) the sink, ("k", i) class i,
("c", i) cell i."""


@dataclass(frozen=True, eq=False)
class Placement:
    """One maximum placement of the records into cells: ``load[c]`` records in cell ``c``;
    ``variable[c]`` says that some other maximum placement puts a different number there;
    ``placed`` records are placed (the same in every maximum placement); ``unplaceable`` of
    them fit no cell at all; every load from ``low[c]`` to ``high[c]`` occurs in some maximum
    placement (the loads of one cell over the integral maximum flows form an interval)."""

    load: np.ndarray
    variable: np.ndarray
    placed: int
    unplaceable: int
    low: np.ndarray
    """Per cell, the fewest records any maximum placement puts there."""
    high: np.ndarray
    """Per cell, the most records any maximum placement puts there."""
    flows: _Flows | None = field(default=None, repr=False)
    """The flow problem itself, for :meth:`realizable` and :meth:`parts`."""

    @property
    def unique(self) -> bool:
        """Whether every maximum placement gives the same loads."""
        return not bool(self.variable.any())

    def parts(self, cells: Sequence[int]) -> list[int]:
        """For each of ``cells``, the part of the placement it belongs to: records move only
        between cells of one part, so the loads of different parts vary independently (a
        label per connected part of the class-cell graph; all one part when some records are
        left unplaced, module docstring of :func:`_components`; -1 for a cell no record
        fits)."""
        f = self._problem()
        return [f.cell_part.get(int(c), -1) for c in cells]

    def realizable(self, low: Mapping[int, int], high: Mapping[int, int] | None = None) -> bool:
        """Whether some maximum placement puts between ``low[c]`` and ``high[c]`` records in
        each cell ``c`` of ``low`` (exactly ``low[c]`` without ``high``; the other cells as
        they may).

        Two maximum flows on the parts holding those cells decide it: one into those cells
        alone, each of capacity ``low[c]``, must fill them all; one into every cell, those
        capped at ``high[c]``, must place as many records as the placement does. Both are
        necessary (take ``low[c]`` of a cell's records in such a placement; or the placement
        itself). They suffice: start from the first flow and augment it to a maximum flow of
        the second network; an augmenting path ends at the sink the first time it reaches
        it, so it never lowers a cell's load, and every cell keeps at least ``low[c]``."""
        f = self._problem()
        lo = {int(c): int(x) for c, x in low.items()}
        hi = lo if high is None else {c: int(high[c]) for c in lo}
        if any(lo[c] < 0 or lo[c] > hi[c] or lo[c] > f.cap[c] for c in lo):
            return False
        nowhere = [c for c in lo if c not in f.cell_part]  # no record fits: 0 in every placement
        if any(lo[c] > 0 for c in nowhere):
            return False
        for c in nowhere:
            del lo[c]
        if not lo:
            return True
        part_ids = {f.cell_part[c] for c in lo}
        classes = [k for k, p in enumerate(f.class_part) if p in part_ids]
        supply = [f.supply[k] for k in classes]
        cands = [f.cands[k] for k in classes]
        first = [0] * len(f.cap)
        for c, x in lo.items():
            first[c] = x
        sent, _, _, _ = _max_flow(supply, cands, first)
        if sum(sent) != sum(lo.values()):
            return False
        capped = list(f.cap)
        for c in lo:
            capped[c] = min(hi[c], f.cap[c])
        sent, _, _, _ = _max_flow(supply, cands, capped)
        return sum(sent) == sum(f.sent[k] for k in classes)

    def _problem(self) -> _Flows:
        if self.flows is None:
            raise ValueError("this placement does not hold its flow problem (made by place())")
        return self.flows


@dataclass(frozen=True, eq=False)
class _Flows:
    """The flow problem of a :class:`Placement`: classes of interchangeable records (their
    number, their candidate cells), the cells' capacities, the records of each class one
    maximum placement places, and the part (connected piece of the class-cell graph) of
    each class and cell."""

    supply: list[int]
    cands: list[list[int]]
    cap: list[int]
    sent: list[int]
    class_part: list[int] = field(init=False)
    cell_part: dict[int, int] = field(init=False)

    def __post_init__(self) -> None:
        n_k = len(self.supply)
        if any(self.sent[k] < self.supply[k] for k in range(n_k)):
            # an unplaced record can trade places with a placed one anywhere: one part
            object.__setattr__(self, "class_part", [0] * n_k)
            object.__setattr__(self, "cell_part", {c: 0 for cs in self.cands for c in cs})
            return
        class_part, cell_part = _part_labels(self.cands)
        object.__setattr__(self, "class_part", class_part)
        object.__setattr__(self, "cell_part", cell_part)


def _classes(
    record: np.ndarray, cell: np.ndarray, n_records: int
) -> tuple[list[int], list[list[int]], int]:
    """Records grouped by their candidate cells: each class's size and cells, and how many
    records have no candidate."""
    order = np.lexsort((cell, record))
    record, cell = record[order], cell[order]
    n_cand = np.bincount(record, minlength=n_records)
    unplaceable = int(np.count_nonzero(n_cand == 0))
    # one candidate: classes by cell, counted at once
    one = n_cand[record] == 1
    single, count = np.unique(cell[one], return_counts=True)
    sizes = count.tolist()
    cells = [[c] for c in single.tolist()]
    # several: classes by the tuple of their cells (records in overlapping boxes only)
    many = ~one
    if many.any():
        r, c = record[many], cell[many]
        starts = np.flatnonzero(np.r_[True, r[1:] != r[:-1]])
        seen: dict[tuple[int, ...], int] = {}
        for part in np.split(c, starts[1:]):
            key = tuple(part.tolist())
            seen[key] = seen.get(key, 0) + 1
        for key, n in seen.items():
            sizes.append(n)
            cells.append(list(key))
    return sizes, cells, unplaceable


def place(record: np.ndarray, cell: np.ndarray, n_records: int, capacity: np.ndarray) -> Placement:
    """A maximum placement of ``n_records`` records into cells of the given ``capacity``,
    record ``record[i]`` allowed in cell ``cell[i]`` (pairs; a pair into a cell of capacity 0
    is ignored), with the cells whose load differs between maximum placements (module
    docstring).

    >>> p = place(np.array([0, 0, 1]), np.array([0, 1, 1]), 2, np.array([1, 1]))
    >>> p.load.tolist(), p.unique
    ([1, 1], True)
    >>> place(np.array([0, 0]), np.array([0, 1]), 1, np.array([1, 1])).variable.tolist()
    [True, True]
    """
    capacity = np.asarray(capacity, dtype=np.int64)
    record = np.asarray(record, dtype=np.int64)
    cell = np.asarray(cell, dtype=np.int64)
    keep = capacity[cell] > 0
    record, cell = record[keep], cell[keep]
    if record.size:  # a pair given twice is one candidate
        pairs = np.unique(np.stack([record, cell], axis=1), axis=0)
        record, cell = pairs[:, 0], pairs[:, 1]
    supply, cands, unplaceable = _classes(record, cell, n_records)
    cap = capacity.tolist()
    sent, load, flow, users = _max_flow(supply, cands, cap)
    variable = _variable_cells(supply, sent, cands, users, cap, load)
    low = np.asarray(load, dtype=np.int64)
    high = low.copy()
    state = (supply, cands, cap)
    for classes, cells in _components(supply, sent, cands, np.flatnonzero(variable).tolist()):
        for c in cells:
            low[c] = load[c] - _moves(state, sent, flow, load, classes, out_of=c)
            high[c] = load[c] + _moves(state, sent, flow, load, classes, into=c)
    return Placement(
        np.asarray(load, dtype=np.int64),
        variable,
        int(sum(sent)),
        unplaceable,
        low,
        high,
        _Flows(supply, cands, cap, sent),
    )


def _max_flow(
    supply: list[int], cands: list[list[int]], cap: list[int]
) -> tuple[list[int], list[int], list[dict[int, int]], dict[int, dict[int, int]]]:
    """A maximum flow from the classes (``supply[k]`` records each, allowed in the cells
    ``cands[k]``) into the cells (at most ``cap[c]`` records each): per class the records
    placed, per cell its load, per class its records in each cell, per cell the classes
    holding records there. A greedy start (the classes with the fewest choices first), then
    augmenting paths (Edmonds and Karp) over classes and cells."""
    n_k = len(supply)
    load = [0] * len(cap)
    sent = [0] * n_k  # records of each class placed
    flow: list[dict[int, int]] = [{} for _ in range(n_k)]  # class -> cell -> records
    users: dict[int, dict[int, int]] = {}  # cell -> class -> records

    def push(k: int, c: int, amount: int) -> None:
        sent[k] += amount
        load[c] += amount
        x = flow[k].get(c, 0) + amount
        u = users.setdefault(c, {})
        if x:
            flow[k][c] = u[k] = x
        else:
            flow[k].pop(c, None)
            u.pop(k, None)

    for k in sorted(range(n_k), key=lambda k: len(cands[k])):
        for c in cands[k]:
            room = min(supply[k] - sent[k], cap[c] - load[c])
            if room > 0:
                push(k, c, room)
            if sent[k] == supply[k]:
                break
    # augmenting paths: from a class with records left, through cells and the classes using
    # them, to a cell with room
    while True:
        path = _augmenting_path(supply, sent, cands, users, cap, load)
        if path is None:
            break
        start, steps, end = path
        amount = min(supply[start] - sent[start], cap[end] - load[end])
        for k, c_in, _ in steps:  # k gives up records in c_in (a reverse edge)
            amount = min(amount, flow[k][c_in])
        push(start, steps[0][1] if steps else end, amount)
        for k, c_in, c_out in steps:
            push(k, c_in, -amount)
            push(k, c_out, amount)
    return sent, load, flow, users


def _components(
    supply: list[int], sent: list[int], cands: list[list[int]], cells: list[int]
) -> list[tuple[list[int], list[int]]]:
    """The ``cells`` grouped by the connected part of the class-cell graph they lie in, each
    with that part's classes: records move only inside one part, unless some records are
    left unplaced (then a record dropped in one part can make room for one placed in
    another, through the source, and all is one part)."""
    n_k = len(supply)
    if any(sent[k] < supply[k] for k in range(n_k)):
        return [(list(range(n_k)), cells)] if cells else []
    class_part, cell_part = _part_labels(cands)
    classes: dict[int, list[int]] = {}
    for k, part in enumerate(class_part):
        classes.setdefault(part, []).append(k)
    by_part: dict[int, list[int]] = {}
    for c in cells:  # a cell no class can use is a part of its own
        by_part.setdefault(cell_part.get(c, -1 - c), []).append(c)
    return [(classes.get(r, []), cs) for r, cs in by_part.items()]


def _part_labels(cands: list[list[int]]) -> tuple[list[int], dict[int, int]]:
    """The connected parts of the class-cell graph (class ``k`` joined to each cell of
    ``cands[k]``): per class a part label, and per cell some class can use the same label
    as that class (union-find over nodes ``k`` for classes and ``-1 - c`` for cells)."""
    parent: dict[int, int] = {}

    def root(x: int) -> int:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for k, cs in enumerate(cands):
        for c in cs:
            parent[root(-1 - c)] = root(k)
    return [root(k) for k in range(len(cands))], {c: root(-1 - c) for cs in cands for c in cs}


def _moves(
    state: tuple[list[int], list[list[int]], list[int]],
    sent: list[int],
    flow: list[dict[int, int]],
    load: list[int],
    classes: list[int],
    *,
    into: int = -1,
    out_of: int = -1,
) -> int:
    """How many records can be moved, one at a time and keeping every other placement rule,
    into cell ``into`` from other cells (or out of cell ``out_of`` into other cells with room),
    on a copy of the part of the placement made of ``classes`` and their cells: residual
    paths that avoid the sink, each the records of a class moving from one cell to the next
    (or, through the source, one record dropped and another of the same supply placed)."""
    supply, cands, cap = state
    part_sent = {k: sent[k] for k in classes}
    part_flow = {k: dict(flow[k]) for k in classes}
    part_load = {c: load[c] for k in classes for c in cands[k]}
    users: dict[int, dict[int, int]] = {}
    for k, f in part_flow.items():
        for c, x in f.items():
            users.setdefault(c, {})[k] = x

    def push(k: int, c: int, amount: int) -> None:
        part_sent[k] += amount
        part_load[c] += amount
        x = part_flow[k].get(c, 0) + amount
        if x:
            part_flow[k][c] = users.setdefault(c, {})[k] = x
        else:
            part_flow[k].pop(c, None)
            users.get(c, {}).pop(k, None)

    moved = 0
    while True:
        if into >= 0:
            if part_load[into] >= cap[into]:
                break
            starts = [c for c, x in part_load.items() if c != into and x > 0]
        else:
            if part_load[out_of] <= 0:
                break
            starts = [out_of]
        path = _residual_path(
            starts, into, out_of, (supply, cands, cap), part_sent, users, part_load
        )
        if path is None:
            break
        for u, v in itertools.pairwise(path):
            if u[0] == "c" and v[0] == "k":
                push(v[1], u[1], -1)  # class v takes one of its records out of cell u
            elif u[0] == "k" and v[0] == "c":
                push(u[1], v[1], 1)  # and puts it (or a new one, from the source) in v
        moved += 1
    return moved


def _residual_path(
    starts: list[int],
    into: int,
    out_of: int,
    state: tuple[list[int], list[list[int]], list[int]],
    sent: dict[int, int],
    users: dict[int, dict[int, int]],
    load: dict[int, int],
) -> list[Node] | None:
    """A shortest residual path without the sink from one of the ``starts`` cells to cell
    ``into`` (or, with ``out_of``, to any other cell with room), among the classes of
    ``sent`` and their cells."""
    supply, cands, cap = state
    parent: dict[Node, Node | None] = {("c", c): None for c in starts}
    queue = deque(parent)
    source: Node = ("s", 0)
    while queue:
        node = queue.popleft()
        kind, i = node
        if kind == "c":
            nxt: list[Node] = [("k", k) for k, x in users.get(i, {}).items() if x > 0]
        elif kind == "k":
            nxt = [("c", c) for c in cands[i]]
            if sent[i] > 0:
                nxt.append(source)
        else:
            nxt = [("k", k) for k, x in sent.items() if x < supply[k]]
        for v in nxt:
            if v in parent:
                continue
            parent[v] = node
            done = v[0] == "c" and (
                v[1] == into if into >= 0 else v[1] != out_of and load[v[1]] < cap[v[1]]
            )
            if done:
                path = [v]
                back = parent[v]
                while back is not None:
                    path.append(back)
                    back = parent[back]
                return path[::-1]
            queue.append(v)
    return None


def _augmenting_path(
    supply: list[int],
    sent: list[int],
    cands: list[list[int]],
    users: dict[int, dict[int, int]],
    cap: list[int],
    load: list[int],
) -> tuple[int, list[tuple[int, int, int]], int] | None:
    """A shortest augmenting path: ``(start class, steps, end cell)``, where the start class
    sends into the first cell and each step ``(k, c_in, c_out)`` moves records of class ``k``
    from cell ``c_in`` to ``c_out`` (the last ``c_out`` is the end cell, which has room)."""
    via_cell: dict[int, int] = {}  # cell -> the class that reached it
    via_class: dict[int, int] = {}  # class -> the cell it was reached from (-1: a start)
    queue = deque(k for k in range(len(supply)) if sent[k] < supply[k])
    for k in queue:
        via_class[k] = -1
    while queue:
        k = queue.popleft()
        for c in cands[k]:
            if c in via_cell:
                continue
            via_cell[c] = k
            if load[c] < cap[c]:
                steps: list[tuple[int, int, int]] = []
                out, cls = c, k
                while via_class[cls] != -1:
                    came = via_class[cls]
                    steps.append((cls, came, out))
                    out, cls = came, via_cell[came]
                steps.reverse()
                return cls, steps, c
            for k2 in users.get(c, {}):
                if k2 not in via_class:
                    via_class[k2] = c
                    queue.append(k2)
    return None


def _variable_cells(
    supply: list[int],
    sent: list[int],
    cands: list[list[int]],
    users: dict[int, dict[int, int]],
    cap: list[int],
    load: list[int],
) -> np.ndarray:
    """Cells whose load differs in some other maximum placement (module docstring).

    A cell's load can change only along a residual cycle through the sink that uses the
    cell's own edge to the sink: its load can drop when it reaches, in the residual graph
    without the sink, another cell with room (records move from it to there); it can grow
    when it has room and another cell holding records reaches it. Both are read off one
    breadth-first search each, from all such cells at once, keeping at most two distinct
    starting cells per node (enough to tell "some start other than me")."""
    n_k, n_c = len(supply), len(cap)
    source: Node = ("s", 0)
    in_cells: dict[int, list[int]] = {}  # cell -> the classes that may use it
    for k, cs in enumerate(cands):
        for c in cs:
            in_cells.setdefault(c, []).append(k)
    holds = {c: [k for k, x in users.get(c, {}).items() if x > 0] for c in in_cells}

    def forward(node: Node) -> list[Node]:  # residual edges out of a node, no sink
        kind, i = node
        if kind == "c":
            return [("k", k) for k in holds.get(i, [])]
        if kind == "k":
            out: list[Node] = [("c", c) for c in cands[i]]
            return [*out, source] if sent[i] > 0 else out
        return [("k", k) for k in range(n_k) if sent[k] < supply[k]]

    def backward(node: Node) -> list[Node]:  # residual edges into a node, no sink
        kind, i = node
        if kind == "c":
            return [("k", k) for k in in_cells.get(i, [])]
        if kind == "k":
            out: list[Node] = [("c", c) for c in cands[i] if users.get(c, {}).get(i, 0) > 0]
            return [*out, source] if sent[i] < supply[i] else out
        return [("k", k) for k in range(n_k) if sent[k] > 0]

    room = [c for c in in_cells if load[c] < cap[c]]
    full = [c for c in in_cells if load[c] > 0]
    reaches_room = _two_starts(room, backward)  # node -> cells with room it reaches
    reached_by_full = _two_starts(full, forward)  # node -> cells with records reaching it
    out = np.zeros(n_c, dtype=bool)
    for c in in_cells:
        can_drop = load[c] > 0 and any(x != c for x in reaches_room.get(("c", c), ()))
        can_grow = load[c] < cap[c] and any(x != c for x in reached_by_full.get(("c", c), ()))
        out[c] = can_drop or can_grow
    return out


def _two_starts(starts: list[int], step: Callable[[Node], list[Node]]) -> dict[Node, set[int]]:
    """Per node, up to two distinct cells of ``starts`` it is reached from by ``step``: all of
    them when fewer than two (a node reached from two or more gets two: by induction along
    the search, a node whose predecessors hold one each between them holds them all)."""
    labels: dict[Node, set[int]] = {}
    queue: deque[tuple[Node, int]] = deque()
    for c in starts:
        labels[("c", c)] = {c}
        queue.append((("c", c), c))
    while queue:
        node, label = queue.popleft()
        for nxt in step(node):
            have = labels.setdefault(nxt, set())
            if label not in have and len(have) < 2:
                have.add(label)
                queue.append((nxt, label))
    return labels
