"""Data providers on Dask workers: the m-privacy coordinator of paper 003 driving providers that
never pool their records (paper 003's mapping onto a distributed deployment,
``docs/theory/m-privacy.md#deployment``; ``docs/guide/dask.md``).

The coordinator (:func:`kerckhoffs.algorithms.mprivacy_anonymize.coordinate`, the trusted
third party of paper 003 section II.A) only ever asks the :class:`~kerckhoffs.mprivacy.
providers.Providers` interface for counts and histograms. :class:`DaskProviders` serves that
interface from Dask workers:

- **One site per provider.** Each provider's records are gathered once from the table's
  partitions onto one worker (a ``workers=`` restriction that never moves: providers are
  spread round robin, several per worker when there are more providers than workers) and held
  there as a :class:`~kerckhoffs.mprivacy.providers.LocalProviders` over that provider's
  slice alone (``pooled=False``: a box may hold none of its records, a cut may send them all
  to one side). In a deployment where each site's records are its own Parquet files, that
  gathering is the site reading its own files. A provider's records must fit its worker:
  with 8 QIs about 100 bytes a row held and 255 at the peak of a split (the codes and the
  sorted orders of ``LocalProviders``, old and new state), so about 12M records in 3 GB.
- **Every request goes to every site, every reply comes back alone.** A query
  (``hist_in_box``, ``count_in_box``, ``codes_in_boxes`` for every QI at once) is one task
  per site; the client merges the replies (per-provider triples are concatenated, code
  histograms summed: the seam where a secure sum would aggregate them). A split is one task
  per site that makes the site's next state (the previous one is released); the rows never
  leave the site's worker.
- **A compact wire.** Replies travel as :class:`_Wire`: the smallest integer types the
  query's public bounds allow, no provider id, and for the candidate halves of a level only
  the left halves plus each node's whole histogram (the coordinator takes right = whole -
  left). On Adult with 10 providers this cut the counts from 14 MB to 2.4 MB and, with the
  batched code histograms, the run time from 15 to 4.6 times the in-process one
  (``benchmarks/bench_dask_providers.py``).
- **Counted as on a wire.** Every request and reply is measured by its ``pickle`` size, per
  provider (:attr:`DaskProviders.bytes_by_provider`), and every reply's type and number of
  entries is logged (:attr:`DaskProviders.replies`), so a test can show that until the
  submission nothing but box-indexed counts crosses, each reply bounded by the boxes times
  the domain it counts over, whatever the number of rows.
- **The submission** is paper 003's: each provider sends its records generalized, as
  ``(group, SA)`` pairs, which is what the release publishes; they reach the client sorted by
  group and SA value (no provider order). The release files themselves are written from the
  table's partitions (:meth:`DaskProviders.groups` hands the group of every row back to them,
  worker to worker) by :func:`kerckhoffs.engines.dask_release.write_dask_release`, checked
  before they are sealed.

:func:`mprivacy_dask` runs ``provider-aware`` or ``mondrian-mprivacy`` this way; its partition
is the one the in-memory algorithms find (tests: the same group for every row).
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kerckhoffs.data.table import Table
from kerckhoffs.engines.dask_mondrian import DaskGroups
from kerckhoffs.engines.dask_table import DaskTable, Part
from kerckhoffs.errors import InternalError, ParameterError
from kerckhoffs.mprivacy.providers import (
    Boxes,
    CodeCounts,
    Counts,
    Cuts,
    Histograms,
    LocalProviders,
    Submission,
)
from kerckhoffs.segments import exclusive_cumsum, segment_ranges

__all__ = ["ALGORITHMS", "DaskProviders", "Reply", "mprivacy_dask"]

ALGORITHMS = ("provider-aware", "mondrian-mprivacy")


# -- on the workers ------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class _Piece:
    """Provider ``p``'s rows of one partition: codes and their positions in the partition."""

    qi: np.ndarray
    sa: np.ndarray
    at: np.ndarray


def _piece(part: Part, provider: int) -> _Piece:
    if part.provider is None:  # the provider engine runs on tables with a provider column
        raise InternalError("a partition without providers reached the provider engine")
    at = np.flatnonzero(part.provider == provider)
    return _Piece(part.qi[at], part.sa[at], at.astype(np.int64))


