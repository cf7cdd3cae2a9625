"""Run several experiments at once, one worker process each, with the cache intact.

``kerckhoffs reproduce --all`` measures some fifty independent experiments; on a machine with
several cores they need not wait for one another. Each experiment runs whole in one worker
(:func:`run_experiment` with its own :class:`Context`), so its cache file
``<out>/.cache/<name>.jsonl`` has one writer and an interrupted run resumes exactly as a serial
one does. What is lost is sharing across experiments inside one process (a table or release
two experiments both use is built in each worker that needs it): measurements are seeded, so
the CSVs are the same as a serial run's.

Workers report each finished point through a queue, so the caller can keep one progress bar
per experiment.
"""

from __future__ import annotations

import multiprocessing
import os
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
    """One experiment done: its name, how many rows its CSV has, and how long it took."""

    name: str
    rows: int
    seconds: float


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity, not the machine's total)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


_PROGRESS: Any = None
"""In a worker: the queue the caller reads ``(name, points done)`` from."""


def _init_worker(progress: Any) -> None:
    global _PROGRESS
    _PROGRESS = progress


def _work(
    name: str, out_dir: str, data_dir: str, force: bool, resolve: Callable[[str], Experiment]
) -> Finished:
    """In a worker: one whole experiment, reporting ``(name, done)`` after each point."""
    started = time.perf_counter()
    exp = resolve(name)

    def step(done: int, _total: int) -> None:
        _PROGRESS.put((name, done))

    df = run_experiment(exp, out_dir, context=Context(Path(data_dir)), force=force, progress=step)
    return Finished(name, len(df), time.perf_counter() - started)


def run_many(
    names: Sequence[str],
    out_dir: Path,
    data_dir: Path,
    *,
    jobs: int,
    force: bool = False,
    on_point: Callable[[str, int], None] | None = None,
    on_done: Callable[[Finished], None] | None = None,
    resolve: Callable[[str], Experiment] = get_experiment,
) -> list[Finished]:
    """Run the named experiments in ``jobs`` worker processes (in order of submission, so
    put the longest first); ``on_point(name, done)`` after every point, ``on_done`` after
    every experiment, both in the calling process. ``resolve`` turns a name into its
    experiment inside a worker (a module-level function: it is pickled). The first failure
    stops the run and is raised once the running workers have finished their experiments."""
    finished: list[Finished] = []
    # a fork server that has imported this module once forks the workers: no copies of the
    # caller's threads (the progress bar has one), and no fresh interpreter per worker
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([__name__])
    progress = ctx.Queue()
    with ProcessPoolExecutor(
        max_workers=jobs, mp_context=ctx, initializer=_init_worker, initargs=(progress,)
    ) as pool:
        pending: set[Future[Finished]] = {
            pool.submit(_work, n, str(out_dir), str(data_dir), force, resolve) for n in names
        }
        try:
            while pending:
                done, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
                _drain(progress, on_point)
                for fut in done:
                    result = fut.result()  # raises the worker's exception
                    finished.append(result)
                    if on_done is not None:
                        on_done(result)
        except BaseException:
            for fut in pending:
                fut.cancel()
            raise
    time.sleep(0.05)  # let the queue's feeder threads deliver the last reports
    _drain(progress, on_point)
    return finished


def _drain(progress: Any, on_point: Callable[[str, int], None] | None) -> None:
    while True:
        try:
            name, done = progress.get_nowait()
        except queue.Empty:
            return
        if on_point is not None:
            on_point(name, done)
