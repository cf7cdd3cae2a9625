"""Which levels does ``dp-histogram`` choose with DP when given none, and how long does the
command take? (Adult and the Census stand-in, epsilon 1, the CLI as a subprocess)

Runs ``kerckhoffs anonymize DATA --schema SCHEMA -a dp-histogram --model dp=1 --out X``
(no ``-O``) ``RUNS`` times on each data set, reads the chosen levels from each release.json
(published, DP outputs) and writes one row per run to ``results/dp_levels_adult.csv``
(data set, run, wall seconds, cells, each QI's level, ``*`` at its root), then prints, per
QI, how often it was kept above ``*`` and the cell counts. The data are read by path
(``/tmp/adult.csv`` from ``kerckhoffs datasets prepare adult``, ``/tmp/census.csv`` from
``kerckhoffs datasets prepare census``; made if missing).

    python benchmarks/dp_levels_adult.py [RUNS]
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
RUNS = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 20
SETS = {
    "adult": (Path("/tmp/adult.csv"), ROOT / "examples/adult/schema.toml"),
    "census": (Path("/tmp/census.csv"), ROOT / "examples/census/schema.toml"),
}
OUT = ROOT / "benchmarks/results/dp_levels_adult.csv"


def kerckhoffs(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    return subprocess.run(
        [sys.executable, "-m", "kerckhoffs.cli", *args], env=env, capture_output=True, text=True
    )


def prepare(name: str, path: Path) -> None:
    if not path.exists():
        done = kerckhoffs(
            "datasets", "prepare", name, "--from", str(DATA / name), "--out", str(path)
        )
        if done.returncode:
            raise SystemExit(done.stderr)


def main() -> None:
    rows = []
    for name, (data, schema) in SETS.items():
        prepare(name, data)
        for run in range(RUNS):
            with tempfile.TemporaryDirectory() as tmp:
                out = Path(tmp) / "X"
                t0 = time.perf_counter()
                done = kerckhoffs(
                    "anonymize",
                    str(data),
                    "--schema",
                    str(schema),
                    "-a",
                    "dp-histogram",
                    "--model",
                    "dp=1",
                    "--out",
                    str(out),
                )
                wall = time.perf_counter() - t0
                if done.returncode:
                    raise SystemExit(done.stderr or done.stdout)
                meta = json.loads((out / "release.json").read_text())
            part = next(p for p in meta["dp"]["parts"] if p["name"] == "level selection")
            row = {"data": name, "run": run, "wall_s": round(wall, 2), "cells": part["cells"]}
            row |= dict(item.split(":") for item in part["levels"].split())
            rows.append(row)
            print(name, run, row, flush=True)
    OUT.parent.mkdir(exist_ok=True)
    fields = list(dict.fromkeys(k for r in rows for k in r))
    with OUT.open("w", newline="") as f:
        writer = csv.DictWriter(f, fields)
        writer.writeheader()
        writer.writerows(rows)
    for name in SETS:
        mine = [r for r in rows if r["data"] == name]
        qis = [k for k in mine[0] if k not in ("data", "run", "wall_s", "cells")]
        kept = {q: sum(r.get(q) not in ("*", "", None) for r in mine) for q in qis}
        cells = sorted(int(r["cells"]) for r in mine)
        walls = sorted(float(r["wall_s"]) for r in mine)
        print(
            f"{name}: {len(mine)} runs, wall median {walls[len(walls) // 2]:.2f} s; cells "
            f"median {cells[len(cells) // 2]:,} (min {cells[0]:,}, max {cells[-1]:,})"
        )
        print("  kept above *: " + ", ".join(f"{q} {k}/{len(mine)}" for q, k in kept.items()))
    plot()


def plot() -> None:
    """``results/dp_levels_adult.png`` from the CSV: per data set, in how many runs each QI
    was kept above ``*`` (``python benchmarks/dp_levels_adult.py --plot`` redraws it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    df = pd.read_csv(OUT, dtype=str)
    fig, axes = plt.subplots(1, len(SETS), figsize=(11, 4))
    for ax, name in zip(axes, SETS, strict=True):
        mine = df[df["data"] == name].dropna(axis=1, how="all")
        qis = [c for c in mine.columns if c not in ("data", "run", "wall_s", "cells")]
        kept = [int((mine[q] != "*").sum()) for q in qis]
        ax.barh(qis, kept, color="#4477aa")
        ax.set_xlim(0, len(mine))
        ax.set_xlabel(f"runs kept above * (of {len(mine)})")
        ax.set_title(f"{name}: levels chosen with DP, dp=1")
        ax.invert_yaxis()
    fig.tight_layout()
    fig.savefig(OUT.with_suffix(".png"), dpi=110)


if __name__ == "__main__":
    plot() if "--plot" in sys.argv else main()
