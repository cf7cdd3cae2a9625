"""The provider interface the m-privacy anonymizers drive (paper 003 section I and II.A;
``docs/theory/m-privacy.md#deployment``: a coordinator that learns counts only).

Everything the anonymizers of paper 003 (Algorithm 2 and the baseline:
``docs/theory/m-privacy.md#provider-aware``, ``#baseline``) decide is a function of counts: the
m-privacy check of a candidate half needs each provider's record count and SA histogram inside it, a
balanced cut needs the code histogram of one quasi-identifier inside a box. So a coordinator (the
trusted third party of the paper, or later an SMC front) can drive the whole binary space
partitioning by asking the providers for those counts, and never sees a record:

- :meth:`Providers.count_in_box`: per provider, the number of its records inside each box;
- :meth:`Providers.hist_in_box`: per provider, the SA histogram of its records inside each box
  (sparse ``(box, provider, SA value) -> count`` triples);
- :meth:`Providers.codes_in_box`: the code histogram of one QI inside each box, summed over
  the providers (the seam where a secure-sum back-end would aggregate);
  :meth:`Providers.codes_in_boxes` asks for several QIs in one round trip;
- :meth:`Providers.split`: the coordinator broadcasts the cuts it chose (and which boxes are
  final); each provider moves its own records to the children;
- :meth:`Providers.generalize_and_submit`: each provider maps its records to the final boxes
  and submits ``(group, SA value)`` pairs, which the coordinator publishes.

A **box** is a node of the partition tree, named by an integer id the coordinator assigns
(the root is 0). A query may restrict a node to one side of a threshold on one QI
(:class:`Boxes`): the candidate halves of a cut, before the cut is made.

:class:`LocalProviders` is the in-process implementation: it holds the pooled table's codes
and keeps, for every QI, the active rows sorted by (node, code) plus one order sorted by
(node, provider, SA), as Mondrian does (:mod:`kerckhoffs.algorithms.mondrian`), so every query
is a few gathers and one ``bincount`` over the rows involved and a split is a stable O(n)
re-partition of each order; with ``pooled=False`` it serves one provider's slice alone.
:class:`PickledProviders` wraps any back-end and sends every request and reply through
``pickle``, counting the bytes of what crosses. The distributed back-end, one site per
provider on Dask workers, is :class:`kerckhoffs.engines.dask_providers.DaskProviders`.

Counters: ``messages`` counts one request per provider plus one reply per provider for every
query, one request per provider for a split, one reply per provider for the submission;
``bytes`` counts the requests' array bytes once per provider plus the replies' array bytes as
the coordinator receives them.
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any, Protocol, runtime_checkable

import numpy as np

from kerckhoffs.data.table import Table
from kerckhoffs.errors import ParameterError
from kerckhoffs.segments import exclusive_cumsum, segment_ranges


def _nbytes(obj: object) -> int:
    """Bytes of the arrays of a message dataclass."""
    return sum(
        getattr(obj, f.name).nbytes
        for f in fields(obj)  # type: ignore[arg-type]
        if isinstance(getattr(obj, f.name), np.ndarray)
    )


def _i64(x: Any) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(x, dtype=np.int64).reshape(-1))


# -- messages ----------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Boxes:
    """Query boxes: node ``node[i]``, whole when ``attr[i] == -1``, else its records with
    code of QI ``attr[i]`` at most ``upper[i]`` (``right[i]`` False) or above it (True)."""

    node: np.ndarray
    attr: np.ndarray
    upper: np.ndarray
    right: np.ndarray

    @classmethod
    def whole(cls, nodes: np.ndarray) -> Boxes:
        """The nodes themselves."""
        nodes = _i64(nodes)
        return cls(nodes, np.full(nodes.size, -1, np.int64), np.zeros(nodes.size, np.int64),
                   np.zeros(nodes.size, bool))  # fmt: skip

    @classmethod
    def halves(cls, nodes: np.ndarray, attr: np.ndarray, upper: np.ndarray) -> Boxes:
        """Both halves of each cut ``(nodes[i], attr[i] <= upper[i])``: box ``2i`` the left
        (``<=``), box ``2i + 1`` the right."""
        nodes, attr, upper = _i64(nodes), _i64(attr), _i64(upper)
        right = np.tile(np.array([False, True]), nodes.size)
        return cls(np.repeat(nodes, 2), np.repeat(attr, 2), np.repeat(upper, 2), right)

    def __len__(self) -> int:
        return int(self.node.size)


@dataclass(frozen=True, eq=False)
class Counts:
    """Reply: ``count`` records of provider ``provider`` in box ``box`` (nonzero only)."""

    box: np.ndarray
    provider: np.ndarray
    count: np.ndarray
    n_boxes: int


@dataclass(frozen=True, eq=False)
class Histograms:
    """Reply: ``count`` records of provider ``provider`` with SA code ``sa`` in box ``box``;
    nonzero triples sorted by (box, provider, sa)."""

    box: np.ndarray
    provider: np.ndarray
    sa: np.ndarray
    count: np.ndarray
    n_boxes: int

    def box_sizes(self) -> np.ndarray:
        """Number of triples per box."""
        return np.bincount(self.box, minlength=self.n_boxes)

    def select(self, boxes: np.ndarray) -> Histograms:
        """The triples of ``boxes`` (indices), renumbered ``0..len(boxes)-1`` in that order."""
        boxes = _i64(boxes)
        size = self.box_sizes()
        start = np.concatenate([[0], np.cumsum(size)[:-1]])
        pos = segment_ranges(start[boxes], size[boxes])
        new_box = np.repeat(np.arange(boxes.size, dtype=np.int64), size[boxes])
        return Histograms(new_box, self.provider[pos], self.sa[pos], self.count[pos], boxes.size)

    def totals(self, n_sa: int) -> tuple[np.ndarray, np.ndarray]:
        """Per box, its record count and its SA histogram summed over the providers."""
        hist = np.bincount(self.box * n_sa + self.sa, weights=self.count,
                           minlength=self.n_boxes * n_sa)  # fmt: skip
        hist = hist.astype(np.int64).reshape(self.n_boxes, n_sa)
        return hist.sum(axis=1), hist


@dataclass(frozen=True, eq=False)
class CodeCounts:
    """Reply: ``count`` records with code ``code`` of the asked QI in box ``box``, summed over
    the providers; nonzero pairs sorted by (box, code)."""

    box: np.ndarray
    code: np.ndarray
    count: np.ndarray
    n_boxes: int


@dataclass(frozen=True, eq=False)
class Cuts:
    """Request: node ``node[i]`` is cut into children ``left[i]`` and ``right[i]``: on QI
    ``attr[i]`` at ``<= upper[i]``, or, when ``attr[i] == -1``, by provider (row ``i`` of
    ``left_providers`` says which providers' records go left; a provider is never split)."""

    node: np.ndarray
    attr: np.ndarray
    upper: np.ndarray
    left_providers: np.ndarray
    left: np.ndarray
    right: np.ndarray


@dataclass(frozen=True, eq=False)
class Submission:
    """Reply of :meth:`Providers.generalize_and_submit`: one ``(group, SA code)`` pair per
    record, in the pooled table's row order (in process; a distributed back-end would
    shuffle them)."""

    group: np.ndarray
    sa: np.ndarray


# -- the interface -----------------------------------------------------------------------------
@runtime_checkable
class Providers(Protocol):
    """What a coordinator may ask the data providers (module docstring). Public facts agreed up
    front (``docs/theory/m-privacy.md#deployment``): the number of providers, the SA domain size and
    each QI's code-domain size."""

    n_providers: int
    n_sa: int
    qi_sizes: tuple[int, ...]
    messages: int
    bytes: int

    def count_in_box(self, boxes: Boxes) -> Counts:
        """Per provider, its number of records inside each box."""
        ...

    def hist_in_box(self, boxes: Boxes) -> Histograms:
        """Per provider, the SA histogram of its records inside each box."""
        ...

    def codes_in_box(self, nodes: np.ndarray, attr: int) -> CodeCounts:
        """The code histogram of QI ``attr`` inside each node (summed over providers)."""
        ...

    def codes_in_boxes(self, nodes: np.ndarray, attrs: Sequence[int]) -> list[CodeCounts]:
        """:meth:`codes_in_box` for each QI of ``attrs``, in one request (one round trip)."""
        ...

    def split(self, cuts: Cuts, final: np.ndarray) -> None:
        """Apply ``cuts``; the ``final`` nodes are leaves (published groups). Every active node
        must be in exactly one of the two."""
        ...

    def generalize_and_submit(self, leaves: np.ndarray) -> Submission:
        """Group ``i`` = leaf ``leaves[i]``: every record's (group, SA) pair."""
        ...


# -- vectorized helpers ------------------------------------------------------------------------
def _stable_sort(keys: np.ndarray) -> np.ndarray:
    return np.argsort(keys, kind="stable")


# -- in process --------------------------------------------------------------------------------
class LocalProviders:
    """All providers in this process, over one pooled :class:`~kerckhoffs.data.table.Table`
    with a provider column (the in-process simulation of
    ``docs/theory/m-privacy.md#deployment``). Internally the active rows are kept sorted per QI
    by (node, code, row) and once by (node, provider, SA, row); each active node
    is one contiguous segment of every order, in the same segment order.

    ``pooled`` (the default) says the table holds every provider's records, so every active
    box holds records and a cut that leaves one side empty is a coordinator error (raised).
    ``pooled=False`` is one provider's (or site's) slice, as a distributed back-end holds it
    (:mod:`kerckhoffs.engines.dask_providers`): a box may hold none of its records and a cut
    may send them all to one side."""

    def __init__(self, table: Table, *, pooled: bool = True) -> None:
        if table.provider is None:
            raise ParameterError(
                "m-privacy needs to know which provider each row came from: give the table a "
                "provider column (schema role 'provider')"
            )
        self.n = table.n
        self.d = table.d
        self.qi = np.asarray(table.qi)
        self.sa = np.asarray(table.sa, dtype=np.int64)
        self.provider = np.asarray(table.provider, dtype=np.int64)
        values = table.provider_values
        self.n_providers = len(values) if values is not None else int(self.provider.max()) + 1
        self.n_sa = max(int(table.n_sa), 1)
        self.qi_sizes = tuple(int(c.size) for c in table.qi_columns)
        self.messages = 0
        self.bytes = 0
        self._leaf = np.full(self.n, -1, dtype=np.int64)
        # row indices in the smallest type that holds them: the d + 1 orders are most of the
        # memory a back-end holds (a Dask site holds one provider's records)
        self._index_type = np.int32 if self.n < 2**31 else np.int64
        rows = np.arange(self.n, dtype=self._index_type)
        self._perms = [rows[_stable_sort(self.qi[:, j])] for j in range(self.d)]
        self._perms.append(rows[_stable_sort(self.provider * self.n_sa + self.sa)])
        self.pooled = pooled
        root = bool(self.n) or not pooled
        self._seg_node = np.zeros(1 if root else 0, dtype=np.int64)
        self._sizes = np.array([self.n] if root else [], dtype=np.int64)
        self._seg_of: dict[int, int] = {0: 0} if root else {}
        self._cells: tuple[np.ndarray, ...] | None = None

    def copy(self) -> LocalProviders:
        """An independent copy (its tree and counters), for a back-end whose state must not
        change in place (a Dask task returns the next state, :mod:`kerckhoffs.engines.
        dask_providers`)."""
        out = copy.copy(self)
        out._perms = list(self._perms)
        out._leaf = self._leaf.copy()
        return out

    # accounting
    def _count(self, request: object, reply: object | None) -> None:
        self.messages += self.n_providers * (2 if reply is not None else 1)
        self.bytes += _nbytes(request) * self.n_providers
        if reply is not None:
            self.bytes += _nbytes(reply)

    def _segs(self, nodes: np.ndarray) -> np.ndarray:
        try:
            return np.array([self._seg_of[int(v)] for v in nodes.tolist()], dtype=np.int64)
        except KeyError as e:
            raise ParameterError(f"node {e.args[0]} is not an active box") from None

    @property
    def _starts(self) -> np.ndarray:
        return exclusive_cumsum(self._sizes)

    def _cell_index(self) -> tuple[np.ndarray, ...]:
        """Cells = distinct (segment, provider, SA) in the provider order: per cell its
        segment, provider, SA, size; per segment its first cell and cell count; per row its
        cell."""
        if self._cells is None:
            p = self._perms[self.d]
            n_act = p.size
            key = self.provider[p] * self.n_sa + self.sa[p]
            starts, filled = self._starts, self._sizes > 0  # a slice may hold empty boxes
            change = np.ones(n_act, dtype=bool)
            if n_act:
                change[1:] = key[1:] != key[:-1]
                change[starts[filled]] = True
            first = np.flatnonzero(change)
            cell_of_pos = np.cumsum(change) - 1
            cell_size = np.diff(np.append(first, n_act))
            seg_of_pos = np.repeat(np.arange(self._sizes.size), self._sizes)
            cell_seg = seg_of_pos[first]
            seg_first = np.zeros(self._sizes.size, dtype=np.int64)
            seg_first[filled] = cell_of_pos[starts[filled]]
            seg_cells = np.bincount(cell_seg, minlength=self._sizes.size)
            cell_of_row = np.full(self.n, -1, dtype=self._index_type)
            cell_of_row[p] = cell_of_pos
            self._cells = (
                cell_seg,
                self.provider[p[first]],
                self.sa[p[first]],
                cell_size,
                seg_first,
                seg_cells,
                cell_of_row,
            )
        return self._cells

    # queries
    def hist_in_box(self, boxes: Boxes) -> Histograms:
        """See :meth:`Providers.hist_in_box`."""
        _, c_prov, c_sa, c_size, seg_first, seg_cells, cell_of_row = self._cell_index()
        segs = self._segs(boxes.node)
        n_cells_of_box = seg_cells[segs]
        cells = segment_ranges(seg_first[segs], n_cells_of_box)
        box_of = np.repeat(np.arange(len(boxes), dtype=np.int64), n_cells_of_box)
        box_start = exclusive_cumsum(n_cells_of_box)
        count = c_size[cells].copy()
        starts = self._starts
        for j in np.unique(boxes.attr[boxes.attr >= 0]).tolist():
            sel = np.flatnonzero(boxes.attr == j)
            # one count per distinct (segment, threshold): the rows <= threshold are a prefix
            # of the segment in the order of QI j; rounds keep one threshold per segment
            pair, pair_of = np.unique(
                np.stack([segs[sel], boxes.upper[sel]]), axis=1, return_inverse=True
            )
            pair_of = pair_of.reshape(-1)
            col, perm = self.qi[:, j], self._perms[j]
            for rnd in _distinct_rounds(pair[0]):
                s, u = pair[0][rnd], pair[1][rnd]
                nl = _prefix_length(col, perm, starts[s], self._sizes[s], u)
                rows = perm[segment_ranges(starts[s], nl)]
                le = np.bincount(cell_of_row[rows], minlength=c_size.size)
                b = sel[np.isin(pair_of, rnd)]
                at = segment_ranges(box_start[b], n_cells_of_box[b])
                c = cells[at]
                right = np.repeat(boxes.right[b], n_cells_of_box[b])
                count[at] = np.where(right, c_size[c] - le[c], le[c])
        keep = count > 0
        out = Histograms(
            box_of[keep], c_prov[cells[keep]], c_sa[cells[keep]], count[keep], len(boxes)
        )
        self._count(boxes, out)
        return out

    def count_in_box(self, boxes: Boxes) -> Counts:
        """See :meth:`Providers.count_in_box`."""
        h = self.hist_in_box(boxes)
        key = h.box * self.n_providers + h.provider
        uniq, inv = np.unique(key, return_inverse=True)
        cnt = np.bincount(inv.reshape(-1), weights=h.count).astype(np.int64)
        return Counts(uniq // self.n_providers, uniq % self.n_providers, cnt, len(boxes))

    def codes_in_box(self, nodes: np.ndarray, attr: int) -> CodeCounts:
        """See :meth:`Providers.codes_in_box`."""
        nodes = _i64(nodes)
        segs = self._segs(nodes)
        pos = segment_ranges(self._starts[segs], self._sizes[segs])
        code = self.qi[self._perms[attr][pos], attr].astype(np.int64)
        box = np.repeat(np.arange(nodes.size, dtype=np.int64), self._sizes[segs])
        change = np.ones(pos.size, dtype=bool)
        if pos.size:
            change[1:] = (code[1:] != code[:-1]) | (box[1:] != box[:-1])
        first = np.flatnonzero(change)
        out = CodeCounts(box[first], code[first], np.diff(np.append(first, pos.size)), nodes.size)
        self._count(Boxes.whole(nodes), out)
        return out

    def codes_in_boxes(self, nodes: np.ndarray, attrs: Sequence[int]) -> list[CodeCounts]:
        """See :meth:`Providers.codes_in_boxes` (counted as one query per QI)."""
        return [self.codes_in_box(nodes, j) for j in attrs]

    # the tree
    def split(self, cuts: Cuts, final: np.ndarray) -> None:
        """See :meth:`Providers.split`."""
        final = _i64(final)
        self._count(cuts, None)
        n_seg = self._sizes.size
        cut_seg = self._segs(cuts.node)
        fin_seg = self._segs(final)
        if np.bincount(np.concatenate([cut_seg, fin_seg]), minlength=n_seg).tolist() != [1] * n_seg:
            raise ParameterError("every active box must be cut or final, once")
        starts = self._starts
        p0 = self._perms[0]
        if fin_seg.size:
            rows = p0[segment_ranges(starts[fin_seg], self._sizes[fin_seg])]
            self._leaf[rows] = np.repeat(self._seg_node[fin_seg], self._sizes[fin_seg])
        order = np.argsort(cut_seg, kind="stable")  # keep segment order
        cut_seg = cut_seg[order]
        is_left = np.zeros(self.n, dtype=bool)
        rows = p0[segment_ranges(starts[cut_seg], self._sizes[cut_seg])]
        which = np.repeat(order, self._sizes[cut_seg])
        attr = cuts.attr[which]
        qi_cut = attr >= 0
        r_q = rows[qi_cut]
        is_left[r_q] = self.qi[r_q, attr[qi_cut]] <= cuts.upper[which[qi_cut]]
        r_p = rows[~qi_cut]
        is_left[r_p] = cuts.left_providers[which[~qi_cut], self.provider[r_p]]
        sizes = self._sizes[cut_seg]
        keep = segment_ranges(starts[cut_seg], sizes)
        new_starts = exclusive_cumsum(sizes)
        nl = np.bincount(np.repeat(np.arange(cut_seg.size), sizes), weights=is_left[rows],
                         minlength=cut_seg.size).astype(np.int64)  # fmt: skip
        if self.pooled and ((nl == 0) | (nl == sizes)).any():
            raise ParameterError("a cut must leave records on both sides")
        seg_rep = np.repeat(np.arange(cut_seg.size), sizes)
        base = new_starts[seg_rep]
        right_base = base + nl[seg_rep]
        rank = np.arange(keep.size, dtype=np.int64) - base
        has_prev = new_starts > 0
        for i, p in enumerate(self._perms):
            p = p[keep]
            left = is_left[p]
            lefts = np.cumsum(left, dtype=np.int64)  # lefts in [0, pos]
            before = np.zeros(cut_seg.size, dtype=np.int64)
            before[has_prev] = lefts[new_starts[has_prev] - 1]
            lefts -= before[seg_rep]  # lefts in [segment start, pos]
            dest = np.where(left, base + lefts - 1, right_base + rank - lefts)
            new_p = np.empty_like(p)
            new_p[dest] = p
            self._perms[i] = new_p
        new_sizes = np.empty(2 * cut_seg.size, dtype=np.int64)
        new_sizes[0::2] = nl
        new_sizes[1::2] = sizes - nl
        new_nodes = np.empty(2 * cut_seg.size, dtype=np.int64)
        new_nodes[0::2] = cuts.left[order]
        new_nodes[1::2] = cuts.right[order]
        self._sizes = new_sizes
        self._seg_node = new_nodes
        self._seg_of = {int(v): i for i, v in enumerate(new_nodes.tolist())}
        self._cells = None

    def generalize_and_submit(self, leaves: np.ndarray) -> Submission:
        """See :meth:`Providers.generalize_and_submit`."""
        leaves = _i64(leaves)
        if self._sizes.size:
            raise ParameterError("boxes are still open: finish the partition first")
        top = int(max(leaves.max(initial=-1), self._leaf.max(initial=-1))) + 1
        lut = np.full(top, -1, dtype=np.int64)
        lut[leaves] = np.arange(leaves.size)
        group = lut[self._leaf] if self.n else np.zeros(0, dtype=np.int64)
        if (group < 0).any():
            raise ParameterError("a record's final box is not among the leaves")
        out = Submission(group, self.sa.copy())
        self.messages += self.n_providers
        self.bytes += _nbytes(out)
        return out


def _distinct_rounds(segs: np.ndarray) -> list[np.ndarray]:
    """Split positions into rounds in which every segment occurs at most once."""
    rounds = []
    rest = np.arange(segs.size)
    while rest.size:
        _, first = np.unique(segs[rest], return_index=True)
        rounds.append(rest[first])
        rest = np.delete(rest, first)
    return rounds


def _prefix_length(
    col: np.ndarray, perm: np.ndarray, start: np.ndarray, size: np.ndarray, upper: np.ndarray
) -> np.ndarray:
    """Per segment ``[start, start + size)`` of ``perm`` (sorted by ``col`` inside it), the
    number of rows whose code is ``<= upper``: a binary search run for all segments at once."""
    lo = start.astype(np.int64).copy()
    hi = (start + size).astype(np.int64)
    act = np.flatnonzero(lo < hi)
    while act.size:
        a, b = lo[act], hi[act]
        mid = (a + b) >> 1
        before = col[perm[mid]] <= upper[act]
        lo[act] = np.where(before, mid + 1, a)
        hi[act] = np.where(before, b, mid)
        act = act[lo[act] < hi[act]]
    return lo - start


# -- a re-serializing wrapper ------------------------------------------------------------------
class PickledProviders:
    """Any :class:`Providers` behind a wire: every request and reply goes through
    :mod:`pickle` (as a distributed back-end would send them), and ``messages`` / ``bytes``
    count what crosses (pickled sizes). ``replies`` records the type of every reply, so a test
    can see that the coordinator only ever receives counts and histograms."""

    def __init__(self, inner: Providers) -> None:
        self.inner = inner
        self.n_providers = inner.n_providers
        self.n_sa = inner.n_sa
        self.qi_sizes = inner.qi_sizes
        self.messages = 0
        self.bytes = 0
        self.replies: list[type] = []

    def _call(self, name: str, *args: object) -> Any:
        wire = pickle.dumps(args)
        self.messages += self.n_providers
        self.bytes += len(wire) * self.n_providers
        reply = getattr(self.inner, name)(*pickle.loads(wire))
        if reply is None:
            return None
        back = pickle.dumps(reply)
        self.messages += self.n_providers
        self.bytes += len(back)
        self.replies.extend(type(r) for r in (reply if isinstance(reply, list) else [reply]))
        return pickle.loads(back)

    def count_in_box(self, boxes: Boxes) -> Counts:
        """See :meth:`Providers.count_in_box`."""
        return self._call("count_in_box", boxes)

    def hist_in_box(self, boxes: Boxes) -> Histograms:
        """See :meth:`Providers.hist_in_box`."""
        return self._call("hist_in_box", boxes)

    def codes_in_box(self, nodes: np.ndarray, attr: int) -> CodeCounts:
        """See :meth:`Providers.codes_in_box`."""
        return self._call("codes_in_box", nodes, attr)

    def codes_in_boxes(self, nodes: np.ndarray, attrs: Sequence[int]) -> list[CodeCounts]:
        """See :meth:`Providers.codes_in_boxes`."""
        return self._call("codes_in_boxes", nodes, list(attrs))

    def split(self, cuts: Cuts, final: np.ndarray) -> None:
        """See :meth:`Providers.split`."""
        self._call("split", cuts, final)

    def generalize_and_submit(self, leaves: np.ndarray) -> Submission:
        """See :meth:`Providers.generalize_and_submit`."""
        return self._call("generalize_and_submit", leaves)


__all__ = [
    "Boxes",
    "CodeCounts",
    "Counts",
    "Cuts",
    "Histograms",
    "LocalProviders",
    "PickledProviders",
    "Providers",
    "Submission",
]
