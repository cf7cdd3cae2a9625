"""Shared helpers of the benchmark scripts: medians of repeated runs, CSV + bar plot output."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import pandas as pd

if TYPE_CHECKING:
    from kerckhoffs import Schema

T = TypeVar("T")
RESULTS = Path(__file__).resolve().parent / "results"
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
ADULT_ARX_QIS = ["sex", "age", "race", "marital-status", "education", "native-country",
                 "workclass", "occupation"]  # fmt: skip
"""Adult's eight quasi-identifiers in ARX's (the file's) order, each with an
``adult_hierarchy_<name>.csv`` beside ``adult.csv``."""


def adult_arx_schema(qis: list[str], sa: str) -> Schema:
    """The schema of ARX's Adult setting: ``qis`` with ARX's hierarchy files (age numeric),
    ``sa`` sensitive."""
    from kerckhoffs import Schema

    folder = SHARED_DATA / "adult"
    spec = {
        q: {
            "kind": "numeric" if q == "age" else "categorical",
            "hierarchy": str(folder / f"adult_hierarchy_{q}.csv"),
        }
        for q in qis
    }
    return Schema.build(spec, sa)


def median_seconds(
    fn: Callable[[], object], repeat: int, warmup: int = 1
) -> tuple[float, list[float]]:
    """Median wall time of ``fn`` over ``repeat`` runs (after ``warmup`` untimed runs)."""
    for _ in range(warmup):
        fn()
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs), runs


def median_wall_cpu(fn: Callable[[], T], repeat: int) -> tuple[float, float, T]:
    """Median wall and CPU seconds of ``fn`` over ``repeat`` runs (after one untimed run),
    and what its last run returned."""
    out = fn()
    wall, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu), out


def save(
    df: pd.DataFrame,
    name: str,
    title: str,
    label: str,
    value: str = "median_s",
    group: str = "method",
    limit: float | None = None,
) -> None:
    """Write ``results/NAME.csv`` and a bar plot ``results/NAME.png`` of ``value`` by ``label``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    RESULTS.mkdir(exist_ok=True)
    df.to_csv(RESULTS / f"{name}.csv", index=False)
    fig, ax = plt.subplots(figsize=(8, 4))
    methods = list(dict.fromkeys(df[group]))
    labels = list(dict.fromkeys(df[label]))
    width = 0.8 / len(methods)
    for i, m in enumerate(methods):
        sub = df[df[group] == m].set_index(label).reindex(labels)
        xs = [x + (i - (len(methods) - 1) / 2) * width for x in range(len(labels))]
        ax.bar(xs, sub[value] * 1e3, width, label=m)
    if limit is not None:
        ax.axhline(limit * 1e3, color="red", linestyle="--", linewidth=1, label="target")
    ax.set_xticks(range(len(labels)), labels, fontsize=7, rotation=20)
    ax.set_ylabel("median milliseconds")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(RESULTS / f"{name}.png", dpi=120)
    plt.close(fig)


def save_vs_paper(
    df: pd.DataFrame,
    name: str,
    title: str,
    paper_label: str,
    paper_s: float,
    target_s: float,
    target_label: str,
) -> None:
    """Write ``results/NAME.csv`` and a horizontal log-scale bar plot of our runs (rows whose
    ``method`` starts with "kerckhoffs", labelled by ``run``) beside the paper's time."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    RESULTS.mkdir(exist_ok=True)
    df.to_csv(RESULTS / f"{name}.csv", index=False)
    fig, ax = plt.subplots(figsize=(9, 4.2))
    ours = df[df.method.str.startswith("kerckhoffs")].reset_index(drop=True)
    labels = [*ours.run, paper_label]
    values = [*ours.median_s, paper_s]
    colors = ["tab:blue"] * len(ours) + ["tab:orange"]
    y = np.arange(len(labels))
    ax.barh(y, values, color=colors)
    for i, v in enumerate(values):
        ax.text(v * 1.08, i, f"{v:.3f} s" if v < 10 else f"{v:.1f} s", va="center", fontsize=8)
    ax.axvline(target_s, color="red", linestyle="--", linewidth=1, label=target_label)
    ax.set_xscale("log")
    ax.set_xlim(right=paper_s * 4)
    ax.set_yticks(y, labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("median seconds (log)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    fig.savefig(RESULTS / f"{name}.png", dpi=120)
    plt.close(fig)
