"""Question: does Mondrian (l = 4) run on 100M rows on this machine with Dask, within a memory
cap per worker, and what does Dask cost against the in-memory engine at 10M rows?

Data: the Census stand-in (148,318 rows with occupation != 0; ``examples/census/schema.toml``:
7 QIs with hierarchies, SA occupation) resampled with replacement (seed 0) into Parquet files
of 1M rows each, written one file at a time (never the whole table in memory), under
``benchmarks/.cache/census-resampled/`` (not committed; made once).

Runs, all in one invocation:

- ``dask 100M``: a local cluster of 2 worker processes, 1 thread each, ``--worker-memory``
  (3GB) each: encode (global dictionaries), Mondrian l = 4 by counting (levels on the
  partitions, subtrees finished in memory), the release written in parts and checked from the
  files before ``release.json`` (fail closed), as ``kerckhoffs anonymize --engine dask`` does;
- ``dask 10M`` and ``memory 10M`` side by side on the first 10 files: Dask encode + Mondrian
  against ``Table.encode`` of the concatenated files + ``mondrian``; the two partitions are
  asserted identical (same group for every row).

Recorded per run: wall time per phase; CPU seconds of the client and of the workers
(``getrusage`` in each process); peak RSS of the client (``getrusage``) and of each worker
(sampled every 0.5 s: a worker forked from the client would report the client's peak).
Quote ratios from one run: the machine is shared.
Run: ``python benchmarks/bench_dask_scale.py [--rows-millions 100] [--worker-memory 3GB]
[--name dask_scale]``
"""

from __future__ import annotations

import argparse
import resource
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from _timing import RESULTS, SHARED_DATA
from kerckhoffs import Schema, Table
from kerckhoffs.algorithms import get
from kerckhoffs.models import LDiversity
from kerckhoffs.release import Provenance

HERE = Path(__file__).resolve().parent
DATA = HERE / ".cache" / "census-resampled"
SCHEMA = HERE.parent / "examples" / "census" / "schema.toml"
CHUNK = 1_000_000
NAME = "dask_scale"
"""The results' file name (``--name``)."""
MODELS = [LDiversity(4)]


def generate(files: int) -> list[Path]:
    """The first ``files`` resampled 1M-row Parquet files (made once, one at a time)."""
    from kerckhoffs.datasets import load_census

    DATA.mkdir(parents=True, exist_ok=True)
    paths = [DATA / f"part-{i:04d}.parquet" for i in range(files)]
    missing = [p for p in paths if not p.is_file()]
    if missing:
        schema = Schema.from_toml(SCHEMA)
        cols = [c.name for c in schema.quasi] + [schema.sensitive.name]
        source = load_census(SHARED_DATA / "census")[cols].reset_index(drop=True)
        for p in missing:
            i = int(p.stem.split("-")[1])
            rng = np.random.default_rng(i)  # file i is the same whichever files exist
            rows = rng.integers(0, len(source), CHUNK)
            tmp = p.with_suffix(".tmp")
            source.iloc[rows].reset_index(drop=True).to_parquet(tmp)
            tmp.replace(p)
            print(f"wrote {p.name}", flush=True)
    return paths


