"""Random small tables and the fuzzing driver of the random-worlds auditor.

Paper 000's algorithm-safety (Definition 5) is a property of an algorithm, not of one release;
we audit it (``docs/theory/asap.md#audits``) the way our design's first prototype did: the exact
random-worlds audit (:func:`kerckhoffs.audits.random_worlds.random_worlds`) of many random small
tables (about 400 of 5-8 rows, l = 2, 2-4 SA values, a random 2-D QI), counting the tables whose
release violates. :func:`random_table` draws one such table (l-eligible, so an l-diverse
release exists); :func:`fuzz` audits an algorithm on many, seeded, optionally in worker
processes. The command ``kerckhoffs audit-algorithm``
(:mod:`kerckhoffs.audits.algorithm`) and the tests use both.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from kerckhoffs.audits.enumerating_rng import AuditTooLarge
from kerckhoffs.audits.random_worlds import WorldsAudit, diversity_bound, random_worlds
from kerckhoffs.data.table import Table
from kerckhoffs.errors import ArgumentError, ParameterError
from kerckhoffs.models.base import PrivacyModel
from kerckhoffs.randomness import check_seed

__all__ = ["MAX_FUZZ_ROWS", "MAX_SA_VALUES", "Trial", "fuzz", "random_table"]


MAX_SA_VALUES = 26
"""SA values of a random table are the letters ``A..Z``."""

MAX_FUZZ_ROWS = 12
"""Largest table :func:`fuzz` audits: the worlds and random branches grow with ``rows!``."""


def _l_eligible(rows: int, n_sa: int, l: int) -> bool:  # noqa: E741
    """Some SA column of ``rows`` values over ``n_sa`` has no value more than ``rows / l``
    times (the most frequent value occurs at least ``ceil(rows / n_sa)`` times)."""
    return rows >= l * math.ceil(rows / n_sa)


def random_table(
    rng: np.random.Generator,
    rows: int = 8,
    *,
    n_sa: int = 4,
    l: int = 2,  # noqa: E741
    qi_size: int = 8,
    redraw: bool = True,
) -> Table:
    """A random table: two QIs with values in ``0..qi_size-1`` and an SA over ``n_sa`` values
    ``A, B, ...``, l-eligible (``rows >= l * S_max``, so an l-diverse release exists).

    The SA column is drawn uniformly; ``redraw`` (small tables, the default) draws it again
    until it is l-eligible; otherwise (large tables, where a redraw may almost never succeed,
    e.g. ``l == n_sa``) rows of over-represented values, chosen at random, are given the
    rarest value until it is. Both QI columns declare the full domain ``0..qi_size-1`` (a flat
    hierarchy in code order), so normalized ranges and Hilbert indices do not depend on which
    values were drawn.
    """
    import pandas as pd

    from kerckhoffs.data.hierarchy import Hierarchy
    from kerckhoffs.data.schema import Schema

    if rows < 1:
        raise ParameterError(f"rows {rows}: a table needs at least one row")
    if not 1 <= n_sa <= MAX_SA_VALUES:
        raise ParameterError(
            f"sa_values {n_sa}: the SA values are the letters A..Z, so 1..{MAX_SA_VALUES}"
        )
    if qi_size < 1:
        raise ParameterError(f"qi_size {qi_size}: a QI needs at least one value")
    if not _l_eligible(rows, n_sa, l):
        raise ParameterError(
            f"rows {rows} over sa_values {n_sa} cannot be {l}-eligible (the most frequent "
            f"value occurs at least {math.ceil(rows / n_sa)} times)"
        )
    letters = [chr(ord("A") + i) for i in range(n_sa)]
    while True:
        sa = rng.integers(0, n_sa, size=rows)
        if rows >= l * int(np.bincount(sa).max()) or not redraw:
            break
    if not redraw:
        counts = np.bincount(sa, minlength=n_sa)
        cap = rows // l
        for v in np.flatnonzero(counts > cap).tolist():
            excess = int(counts[v] - cap)
            for r in rng.permutation(np.flatnonzero(sa == v))[:excess].tolist():
                w = int(np.argmin(counts))
                sa[r] = w
                counts[w] += 1
                counts[v] -= 1
    axis = Hierarchy.flat(range(qi_size), name=f"0..{qi_size - 1}", keep_order=True)
    df = pd.DataFrame(
        {
            "x": rng.integers(0, qi_size, size=rows),
            "y": rng.integers(0, qi_size, size=rows),
            "s": [letters[v] for v in sa.tolist()],
        }
    )
    quasi = {
        "x": {"kind": "categorical", "hierarchy": axis},
        "y": {"kind": "categorical", "hierarchy": axis},
    }
    return Table.encode(df, Schema.build(quasi, "s"))


@dataclass
class Trial:
    """One audited random table (:func:`fuzz`). ``skipped``: why it has no audit (None: it
    has one); ``outcome``: ``"audited"``, ``"refused"`` (by the algorithm) or ``"too large"``
    (to enumerate); ``seed``: the seed of the observed release (the trial's index, or the
    adversary's known seed)."""

    table: Table
    audit: WorldsAudit | None
    skipped: str | None = None
    seed: int = 0
    outcome: str = "audited"


def _check_range(name: str, value: int | tuple[int, int], lo: int, hi: int) -> None:
    """``value`` (an int or an inclusive ``(low, high)`` range) lies within ``lo..hi``."""
    low, high = (value, value) if isinstance(value, int) else value
    if not lo <= low <= high <= hi:
        raise ArgumentError(name, value, f"use {lo}..{hi}")


def fuzz(
    algorithm: str,
    models: list[PrivacyModel],
    *,
    trials: int = 200,
    rows: int | tuple[int, int] = 8,
    n_sa: int | tuple[int, int] = (2, 4),
    seed: int = 0,
    known_seed: int | None = None,
    options: dict[str, Any] | None = None,
    progress: Callable[[int], None] | None = None,
    max_worlds: int = 20_000,
    max_branches: int = 20_000,
    workers: int = 1,
) -> list[Trial]:
    """Audit ``algorithm`` on ``trials`` random tables (:func:`random_table`; ``rows`` and
    ``n_sa`` fixed or drawn from an inclusive range; when the drawn ``n_sa`` is too small for
    an l-eligible table of the drawn size, the fewest values that allow one), seeded. Tables
    too large to enumerate are kept as skipped trials (``Trial.skipped`` says why), never
    silently dropped. Trial ``i``'s release is drawn with seed ``i``, or with ``known_seed``,
    which the adversary then knows (:func:`random_worlds`).

    ``workers > 1`` audits in that many processes; the tables are drawn here first, so the
    trials (and their order) do not depend on ``workers``.
    """
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise ArgumentError("trials", trials, "use at least 1")
    _check_range("rows", rows, 1, MAX_FUZZ_ROWS)
    _check_range("sa_values", n_sa, 1, MAX_SA_VALUES)
    seed = check_seed(seed)
    if known_seed is not None:
        known_seed = check_seed(known_seed, "known_seed")
    rng = np.random.default_rng(seed)
    l = int(diversity_bound(models) or 1)  # noqa: E741
    if isinstance(rows, int) and isinstance(n_sa, int) and not _l_eligible(rows, n_sa, l):
        raise ParameterError(
            f"rows {rows} over sa_values {n_sa} cannot be {l}-eligible (the most frequent "
            f"value occurs at least {math.ceil(rows / n_sa)} times)"
        )
    tables: list[Table] = []
    for _ in range(trials):
        n = rows if isinstance(rows, int) else int(rng.integers(rows[0], rows[1] + 1))
        a = n_sa if isinstance(n_sa, int) else int(rng.integers(n_sa[0], n_sa[1] + 1))
        if n < l * math.ceil(n / a) and not isinstance(n_sa, int):
            a = next((b for b in range(a, n + 1) if n >= l * math.ceil(n / b)), n)
        tables.append(random_table(rng, n, n_sa=a, l=l))
    job = _FuzzJob(algorithm, models, dict(options or {}), max_worlds, max_branches, known_seed)
    if workers <= 1 or trials < 2:
        out = []
        for i, table in enumerate(tables):
            out.append(job((i, table)))
            if progress is not None:
                progress(i + 1)
        return out
    import concurrent.futures as cf
    import multiprocessing as mp

    chunk = max(1, trials // (4 * workers))
    with cf.ProcessPoolExecutor(workers, mp_context=mp.get_context("forkserver")) as pool:
        out = []
        for i, trial in enumerate(pool.map(job, enumerate(tables), chunksize=chunk)):
            out.append(trial)
            if progress is not None:
                progress(i + 1)
    return out


@dataclass(frozen=True)
class _FuzzJob:
    """One trial of :func:`fuzz` (a picklable callable, for worker processes)."""

    algorithm: str
    models: list[PrivacyModel]
    options: dict[str, Any]
    max_worlds: int
    max_branches: int
    known_seed: int | None = None

    def __call__(self, item: tuple[int, Table]) -> Trial:
        i, table = item
        seed = i if self.known_seed is None else self.known_seed
        try:
            res = random_worlds(
                self.algorithm,
                table,
                self.models,
                seed=seed,
                known_seed=self.known_seed,
                options=self.options,
                max_worlds=self.max_worlds,
                max_branches=self.max_branches,
            )
            return Trial(table, res, seed=seed)
        except AuditTooLarge as exc:
            return Trial(table, None, f"too large: {exc}", seed, "too large")
        except ParameterError as exc:  # the algorithm refuses the table itself
            return Trial(table, None, f"refused: {exc}", seed, "refused")
