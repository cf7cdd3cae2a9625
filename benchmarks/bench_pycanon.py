"""Question: do our privacy-model checks give pycanon's values, and how much faster are they?

Setting: the Adult training split ``../shared/data/adult/adult.csv`` (30,162 rows),
the 8 QIs of its hierarchy files, SA salary-class; every model pycanon also checks. A second
setting with QIs sex and race gives non-degenerate values for the value comparison.

Both sides start from a DataFrame read from the same CSV and time the whole check end to end:
pycanon's function call; for us encode + group + histogram + model. pycanon 1.3.6 pins its
own numpy/pandas, so it runs in its own venv (``benchmarks/.venvs/pycanon``) through
``peers/pycanon_runner.py``. Medians over repeated runs; ratio = pycanon / ours.

Values are compared in pycanon's conventions (documented in benchmarks/README.md):
entropy l is ``int(e ** min H)``; recursive (c, l) returns the distinct-l as its l (compared)
and a c computed with counts sorted ascending (not comparable, reported); (alpha, k) is over
all SA values.

Run: ``python benchmarks/bench_pycanon.py [--repeat-peer 3] [--repeat-ours 15]``
Writes ``benchmarks/results/pycanon.csv`` and ``benchmarks/results/pycanon.png``.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from _timing import ADULT_ARX_QIS
from kerckhoffs import Partition, Release, Schema, Table
from kerckhoffs.models import (
    AlphaKAnonymity,
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    RecursiveCLDiversity,
    TCloseness,
)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "peers"))
from venv import ensure_venv  # noqa: E402

DATA = HERE.parents[1] / "shared" / "data" / "adult" / "adult.csv"
RESULTS = HERE / "results"
QIS_FULL = ADULT_ARX_QIS
SA = "salary-class"
SETTINGS = {"adult-8qi": QIS_FULL, "adult-sex-race": ["sex", "race"]}


def ours(df: pd.DataFrame, qis: list[str], name: str) -> tuple[object, object]:
    """One end-to-end check: encode the DataFrame, group, histogram, model -> pycanon value."""
    table = Table.encode(df, Schema.build(qis, SA))
    release = Release(table, Partition.by_qi(table))
    hist = release.histogram()
    if name == "k_anonymity":
        return int(KAnonymity(1).evaluate(hist).achieved), None
    if name == "l_diversity":
        return int(DistinctLDiversity(1).evaluate(hist).achieved), None
    if name == "entropy_l_diversity":
        h = float(EntropyLDiversity.entropies(hist).min())
        return int(np.exp(1) ** h), math.exp(h)
    if name == "recursive_c_l_diversity":
        l_distinct = int(DistinctLDiversity(1).evaluate(hist).achieved)
        if l_distinct < 2:
            return [None, l_distinct], None
        c = float(RecursiveCLDiversity(1, l_distinct).evaluate(hist).achieved)
        return [None, l_distinct], math.floor(c) + 1  # textbook integer c
    if name == "alpha_k_anonymity":
        a = AlphaKAnonymity(1, 1).evaluate(hist)
        return [a.achieved, int(hist.sizes.min())], None
    if name == "t_closeness":
        return TCloseness(1).evaluate(hist).achieved, None
    raise ValueError(name)


def same(peer: object, mine: object, name: str) -> bool:
    if name == "recursive_c_l_diversity":  # only l is comparable (pycanon's c: see docstring)
        return peer[1] == mine[1]  # type: ignore[index]
    if isinstance(peer, list):
        return all(same(p, m, "") for p, m in zip(peer, mine, strict=True))  # type: ignore[arg-type]
    if isinstance(peer, float) or isinstance(mine, float):
        return math.isclose(float(peer), float(mine), rel_tol=1e-9, abs_tol=1e-12)  # type: ignore[arg-type]
    return peer == mine


def time_ours(df: pd.DataFrame, qis: list[str], name: str, repeat: int) -> list[float]:
    ours(df, qis, name)  # warm-up (imports, caches)
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        ours(df, qis, name)
        runs.append(time.perf_counter() - t0)
    return runs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat-peer", type=int, default=3)
    ap.add_argument("--repeat-ours", type=int, default=15)
    ap.add_argument("--plot-only", action="store_true", help="redraw the plot from the CSV")
    args = ap.parse_args()
    if args.plot_only:
        plot(pd.read_csv(RESULTS / "pycanon.csv"))
        return
    if not DATA.is_file():
        sys.exit(f"data not found: {DATA}")
    py = ensure_venv("pycanon", ["pycanon==1.3.6"])
    df = pd.read_csv(DATA, sep=";")
    rows = []
    for setting, qis in SETTINGS.items():
        print(f"[{setting}] pycanon ({args.repeat_peer} runs per function) ...", flush=True)
        proc = subprocess.run(
            [
                str(py),
                str(HERE / "peers" / "pycanon_runner.py"),
                str(DATA),
                ";",
                SA,
                ",".join(qis),
                "--repeat",
                str(args.repeat_peer),
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        peer = json.loads(proc.stdout)
        for name, res in peer["results"].items():
            mine, textbook = ours(df, qis, name)
            runs = time_ours(df, qis, name, args.repeat_ours)
            ok = same(res["value"], mine, name)
            row = {
                "setting": setting,
                "model": name,
                "rows": len(df),
                "pycanon_value": json.dumps(res["value"]),
                "ours_value": json.dumps(mine),
                "equal": ok,
                "ours_textbook": "" if textbook is None else textbook,
                "pycanon_median_s": res["median"],
                "ours_median_s": statistics.median(runs),
                "ours_runs": len(runs),
                "pycanon_runs": len(res["seconds"]),
                "pycanon_version": peer["pycanon_version"],
            }
            row["ratio"] = row["pycanon_median_s"] / row["ours_median_s"]
            rows.append(row)
            print(
                f"  {name:26s} pycanon {res['value']!s:>26} {res['median']:8.3f}s | ours "
                f"{mine!s:>26} {row['ours_median_s'] * 1e3:7.1f}ms | {'=' if ok else 'DIFF'} "
                f"x{row['ratio']:.0f}",
                flush=True,
            )
    RESULTS.mkdir(exist_ok=True)
    out = pd.DataFrame(rows)
    out.to_csv(RESULTS / "pycanon.csv", index=False)
    plot(out)
    print(f"wrote {RESULTS / 'pycanon.csv'} and pycanon.png")


def plot(out: pd.DataFrame) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sub = out[out["setting"] == "adult-8qi"]
    x = np.arange(len(sub))
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.bar(x - 0.2, sub["pycanon_median_s"], 0.4, label="pycanon 1.3.6")
    ax.bar(x + 0.2, sub["ours_median_s"], 0.4, label="kerckhoffs (end to end)")
    for xi, top, r in zip(x, sub["pycanon_median_s"], sub["ratio"], strict=True):
        ax.text(xi, top * 1.4, f"×{r:.0f}", ha="center", fontsize=8)
    ax.set_yscale("log")
    ax.set_ylim(1e-3, sub["pycanon_median_s"].max() * 6)
    ax.set_xticks(x, [m.replace("_", "\n") for m in sub["model"]], fontsize=7)
    ax.set_ylabel("median seconds (log)")
    ax.set_title(
        "Adult 30,162 rows, 8 QIs, SA salary-class: model checks (ratio = pycanon / ours)",
        fontsize=9,
    )
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.28), ncol=2, fontsize=8)
    fig.tight_layout()
    fig.savefig(RESULTS / "pycanon.png", dpi=120)


if __name__ == "__main__":
    main()