@dataclass(eq=False)
class _Site:
    """One provider's state on its worker: its slice as a non-pooled back-end, and where each
    of its rows sits in the table's partitions (to hand the groups back for the release)."""

    back: LocalProviders
    part_of: np.ndarray
    at: np.ndarray


def _site(shell: Table, provider: int, *pieces: _Piece) -> _Site:
    qi = (
        np.concatenate([p.qi for p in pieces])
        if pieces
        else np.zeros((0, len(shell.qi_columns)), np.int32)
    )
    table = copy.copy(shell)
    table.qi = np.asfortranarray(qi, dtype=np.int32)
    table.sa = np.concatenate([p.sa for p in pieces]).astype(np.int32)
    table.provider = np.full(table.sa.size, provider, dtype=np.int32)
    table.row_ids = np.arange(table.sa.size, dtype=np.int64)
    part_of = np.repeat(np.arange(len(pieces), dtype=np.int32), [p.at.size for p in pieces])
    at = np.concatenate([p.at for p in pieces]) if pieces else np.zeros(0, np.int64)
    return _Site(LocalProviders(table, pooled=False), part_of, at)


@dataclass(frozen=True, eq=False)
class _Wire:
    """A reply as it crosses: a few arrays in the smallest integer types their public bounds
    allow (box indices by the query's size, SA values and codes by their domains) and counts in
    uint32 (uint64 for a provider of 2^32 records or more), so a reply's size depends on the
    query and on how many cells are nonzero, not on the counts. The provider's id is not sent
    (the coordinator knows whom it asked)."""

    arrays: dict[str, np.ndarray]
    n_boxes: int

    @property
    def entries(self) -> int:
        """Nonzero cells sent (the count arrays' lengths), or records (a submission)."""
        counted = [v.size for k, v in self.arrays.items() if k.startswith("count")]
        return sum(counted) if counted else next(iter(self.arrays.values())).size


def _small(x: np.ndarray, bound: int) -> np.ndarray:
    """``x`` (values in ``[0, bound)``) in the smallest unsigned type holding ``bound - 1``."""
    return np.asarray(x).astype(np.min_scalar_type(max(int(bound) - 1, 0)))


def _counts(site: _Site, x: np.ndarray) -> np.ndarray:
    return np.asarray(x).astype(np.uint32 if site.back.n < 2**32 else np.uint64)


def _hist(site: _Site, boxes: Boxes, halves: bool) -> _Wire:
    """SA histograms of the site's records in ``boxes``. For ``halves`` (box ``2i`` the left,
    ``2i + 1`` the right half of a cut of one node) the left halves and each distinct node's
    whole histogram are sent; the coordinator takes right = whole - left (about half the
    cells when every node has several candidate cuts)."""
    back, n_sa = site.back, site.back.n_sa
    if not halves:
        h = back.hist_in_box(boxes)
        return _Wire({"box": _small(h.box, len(boxes)), "sa": _small(h.sa, n_sa),
                      "count": _counts(site, h.count)}, len(boxes))  # fmt: skip
    pairs = len(boxes) // 2
    left = back.hist_in_box(Boxes(boxes.node[0::2], boxes.attr[0::2], boxes.upper[0::2],
                                  boxes.right[0::2]))  # fmt: skip
    nodes = np.unique(boxes.node[0::2])
    whole = back.hist_in_box(Boxes.whole(nodes))
    return _Wire(
        {
            "box": _small(left.box, pairs), "sa": _small(left.sa, n_sa),
            "count": _counts(site, left.count), "node": _small(whole.box, nodes.size),
            "node_sa": _small(whole.sa, n_sa), "count_node": _counts(site, whole.count),
        },
        len(boxes),
    )  # fmt: skip


def _box_counts(site: _Site, boxes: Boxes) -> _Wire:
    c = site.back.count_in_box(boxes)
    return _Wire({"box": _small(c.box, len(boxes)), "count": _counts(site, c.count)}, len(boxes))


def _codes(site: _Site, nodes: np.ndarray, attrs: list[int]) -> list[_Wire]:
    out = []
    for j in attrs:
        c = site.back.codes_in_box(nodes, j)
        arrays = {
            "box": _small(c.box, nodes.size),
            "code": _small(c.code, site.back.qi_sizes[j]),
            "count": _counts(site, c.count),
        }
        out.append(_Wire(arrays, nodes.size))
    return out


