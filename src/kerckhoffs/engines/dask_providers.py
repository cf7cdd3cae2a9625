"""Data providers on Dask workers: the m-privacy coordinator of paper 003 driving providers that
never pool their records (issue "Past one machine", item 4; spec mprivacy.md section 8).

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
  gathering is the site reading its own files.
- **Every request goes to every site, every reply comes back alone.** A query
  (``hist_in_box``, ``count_in_box``, ``codes_in_box``) is one task per site; the client
  merges the replies (per-provider triples are concatenated, code histograms summed: the seam
  where a secure sum would aggregate them). A split is one task per site that makes the
  site's next state (the previous one is released); the rows never leave the site's worker.
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
from dataclasses import dataclass
from typing import Any

import numpy as np

from kerckhoffs.data.table import Table
from kerckhoffs.engines.dask_mondrian import DaskGroups
from kerckhoffs.engines.dask_table import DaskTable, Part
from kerckhoffs.errors import ParameterError
from kerckhoffs.mprivacy.providers import (
    Boxes,
    CodeCounts,
    Counts,
    Cuts,
    Histograms,
    LocalProviders,
    Submission,
)

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
    assert part.provider is not None
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


def _ask(site: _Site, name: str, args: tuple[Any, ...]) -> Any:
    return getattr(site.back, name)(*args)


def _split(site: _Site, cuts: Cuts, final: np.ndarray) -> _Site:
    """The site's next state (a task must not change its input in place)."""
    back = copy.copy(site.back)
    back._perms = list(site.back._perms)
    back._leaf = site.back._leaf.copy()
    back.split(cuts, final)
    return _Site(back, site.part_of, site.at)


def _submit(site: _Site, leaves: np.ndarray) -> tuple[Submission, np.ndarray]:
    sub = site.back.generalize_and_submit(leaves)
    return sub, sub.group.astype(np.int32)


def _reply(out: tuple[Submission, np.ndarray]) -> Submission:
    return out[0]


def _part_groups(
    site: _Site, submitted: tuple[Submission, np.ndarray], index: int
) -> tuple[np.ndarray, np.ndarray]:
    """On the site: the positions in partition ``index`` of the site's rows there, and their
    groups (what goes back to the partition's worker: no codes)."""
    mine = site.part_of == index
    return site.at[mine], submitted[1][mine]


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

    def _replies(self, futures: list[Any], kind: str, n_boxes: int) -> list[Any]:
        out = self.client.gather(futures)
        for p, r in enumerate(out):
            size = len(pickle.dumps(r))
            entries = int(np.asarray(r.count if hasattr(r, "count") else r.group).size)
            self.messages += 1
            self.bytes += size
            self.bytes_by_provider[p] += size
            self.replies.append(Reply(p, kind, n_boxes, entries, size))
        return out

    def _query(self, name: str, *args: Any) -> list[Any]:
        self._request(*args)
        n_boxes = len(args[0])
        futures = [self._on(p, _ask, s, name, args) for p, s in enumerate(self._sites)]
        return self._replies(futures, name, n_boxes)

    # queries
    def hist_in_box(self, boxes: Boxes) -> Histograms:
        """See :meth:`~kerckhoffs.mprivacy.providers.Providers.hist_in_box`."""
        parts: list[Histograms] = self._query("hist_in_box", boxes)
        box = np.concatenate([h.box for h in parts])
        prov = np.concatenate([h.provider for h in parts])
        sa = np.concatenate([h.sa for h in parts])
        cnt = np.concatenate([h.count for h in parts])
        order = np.lexsort((sa, prov, box))
        return Histograms(box[order], prov[order], sa[order], cnt[order], len(boxes))

    def count_in_box(self, boxes: Boxes) -> Counts:
        """See :meth:`~kerckhoffs.mprivacy.providers.Providers.count_in_box`."""
        parts: list[Counts] = self._query("count_in_box", boxes)
        box = np.concatenate([c.box for c in parts])
        prov = np.concatenate([c.provider for c in parts])
        cnt = np.concatenate([c.count for c in parts])
        order = np.lexsort((prov, box))
        return Counts(box[order], prov[order], cnt[order], len(boxes))

    def codes_in_box(self, nodes: np.ndarray, attr: int) -> CodeCounts:
        """See :meth:`~kerckhoffs.mprivacy.providers.Providers.codes_in_box`: the sites' code
        histograms summed here."""
        nodes = np.asarray(nodes, dtype=np.int64).reshape(-1)
        parts: list[CodeCounts] = self._query("codes_in_box", nodes, attr)
        width = max(self.qi_sizes[attr], 1)
        key = np.concatenate([c.box * width + c.code for c in parts])
        cnt = np.concatenate([c.count for c in parts])
        uniq, inv = np.unique(key, return_inverse=True)
        total = np.bincount(inv.reshape(-1), weights=cnt).astype(np.int64)
        return CodeCounts(uniq // width, uniq % width, total, nodes.size)

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
        subs: list[Submission] = self._replies(
            [self._on(p, _reply, f) for p, f in enumerate(self._submitted)],
            "generalize_and_submit",
            leaves.size,
        )
        group = np.concatenate([s.group for s in subs])
        sa = np.concatenate([s.sa for s in subs])
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


def mprivacy_dask(
    dt: DaskTable,
    models: list[Any],
    algorithm: str = "provider-aware",
    *,
    stats: dict[str, Any] | None = None,
    **options: Any,
) -> tuple[DaskGroups, DaskProviders]:
    """``provider-aware`` or ``mondrian-mprivacy`` (paper 003) on ``dt`` through
    :class:`DaskProviders`: the coordinator here, the records on the providers' workers.
    ``options``: the in-memory algorithm's (``score``, ``provider_order``, ``alpha``,
    ``verifier``; ``cut`` for the baseline). Returns the partition (one future of group ids per
    partition) and the providers (their message and byte counters)."""
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
        **options,
    )  # fmt: skip
    params = {**setting.params, **options}
    groups = DaskGroups(
        providers.groups(), int(run_stats["groups"]), int(run_stats["levels"]), params
    )
    return groups, providers