def _usage() -> tuple[float, float]:
    """(CPU seconds, peak RSS in MB) of the calling process."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime, r.ru_maxrss / 1024


def _rss() -> int:
    import psutil

    return int(psutil.Process().memory_info().rss)


class PeakSampler:
    """Each worker's resident memory, sampled every ``every`` seconds in a thread; ``peaks``
    holds the largest seen per worker (``getrusage`` peaks are not used: a worker process may
    be forked from this one and report its peak)."""

    def __init__(self, client: Any, every: float = 0.5) -> None:
        import threading

        self.client, self.every = client, every
        self.peaks: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                for w, rss in self.client.run(_rss).items():
                    self.peaks[w] = max(self.peaks.get(w, 0), rss)
            except Exception:  # a sample lost while a worker is busy
                pass
            self._stop.wait(self.every)

    def __enter__(self) -> PeakSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def run_dask(files: list[Path], memory: str, write: bool) -> tuple[dict[str, Any], Any]:
    from kerckhoffs.engines.dask_cluster import connect
    from kerckhoffs.engines.dask_mondrian import mondrian_dask
    from kerckhoffs.engines.dask_release import write_dask_release
    from kerckhoffs.engines.dask_table import encode_dask

    schema = Schema.from_toml(SCHEMA)
    out = HERE / ".cache" / "dask-release"
    shutil.rmtree(out, ignore_errors=True)
    row: dict[str, Any] = {"rows": len(files) * CHUNK, "worker_memory": memory}
    with connect(workers=2, memory=memory) as client, PeakSampler(client) as sampler:
        cpu0 = sum(client.run(_usage).values(), ())[0::2]
        c0, _ = _usage()
        t0 = time.perf_counter()
        dt = encode_dask(files, schema, client)  # as the CLI reads them
        row["encode_s"] = time.perf_counter() - t0
        t1 = time.perf_counter()
        groups = mondrian_dask(
            dt, MODELS, progress=lambda lv, g: print(f"  level {lv}: {g:,} open groups", flush=True)
        )
        row["mondrian_s"] = time.perf_counter() - t1
        row["levels_on_partitions"] = groups.levels
        row["groups"] = groups.n_groups
        partition = None
        if write:
            t2 = time.perf_counter()
            results = write_dask_release(
                dt, groups, MODELS, out, Provenance("mondrian", groups.params)
            )
            row["write_and_check_s"] = time.perf_counter() - t2
            assert all(r.satisfied for r in results)
            row["achieved_l"] = results[0].achieved
        else:
            partition = np.concatenate(client.gather(groups.groups))
        row["wall_s"] = time.perf_counter() - t0
        usage = client.run(_usage)
        cpu1 = [u[0] for u in usage.values()]
        row["workers_cpu_s"] = float(sum(cpu1) - sum(cpu0))
        row["client_cpu_s"] = _usage()[0] - c0
        peaks = sorted(v / 2**20 for v in sampler.peaks.values())
        row["worker_peak_mb"] = ", ".join(f"{p:,.0f}" for p in peaks)
        row["client_peak_mb"] = _usage()[1]
    shutil.rmtree(out, ignore_errors=True)
    return row, partition


def run_memory(files: list[Path]) -> tuple[dict[str, Any], np.ndarray]:
    schema = Schema.from_toml(SCHEMA)
    c0, _ = _usage()
    t0 = time.perf_counter()
    df = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    table = Table.encode(df, schema)
    del df
    t1 = time.perf_counter()
    release = get("mondrian").run(table, MODELS)
    t2 = time.perf_counter()
    row = {
        "rows": table.n,
        "encode_s": t1 - t0,
        "mondrian_s": t2 - t1,
        "groups": release.partition.n_groups,
        "wall_s": t2 - t0,
        "client_cpu_s": _usage()[0] - c0,
        "client_peak_mb": _usage()[1],
    }
    return row, release.partition.group


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows-millions", type=int, default=100)
    ap.add_argument("--side-millions", type=int, default=10)
    ap.add_argument("--worker-memory", default="3GB")
    ap.add_argument(
        "--name", default="dask_scale", help="results/<name>.csv and .png (keep the 100M run's)"
    )
    args = ap.parse_args()
    global NAME
    NAME = args.name
    files = generate(max(args.rows_millions, args.side_millions))
    rows = []
    side = files[: args.side_millions]
    print(f"memory engine, {args.side_millions}M rows", flush=True)
    mem, expected = run_memory(side)
    rows.append({"run": f"memory {args.side_millions}M", **mem})
    print(f"dask, {args.side_millions}M rows", flush=True)
    dsk, got = run_dask(side, args.worker_memory, write=False)
    assert got is not None and np.array_equal(got, expected), "the partitions differ"
    rows.append({"run": f"dask {args.side_millions}M", **dsk, "same_groups_as_memory": True})
    _save(rows)
    print(f"dask, {args.rows_millions}M rows, release written and checked", flush=True)
    big, _ = run_dask(files[: args.rows_millions], args.worker_memory, write=True)
    rows.append({"run": f"dask {args.rows_millions}M, written", **big})
    _save(rows)


def _save(rows: list[dict[str, Any]]) -> None:
    """The CSV and plot of the runs so far (a long run that stops keeps what it measured)."""
    out = pd.DataFrame(rows)
    RESULTS.mkdir(exist_ok=True)
    out.to_csv(RESULTS / f"{NAME}.csv", index=False)
    _plot(out)
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        print(out.to_string(index=False), flush=True)


def _plot(df: pd.DataFrame) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.5))
    phases = [c for c in ("encode_s", "mondrian_s", "write_and_check_s") if c in df.columns]
    left = np.zeros(len(df))
    for c in phases:
        v = df[c].fillna(0).to_numpy()
        ax.barh(df["run"], v, left=left, label=c.removesuffix("_s"))
        left += v
    ax.set_xlabel("wall seconds")
    ax.set_title("Mondrian l=4, Census stand-in resampled; Dask: 2 workers", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(RESULTS / f"{NAME}.png", dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