def _split(site: _Site, cuts: Cuts, final: np.ndarray) -> _Site:
    """The site's next state (a task must not change its input in place)."""
    back = site.back.copy()
    back.split(cuts, final)
    return _Site(back, site.part_of, site.at)


def _submit(site: _Site, leaves: np.ndarray) -> Submission:
    return site.back.generalize_and_submit(leaves)


def _reply(sub: Submission, n_groups: int, n_sa: int) -> _Wire:
    return _Wire({"group": _small(sub.group, n_groups), "sa": _small(sub.sa, n_sa)}, n_groups)


def _part_groups(site: _Site, sub: Submission, index: int) -> tuple[np.ndarray, np.ndarray]:
    """On the site: the positions in partition ``index`` of the site's rows there, and their
    groups (what goes back to the partition's worker: no codes)."""
    mine = site.part_of == index
    return site.at[mine], sub.group[mine].astype(np.int32)


def _groups_of_part(n: int, index: int, *pieces: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Partition ``index``'s group ids (``n`` rows), from every site's piece of it."""
    out = np.full(n, -1, dtype=np.int32)
    for at, group in pieces:
        out[at] = group
    if (out < 0).any():
        raise ParameterError(f"partition {index}: a row has no group (no provider sent it)")
    return out


# -- on the client -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Reply:
    """What one provider sent back for one request: the reply's type, its number of entries
    (nonzero histogram cells, or records for the submission) and its pickled size."""

    provider: int
    kind: str
    boxes: int
    entries: int
    bytes: int


class DaskProviders:
    """The :class:`~kerckhoffs.mprivacy.providers.Providers` interface served by one site per
    provider on ``dt``'s Dask workers (module docstring). ``dt`` needs a provider column.

    ``messages`` and ``bytes`` count as :class:`~kerckhoffs.mprivacy.providers.
    PickledProviders` does (one request and one reply per provider and query, pickled sizes);
    ``bytes_by_provider`` splits the bytes per provider; ``replies`` logs every reply."""

    def __init__(self, dt: DaskTable) -> None:
        if dt.provider_values is None:
            raise ParameterError(
                "m-privacy needs to know which provider each row came from: give the table a "
                "provider column (schema role 'provider')"
            )
        self.dt = dt
        self.client = dt.client
        self.n_providers = len(dt.provider_values)
        self.n_sa = max(dt.n_sa, 1)
        self.qi_sizes = tuple(int(c.size) for c in dt.qi_columns)
        self.messages = 0
        self.bytes = 0
        self.bytes_by_provider = np.zeros(self.n_providers, dtype=np.int64)
        self.replies: list[Reply] = []
        workers = sorted(self.client.scheduler_info().get("workers", {}))
        if not workers:
            raise ParameterError("the Dask cluster has no workers")
        self.workers = [workers[p % len(workers)] for p in range(self.n_providers)]
        shell = self.client.scatter(dt.shell(), broadcast=True, hash=False)
        self._sites = []
        for p in range(self.n_providers):
            pieces = [self.client.submit(_piece, part, p, pure=False) for part in dt.parts]
            self._sites.append(self._on(p, _site, shell, p, *pieces))
        self._submitted: list[Any] | None = None

    def _on(self, p: int, fn: Any, *args: Any) -> Any:
        """A task on provider ``p``'s worker, and nowhere else."""
        return self.client.submit(
            fn, *args, workers=[self.workers[p]], allow_other_workers=False, pure=False
        )

    def _request(self, *args: Any) -> None:
        size = len(pickle.dumps(args))
        self.messages += self.n_providers
        self.bytes += size * self.n_providers
        self.bytes_by_provider += size

    def _replies(self, futures: list[Any], kind: str) -> list[Any]:
        """Gather one reply per provider, counting what crossed."""
        out = self.client.gather(futures)
        for p, r in enumerate(out):
            size = len(pickle.dumps(r))
            wires = r if isinstance(r, list) else [r]
            self.messages += 1
            self.bytes += size
            self.bytes_by_provider[p] += size
            self.replies.append(Reply(p, kind, sum(w.n_boxes for w in wires),
                                      sum(w.entries for w in wires), size))  # fmt: skip
        return out

    def _ask(self, kind: str, fn: Any, *args: Any) -> list[Any]:
        self._request(*args)
        futures = [self._on(p, fn, s, *args) for p, s in enumerate(self._sites)]
        return self._replies(futures, kind)

    # queries
    def hist_in_box(self, boxes: Boxes) -> Histograms:
        """See :meth:`~kerckhoffs.mprivacy.providers.Providers.hist_in_box`."""
        halves = _are_halves(boxes)
        wires: list[_Wire] = self._ask("hist_in_box", _hist, boxes, halves)
        n_sa, parts = self.n_sa, []
        for p, w in enumerate(wires):
            a = {k: v.astype(np.int64) for k, v in w.arrays.items()}
            if halves:
                box, sa, cnt = _with_right_halves(a, boxes, n_sa)
            else:
                box, sa, cnt = a["box"], a["sa"], a["count"]
            parts.append((box, np.full(box.size, p, np.int64), sa, cnt))
        box, prov, sa, cnt = (np.concatenate(x) for x in zip(*parts, strict=True))
        order = np.lexsort((sa, prov, box))
        return Histograms(box[order], prov[order], sa[order], cnt[order], len(boxes))

    def count_in_box(self, boxes: Boxes) -> Counts:
        """See :meth:`~kerckhoffs.mprivacy.providers.Providers.count_in_box`."""
        wires: list[_Wire] = self._ask("count_in_box", _box_counts, boxes)
        box = np.concatenate([w.arrays["box"].astype(np.int64) for w in wires])
        cnt = np.concatenate([w.arrays["count"].astype(np.int64) for w in wires])
        prov = np.repeat(np.arange(len(wires), dtype=np.int64), [w.entries for w in wires])
        order = np.lexsort((prov, box))
        return Counts(box[order], prov[order], cnt[order], len(boxes))

    def codes_in_box(self, nodes: np.ndarray, attr: int) -> CodeCounts:
        """See :meth:`~kerckhoffs.mprivacy.providers.Providers.codes_in_box`."""
        return self.codes_in_boxes(nodes, [attr])[0]

    def codes_in_boxes(self, nodes: np.ndarray, attrs: Sequence[int]) -> list[CodeCounts]:
        """See :meth:`~kerckhoffs.mprivacy.providers.Providers.codes_in_boxes`: one round trip
        for every QI; the sites' code histograms are summed here."""
        nodes = np.asarray(nodes, dtype=np.int64).reshape(-1)
        attrs = [int(j) for j in attrs]
        per_site: list[list[_Wire]] = self._ask("codes_in_box", _codes, nodes, attrs)
        out = []
        for i, j in enumerate(attrs):
            width = max(self.qi_sizes[j], 1)
            wires = [site[i].arrays for site in per_site]
            key = np.concatenate([w["box"].astype(np.int64) * width + w["code"] for w in wires])
            cnt = np.concatenate([w["count"].astype(np.int64) for w in wires])
            uniq, inv = np.unique(key, return_inverse=True)
            total = np.bincount(inv.reshape(-1), weights=cnt, minlength=uniq.size)
            out.append(CodeCounts(uniq // width, uniq % width, total.astype(np.int64), nodes.size))
        return out

    # the tree
    def split(self, cuts: Cuts, final: np.ndarray) -> None:
        """See :meth:`~kerckhoffs.mprivacy.providers.Providers.split`."""
        self._request(cuts, final)
        self._sites = [self._on(p, _split, s, cuts, final) for p, s in enumerate(self._sites)]

    def generalize_and_submit(self, leaves: np.ndarray) -> Submission:
        """See :meth:`~kerckhoffs.mprivacy.providers.Providers.generalize_and_submit`: every
        provider's ``(group, SA)`` pairs, sorted by group then SA (no provider order)."""
        leaves = np.asarray(leaves, dtype=np.int64).reshape(-1)
        self._request(leaves)
        self._submitted = [self._on(p, _submit, s, leaves) for p, s in enumerate(self._sites)]
        wires: list[_Wire] = self._replies(
            [self._on(p, _reply, f, leaves.size, self.n_sa) for p, f in enumerate(self._submitted)],
            "generalize_and_submit",
        )
        group = np.concatenate([w.arrays["group"].astype(np.int64) for w in wires])
        sa = np.concatenate([w.arrays["sa"].astype(np.int64) for w in wires])
        order = np.lexsort((sa, group))
        return Submission(group[order], sa[order])

    def groups(self) -> list[Any]:
        """After the submission: one future of int32 group ids per partition of the table (its
        row order), made on the partitions' workers from the sites' groups."""
        if self._submitted is None:
            raise ParameterError("the providers have not submitted yet")
        out = []
        for i, n in enumerate(self.dt.lengths.tolist()):
            pieces = [
                self._on(p, _part_groups, s, g, i)
                for p, (s, g) in enumerate(zip(self._sites, self._submitted, strict=True))
            ]
            out.append(self.client.submit(_groups_of_part, int(n), i, *pieces, pure=False))
        return out


def _are_halves(boxes: Boxes) -> bool:
    """Whether ``boxes`` are both halves of cuts (:meth:`Boxes.halves`: box ``2i`` the left,
    ``2i + 1`` the right half of the same node, attribute and threshold)."""
    n = len(boxes)
    if n == 0 or n % 2:
        return False
    return bool(
        (boxes.attr >= 0).all()
        and np.array_equal(boxes.node[0::2], boxes.node[1::2])
        and np.array_equal(boxes.attr[0::2], boxes.attr[1::2])
        and np.array_equal(boxes.upper[0::2], boxes.upper[1::2])
        and not boxes.right[0::2].any()
        and boxes.right[1::2].all()
    )


def _with_right_halves(
    a: dict[str, np.ndarray], boxes: Boxes, n_sa: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One site's halves reply expanded: the left halves as sent, the right ones as the node's
    whole histogram minus the left half; (box, SA, count) sorted by box then SA."""
    pair_node = boxes.node[0::2]
    nodes, node_of_pair = np.unique(pair_node, return_inverse=True)
    size = np.bincount(a["node"], minlength=nodes.size)
    start = exclusive_cumsum(size)
    n_of = size[node_of_pair]
    at = segment_ranges(start[node_of_pair], n_of)  # each pair's node cells
    pair = np.repeat(np.arange(pair_node.size, dtype=np.int64), n_of)
    key = pair * n_sa + a["node_sa"][at]
    left_key = a["box"] * n_sa + a["sa"]  # sorted: the site's reply is sorted by (box, SA)
    taken = np.zeros(key.size, dtype=np.int64)
    if left_key.size:
        idx = np.minimum(np.searchsorted(left_key, key), left_key.size - 1)
        hit = left_key[idx] == key
        taken[hit] = a["count"][idx[hit]]
    right = a["count_node"][at] - taken
    keep = right > 0
    box = np.concatenate([2 * a["box"], 2 * pair[keep] + 1])
    sa = np.concatenate([a["sa"], a["node_sa"][at][keep]])
    cnt = np.concatenate([a["count"], right[keep]])
    order = np.lexsort((sa, box))
    return box[order], sa[order], cnt[order]


def mprivacy_dask(
    dt: DaskTable,
    models: list[Any],
    algorithm: str = "provider-aware",
    *,
    stats: dict[str, Any] | None = None,
    progress: Callable[[int, int], None] | None = None,
    **options: Any,
) -> tuple[DaskGroups, DaskProviders]:
    """``provider-aware`` or ``mondrian-mprivacy`` (paper 003) on ``dt`` through
    :class:`DaskProviders`: the coordinator here, the records on the providers' workers.
    ``options``: the in-memory algorithm's (``score``, ``provider_order``, ``alpha``,
    ``verifier``; ``cut`` for the baseline). Returns the partition (one future of group ids per
    partition) and the providers (their message and byte counters). ``progress(level,
    open_boxes)`` is called before each level."""
    from kerckhoffs.algorithms import get
    from kerckhoffs.algorithms.mprivacy_anonymize import coordinate, setting_from_models

    if algorithm not in ALGORITHMS:
        raise ParameterError(f"{algorithm}: the Dask providers run {' and '.join(ALGORITHMS)}")
    get(algorithm).check_options(options)
    setting = setting_from_models(models, algorithm)
    providers = DaskProviders(dt)
    run_stats: dict[str, Any] = {} if stats is None else stats
    coordinate(
        providers, setting, provider_aware=algorithm == "provider-aware", stats=run_stats,
        progress=progress, **options,
    )  # fmt: skip
    params = {**setting.params, **options}
    groups = DaskGroups(
        providers.groups(), int(run_stats["groups"]), int(run_stats["levels"]), params
    )
    return groups, providers
