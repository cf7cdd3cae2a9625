"""Connecting to Dask: a scheduler address (a real cluster) or a local cluster of worker
processes on this machine, one thread each, memory capped per worker."""

from __future__ import annotations

import contextlib
import glob
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kerckhoffs.errors import InputError
from kerckhoffs.machine import available_cpus

__all__ = ["connect", "parquet_files"]


@contextlib.contextmanager
def connect(
    scheduler: str | None = None, *, workers: int | None = None, memory: str | None = None
) -> Iterator[Any]:
    """A :class:`distributed.Client` for the block: to ``scheduler`` (``tcp://host:8786``)
    when given, else to a new local cluster of ``workers`` processes (default: one per CPU)
    with ``memory`` each (``"3GB"``; default: the machine's memory shared out), closed after.
    Dask's own log lines below warnings are silenced (the CLI prints its own progress)."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:  # pragma: no cover - the dask extra is missing
        raise InputError("--engine dask needs Dask: pip install 'kerckhoffs[dask]'") from None
    for name in ("distributed", "distributed.core", "distributed.worker", "distributed.scheduler",
                 "distributed.nanny", "distributed.http.proxy"):  # fmt: skip
        logging.getLogger(name).setLevel(logging.WARNING)
    if scheduler is not None:
        try:
            client = Client(scheduler, timeout="10s")
        except OSError as e:
            raise InputError(f"--scheduler {scheduler}: cannot connect ({e})") from None
        with client:
            yield client
        return
    with (
        LocalCluster(
            n_workers=workers or available_cpus(),
            threads_per_worker=1,
            processes=True,
            memory_limit=memory or "auto",
            dashboard_address=":0",  # any free port: never "8787 is already in use"
        ) as cluster,
        Client(cluster) as client,
    ):
        try:
            yield client
        finally:
            # closing races: a worker still holding data may send its heartbeat to a scheduler
            # already gone and log the failure with a traceback
            # (https://github.com/dask/distributed/issues/7105),
            # after a run that succeeded; our own cluster's workers stop logging errors now
            with contextlib.suppress(Exception):
                client.run(_quiet_worker_log)


def _quiet_worker_log() -> None:
    """On a worker of our local cluster, about to be closed: only critical log lines."""
    logging.getLogger("distributed.worker").setLevel(logging.CRITICAL)


def parquet_files(data: str | Path) -> list[Path]:
    """The Parquet files ``data`` names (a file, a directory of ``*.parquet`` files, or a
    glob), sorted; a one-line :class:`~kerckhoffs.errors.InputError` when there is none."""
    text = str(data)
    path = Path(text)
    if path.is_dir():
        found = sorted(path.glob("*.parquet"))
    elif any(ch in text for ch in "*?["):
        found = sorted(Path(p) for p in glob.glob(text))
    else:
        found = [path] if path.is_file() else []
    if not found:
        raise InputError(f"{data}: no Parquet file there (give a file, a folder or a glob)")
    bad = [p for p in found if p.suffix.lower() != ".parquet"]
    if bad:
        raise InputError(f"{bad[0]}: the Dask engine reads Parquet files (convert CSV first)")
    return found
