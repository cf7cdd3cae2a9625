"""Question: how long do Hilb and Anatomy take on the Census stand-in at l = 4, next to the
authors' C++ (paper 000, Table 8) and the issue's targets?

Setting (paper 000 section 8.4): Census-Income rows with occupation != 0 (148,318),
QIs age, sex, education, marital_status, race, workclass, country, SA occupation, l = 4.
Paper 000's C++ took Hilb 2.1 s and Anatomy 0.3 s (Intel Core 2 Duo 2.6 GHz, Table 8); the
issue's targets are Hilb < 0.5 s and Anatomy < 0.15 s. The table is encoded once (not timed);
each run times the whole algorithm call, ``Table -> Release`` (Hilbert index, sort, greedy and
roll-back steps, partition; for Anatomy the random picks with a fixed seed). Hilb's parts are
timed too: the Hilbert index, the sort by (Q_T, row id), and the greedy loop. Medians of
repeated runs; every release is checked (4-diverse) once.

Run: ``python benchmarks/bench_hilb_anatomy.py [--repeat 11]``
Writes ``benchmarks/results/hilb_anatomy.csv`` and ``benchmarks/results/hilb_anatomy.png``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from _timing import RESULTS, SHARED_DATA, median_seconds
from kerckhoffs import Schema, Table
from kerckhoffs.algorithms.anatomy import anatomy
from kerckhoffs.algorithms.hilb import hilb, hilb_groups, table_hilbert_index
from kerckhoffs.algorithms.hilbert_curve import hilbert_order
from kerckhoffs.models import LDiversity

SCHEMA = Path(__file__).resolve().parents[1] / "examples" / "census" / "schema.toml"
L = 4
PAPER = {"Hilb": 2.1, "Anatomy": 0.3}  # seconds, paper 000 Table 8 (C++)
TARGET = {"Hilb": 0.5, "Anatomy": 0.15}  # seconds: the project's targets


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=11)
    args = ap.parse_args()
    from kerckhoffs.datasets import load_census

    table = Table.encode(load_census(SHARED_DATA / "census"), Schema.from_toml(SCHEMA))
    models = [LDiversity(L)]
    rows = []

    def add(algorithm: str, method: str, seconds: float, runs: int, groups: int | None) -> None:
        rows.append(
            {
                "algorithm": algorithm,
                "method": method,
                "rows": table.n,
                "l": L,
                "groups": groups,
                "median_s": seconds,
                "runs": runs,
            }
        )

    for name, fn in (("Hilb", hilb), ("Anatomy", anatomy)):
        release = fn(table, models, seed=0)
        assert release.check(models)[0].satisfied
        t, runs = median_seconds(lambda fn=fn: fn(table, models, seed=0), args.repeat)
        add(name, "kerckhoffs (Python + numpy)", t, len(runs), release.partition.n_groups)
        add(name, "paper 000 C++ (Table 8)", PAPER[name], 1, None)
        add(name, "issue 3 target", TARGET[name], 1, None)

    # Hilb's parts
    index = table_hilbert_index(table)
    order = hilbert_order(index=index)
    parts = {
        "Hilb: Hilbert index": lambda: table_hilbert_index(table),
        "Hilb: sort by (Q_T, row id)": lambda: hilbert_order(index=index),
        "Hilb: greedy + roll-back loop": lambda: hilb_groups(table.sa, order, L),
    }
    for label, fn in parts.items():
        t, runs = median_seconds(fn, args.repeat)
        add(label, "kerckhoffs (Python + numpy)", t, len(runs), None)
    result = hilb_groups(table.sa, order, L)

    out = pd.DataFrame(rows)
    RESULTS.mkdir(exist_ok=True)
    out.to_csv(RESULTS / "hilb_anatomy.csv", index=False)
    plot(out)
    print(out.to_string(index=False))
    print(f"Hilb: {int(result.rolled_back.sum())} of {result.n_groups} groups from the roll-back")


def plot(df: pd.DataFrame) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4), gridspec_kw={"width_ratios": [2, 3]})
    algos = ["Hilb", "Anatomy"]
    ours = [
        float(df[(df.algorithm == a) & df.method.str.startswith("kerckhoffs")].median_s.iloc[0])
        for a in algos
    ]
    paper = [PAPER[a] for a in algos]
    x = np.arange(len(algos))
    ax.bar(x - 0.2, ours, 0.4, label="kerckhoffs (Python + numpy)")
    ax.bar(x + 0.2, paper, 0.4, label="paper 000 C++ (Table 8)")
    for i, a in enumerate(algos):
        ax.hlines(TARGET[a], i - 0.45, i + 0.45, colors="red", linestyles="--", linewidth=1)
        ax.text(i - 0.2, ours[i] * 1.1, f"{ours[i]:.3f} s", ha="center", fontsize=8)
        ax.text(i + 0.2, paper[i] * 1.1, f"{paper[i]:.1f} s", ha="center", fontsize=8)
    ax.plot([], [], "r--", linewidth=1, label="issue 3 target")
    ax.set_yscale("log")
    ax.set_ylim(min(ours) / 2, 30)
    ax.set_xticks(x, algos)
    ax.set_ylabel("median seconds (log)")
    ax.set_title("Census stand-in, 148,318 rows, l = 4", fontsize=10)
    ax.legend(fontsize=7, loc="upper right")

    part = df[df.algorithm.str.startswith("Hilb: ")]
    bx.barh(part.algorithm.str.removeprefix("Hilb: "), part.median_s * 1e3, color="tab:blue")
    for y, v in enumerate(part.median_s * 1e3):
        bx.text(v, y, f" {v:.1f} ms", va="center", fontsize=8)
    bx.set_xlim(0, float(part.median_s.max()) * 1e3 * 1.25)
    bx.set_xlabel("median milliseconds")
    bx.set_title("Hilb's parts", fontsize=10)
    bx.invert_yaxis()
    fig.tight_layout()
    fig.savefig(RESULTS / "hilb_anatomy.png", dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
