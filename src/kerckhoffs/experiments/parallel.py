"""Run several experiments at once in worker processes, with the cache intact.

``kerckhoffs reproduce --all`` measures some sixty experiments; on a machine with several cores
they need not wait for one another. The caller hands over *bundles*: lists of experiments that
share work (the same tables, releases and attacks, kept in one :class:`Context`), typically those
of one paper module. A bundle runs whole in one worker, its experiments one after the other
with one context, so what they share is built once per bundle (a serial run shares it across
everything). Each experiment still has one writer for its cache file
``<out>/.cache/<name>.jsonl``, so an interrupted run resumes exactly as a serial one does, and
measurements are seeded, so the CSVs are the same as a serial run's.

Workers report every finished point and every finished experiment through a queue, so the
caller can keep one progress bar per experiment and print each result as it lands.
"""

from __future__ import annotations

import multiprocessing
import queue
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kerckhoffs.experiments.base import Context, Experiment
from kerckhoffs.experiments.registry import get_experiment
from kerckhoffs.experiments.runner import run_experiment


@dataclass(frozen=True)
class Finished:
    """One experiment done: its name, how many rows its CSV has, how long it took, whether
    its CSV and PNG were left as they were (only varying cells differed), and how many of
    its points were measured (the others came from the cache), and whether the CSV was
    exactly what would have been written."""

    name: str
    rows: int
    seconds: float
    kept: bool = False
    measured: int = 0
    unchanged: bool = False


_PROGRESS: Any = None
"""In a worker: the queue the caller reads ``(name, points done)`` from."""


def _init_worker(progress: Any) -> None:
    global _PROGRESS
    _PROGRESS = progress


def _work(
    names: Sequence[str],
    out_dir: str,
    data_dir: str,
    force: bool,
    resolve: Callable[[str], Experiment],
    record: bool = False,
) -> list[Finished]:
    """In a worker: one bundle, its experiments in order with one shared context, reporting
    ``("point", name, done)`` after each point and ``("done", Finished)`` after each
    experiment."""
    context = Context(Path(data_dir))
    finished = []
    for name in names:
        started = time.perf_counter()
        exp = resolve(name)

        def step(done: int, _total: int, name: str = name) -> None:
            _PROGRESS.put(("point", name, done))

        df = run_experiment(
            exp, out_dir, context=context, force=force, progress=step, record=record
        )
        result = Finished(
            name, len(df), time.perf_counter() - started, bool(df.attrs.get("kept", False)),
            int(df.attrs.get("measured", 0)), bool(df.attrs.get("unchanged", False)),
        )  # fmt: skip
        _PROGRESS.put(("done", result))
        finished.append(result)
    return finished


def run_many(
    bundles: Sequence[Sequence[str]],
    out_dir: Path,
    data_dir: Path,
    *,
    jobs: int,
    force: bool = False,
    record: bool = False,
    on_point: Callable[[str, int], None] | None = None,
    on_done: Callable[[Finished], None] | None = None,
    resolve: Callable[[str], Experiment] = get_experiment,
) -> list[Finished]:
    """Run the bundles of named experiments in ``jobs`` worker processes (in order of
    submission, so put the longest first); ``on_point(name, done)`` after every point,
    ``on_done`` after every experiment, both in the calling process. ``resolve`` turns a name
    into its experiment inside a worker (a module-level function: it is pickled). The first
    failure stops the run and is raised once the running workers have finished their
    bundles. ``record``: rewrite every CSV and PNG (:func:`run_experiment`)."""
    finished: list[Finished] = []
    # a fork server that has imported this module once forks the workers: no copies of the
    # caller's threads (the progress bar has one), and no fresh interpreter per worker
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([__name__])
    progress = ctx.Queue()
    with ProcessPoolExecutor(
        max_workers=jobs, mp_context=ctx, initializer=_init_worker, initargs=(progress,)
    ) as pool:
        pending: set[Future[list[Finished]]] = {
            pool.submit(_work, list(b), str(out_dir), str(data_dir), force, resolve, record)
            for b in bundles
            if b
        }
        try:
            while pending:
                done, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
                _drain(progress, on_point, on_done)
                for fut in done:
                    finished += fut.result()  # raises the worker's exception
        except BaseException:
            for fut in pending:
                fut.cancel()
            raise
    time.sleep(0.05)  # let the queue's feeder threads deliver the last reports
    _drain(progress, on_point, on_done)
    return finished


def _drain(
    progress: Any,
    on_point: Callable[[str, int], None] | None,
    on_done: Callable[[Finished], None] | None,
) -> None:
    while True:
        try:
            message = progress.get_nowait()
        except queue.Empty:
            return
        if message[0] == "point" and on_point is not None:
            on_point(message[1], message[2])
        elif message[0] == "done" and on_done is not None:
            on_done(message[1])
