"""Question: what do the release's trust guarantees cost when writing and reading it back?

Issue 10 added, to every release: group ids ranked by published content (not the input order),
a SHA-256 of every file and of ``release.json`` itself, an exclusive claim on ``--out``, and
verification of the digests when the release is read back. Side by side in one run, on the
same Mondrian k=5 release of 1,000,000 generated hospital rows (about 200,000 groups):

- ``write``: ``Release.write`` (fail-closed check, numbering, CSV + Parquet, digests) vs the
  previous implementation kept here as a baseline (the same frames numbered by the input
  order, the same fail-closed check and files, plain JSON, no digests, no claim);
- ``read``: ``Release.from_published`` verifying the digests vs ``verify=False`` reading the
  same Parquet file (the CSV is removed for this pair so both read the same bytes);
- the parts: ``published_numbering`` and hashing every file.

CPU and wall time, medians of repeated runs. Run: ``python benchmarks/bench_release_io.py``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from _timing import save
from kerckhoffs import Release, Table
from kerckhoffs.algorithms import REGISTRY
from kerckhoffs.data import manifest
from kerckhoffs.datasets import generate_hospital, hospital_schema
from kerckhoffs.models import KAnonymity
from kerckhoffs.release import GROUP, META


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median wall and CPU seconds of ``fn`` (one untimed warm-up)."""
    fn()
    wall, cpu = [], []
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu)


def baseline_write(rel: Release, out: Path, models: list) -> None:
    """The write path before group ids were ranked by published content: numbered by first
    appearance in the input."""
    t = rel.table
    group = rel.partition.group
    order = np.lexsort((rel.sa_published, group))
    cells = rel.generalized_cells()
    df = cells.iloc[group[order]].reset_index(drop=True)
    df.insert(0, GROUP, group[order])
    df[t.sa_name] = t.sa_column.decode(rel.sa_published)[order]
    frames = {"release": df}
    results = Release.from_frames(frames, rel.metadata()).check(models)
    assert all(r.satisfied for r in results)
    meta = rel.metadata(results)
    meta["files"] = ["release.csv", "release.parquet"]
    tmp = Path(tempfile.mkdtemp(prefix=".b.", dir=out.parent))
    df.to_csv(tmp / "release.csv", index=False)
    df.to_parquet(tmp / "release.parquet", index=False)
    (tmp / META).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    if out.exists():
        shutil.rmtree(out)
    tmp.rename(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    table = Table.encode(generate_hospital(args.rows, 0), hospital_schema())
    models = [KAnonymity(5)]
    rel = REGISTRY["mondrian"].run(table, models)
    work = Path(tempfile.mkdtemp(prefix="bench-release-io-"))
    new, old = work / "new", work / "old"

    def write_new() -> None:
        rel.write(new, models, overwrite=True)

    rows = []

    def add(step: str, method: str, wall: float, cpu: float) -> None:
        rows.append(
            {
                "step": step,
                "method": method,
                "rows": table.n,
                "groups": rel.partition.n_groups,
                "median_s": wall,
                "median_cpu_s": cpu,
            }
        )
        print(f"{step:8} {method:45} wall {wall:7.3f} s  cpu {cpu:7.3f} s")

    add("write", "kerckhoffs Release.write", *timed(write_new, args.repeat))
    add(
        "write",
        "baseline (previous write)",
        *timed(lambda: baseline_write(rel, old, models), args.repeat),
    )
    add("parts", "published_numbering", *timed(rel.published_numbering, args.repeat))
    files = sorted(p for p in new.iterdir() if p.name != META)
    add(
        "parts",
        "SHA-256 of every file",
        *timed(lambda: [manifest.file_digest(f) for f in files], args.repeat),
    )
    pq_only = work / "pq"
    rel.write(pq_only, models, formats=("parquet",))
    add(
        "read",
        "kerckhoffs from_published (verified)",
        *timed(lambda: Release.from_published(pq_only), args.repeat),
    )
    add(
        "read",
        "from_published(verify=False)",
        *timed(lambda: Release.from_published(pq_only, verify=False), args.repeat),
    )
    shutil.rmtree(work)
    df = pd.DataFrame(rows)
    save(
        df,
        "release_io",
        f"Writing and reading a release: {table.n:,} rows, {rel.partition.n_groups:,} groups",
        label="step",
    )
    w = df.set_index("method").median_cpu_s
    write = w["kerckhoffs Release.write"] / w["baseline (previous write)"]
    read = w["kerckhoffs from_published (verified)"] / w["from_published(verify=False)"]
    print(f"CPU: write x{write:.2f} of the baseline; read verified x{read:.2f} of unverified")


if __name__ == "__main__":
    main()
