"""Question (issue 15, rows 2 and 3): how much faster and smaller is Mondrian by counting than
the sorted-orders engine it replaced, with the same partitions?

Reference: today's engine, kept verbatim as ``benchmarks/baselines/mondrian_v0.py``
(``mondrian_groups_sorted``: d + 1 orders sorted by (group, code, row id), split stably at
each depth). Ours: ``kerckhoffs.algorithms.mondrian.mondrian_groups`` (per-level (group, code)
histograms, duplicate rows collapsed under strict cuts). Both are timed through the public
``mondrian()`` (rule built from the models, Release built), the baseline by swapping the
engine in its own child process. Every setting asserts that both give the same group id on
every row.

Settings (one child process per setting and engine, so that each peak RSS is its own):

1. Census stand-in (``../shared/data/census``: 148,318 rows with occupation != 0, the 7 QIs of
   ``examples/census/schema.toml``, SA occupation), l = 4. Target <= 0.06 s CPU.
2. The same table resampled with replacement (numpy seed 0, the draw of
   ``bench_mondrian.py``) to 10,000,000 rows, l = 4. Targets <= 8 s CPU and peak RSS
   <= 1 GB. Peak RSS is the child's ``ru_maxrss`` (read + encode + resample + Mondrian);
   ``rss_before_mb`` is the same before the first Mondrian run, so the difference is
   Mondrian's. The baseline takes ~30 s per run and is run ONCE (``--big-baseline-repeat``);
   ours five times.
3. Adult training split (``../shared/data/adult/adult.csv``, 30,162 rows, the 8 QIs of
   ``examples/adult/schema_training.toml``), k = 10: equality and time.

CPU time (``time.process_time``) and wall time, medians (one untimed warm-up run first,
except the 10M baseline). Run: ``python benchmarks/bench_mondrian_counting.py [--repeat 7]
[--big-repeat 5] [--big-baseline-repeat 1] [--big-rows 10000000]``. Writes
``benchmarks/results/mondrian_counting.csv`` and ``.png``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from _timing import RESULTS, SHARED_DATA
from kerckhoffs import Schema, Table
from kerckhoffs.algorithms.mondrian import algorithm as mondrian_module
from kerckhoffs.models import KAnonymity, LDiversity

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "baselines"))
from mondrian_v0 import mondrian_groups_sorted  # noqa: E402

EXAMPLES = HERE.parent / "examples"
TARGET_CPU = {"census l=4": 0.06, "census resampled l=4": 8.0}
TARGET_RSS_MB = {"census resampled l=4": 1024.0}


def census_table() -> Table:
    from kerckhoffs.datasets import load_census

    schema = Schema.from_toml(EXAMPLES / "census" / "schema.toml")
    return Table.encode(load_census(SHARED_DATA / "census"), schema)


def adult_table() -> Table:
    from kerckhoffs.datasets import load_adult_training

    schema = Schema.from_toml(EXAMPLES / "adult" / "schema_training.toml")
    return Table.encode(load_adult_training(SHARED_DATA / "adult" / "adult.csv"), schema)


def resampled(table: Table, rows: int, seed: int) -> Table:
    """``rows`` rows drawn with replacement (the draw of ``bench_mondrian.resampled``),
    written column by column so that the setup does not hold two copies of the QIs."""
    pick = np.random.default_rng(seed).integers(0, table.n, rows)
    qi = np.empty((rows, table.d), dtype=table.qi.dtype, order="F")
    for j in range(table.d):
        np.take(table.qi[:, j], pick, out=qi[:, j])
    return dataclasses.replace(table, qi=qi, sa=table.sa[pick], row_ids=None, other=None)


def child(setting: str, engine: str, repeat: int, warmup: int, rows: int, out: str) -> None:
    """One setting with one engine in this (child) process; prints one JSON object."""
    if engine == "sorted":
        mondrian_module.mondrian_groups = mondrian_groups_sorted  # type: ignore[assignment]
    if setting == "adult k=10":
        table, models = adult_table(), [KAnonymity(10)]
    else:
        table, models = census_table(), [LDiversity(4)]
        if setting == "census resampled l=4":
            table = resampled(table, rows, 0)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for _ in range(warmup):
        mondrian_module.mondrian(table, models)
    cpu, wall = [], []
    group = None
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        release = mondrian_module.mondrian(table, models)
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
        group = release.partition.group
        del release
    assert group is not None
    np.save(out, group)
    print(
        json.dumps(
            {
                "rows": table.n,
                "cpu": cpu,
                "wall": wall,
                "rss_before_mb": rss_before,
                "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "groups": int(group.max()) + 1,
            }
        )
    )


def run_child(
    setting: str, engine: str, repeat: int, warmup: int, rows: int, tmp: Path
) -> tuple[dict, np.ndarray]:
    out = tmp / f"{engine}.npy"
    cmd = [sys.executable, __file__, "--child", setting, engine, str(repeat), str(warmup)]
    proc = subprocess.run([*cmd, str(rows), str(out)], check=True, capture_output=True, text=True)
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    return res, np.load(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7, help="runs of the Census and Adult settings")
    ap.add_argument("--big-repeat", type=int, default=5, help="runs of ours on the big table")
    ap.add_argument("--big-baseline-repeat", type=int, default=1, help="baseline, big table")
    ap.add_argument("--big-rows", type=int, default=10_000_000)
    ap.add_argument("--plot-only", action="store_true", help="redraw the plot from the CSV")
    ap.add_argument("--child", nargs=6, metavar=("SETTING", "ENGINE", "REP", "WARM", "ROWS", "OUT"))
    args = ap.parse_args()
    if args.child:
        s, e, rep, warm, rows, out = args.child
        child(s, e, int(rep), int(warm), int(rows), out)
        return
    if args.plot_only:
        plot(pd.read_csv(RESULTS / "mondrian_counting.csv"))
        return
    plan = [
        ("census l=4", {"sorted": (args.repeat, 1), "counting": (args.repeat, 1)}),
        (
            "census resampled l=4",
            {"sorted": (args.big_baseline_repeat, 0), "counting": (args.big_repeat, 1)},
        ),
        ("adult k=10", {"sorted": (args.repeat, 1), "counting": (args.repeat, 1)}),
    ]
    out = []
    for setting, engines in plan:
        groups = {}
        with tempfile.TemporaryDirectory() as tmp:
            for engine, (rep, warm) in engines.items():
                res, groups[engine] = run_child(
                    setting, engine, rep, warm, args.big_rows, Path(tmp)
                )
                out.append(
                    {
                        "setting": setting,
                        "engine": engine,
                        "rows": res["rows"],
                        "runs": len(res["cpu"]),
                        "cpu_median_s": statistics.median(res["cpu"]),
                        "wall_median_s": statistics.median(res["wall"]),
                        "peak_rss_mb": res["peak_rss_mb"],
                        "rss_before_mb": res["rss_before_mb"],
                        "groups": res["groups"],
                        "target_cpu_s": TARGET_CPU.get(setting, np.nan),
                        "target_rss_mb": TARGET_RSS_MB.get(setting, np.nan),
                    }
                )
                r = out[-1]
                print(
                    f"{setting:22s} {engine:8s} {r['rows']:>10,} rows: "
                    f"CPU {r['cpu_median_s']:.3f} s"
                    f", wall {r['wall_median_s']:.3f} s (median of {r['runs']}), peak RSS "
                    f"{r['peak_rss_mb']:.0f} MB ({r['rss_before_mb']:.0f} MB before Mondrian), "
                    f"{r['groups']} groups",
                    flush=True,
                )
        same = bool(np.array_equal(groups["sorted"], groups["counting"]))
        assert same, f"{setting}: the counting engine's partition differs from the baseline's"
        for r in out[-2:]:
            r["identical_partition"] = same
        base, new = out[-2], out[-1]
        speedup = base["cpu_median_s"] / new["cpu_median_s"]
        print(
            f"{setting}: identical partitions; CPU x{speedup:.1f}"
            f", wall x{base['wall_median_s'] / new['wall_median_s']:.1f} faster",
            flush=True,
        )
    frame = pd.DataFrame(out)
    RESULTS.mkdir(exist_ok=True)
    frame.to_csv(RESULTS / "mondrian_counting.csv", index=False)
    plot(frame)
    print(frame.to_string(index=False))


def plot(frame: pd.DataFrame) -> None:
    """Four panels: CPU of each setting (baseline vs counting, target line) and the big
    table's peak RSS."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(14, 3.8))
    colors = {"sorted": "C1", "counting": "C0"}
    for ax, setting in zip(
        axes, ["census l=4", "census resampled l=4", "adult k=10"], strict=False
    ):
        sub = frame[frame["setting"] == setting]
        bars = ax.bar(sub["engine"], sub["cpu_median_s"], color=[colors[e] for e in sub["engine"]])
        for b, (_, r) in zip(bars, sub.iterrows(), strict=True):
            ax.annotate(
                f"{r['cpu_median_s']:.3g} s",
                (b.get_x() + b.get_width() / 2, b.get_height()),
                ha="center",
                va="bottom",
                fontsize=8,
            )
        target = sub["target_cpu_s"].iloc[0]
        if np.isfinite(target):
            ax.axhline(target, color="red", linestyle="--", linewidth=1, label=f"target {target} s")
            ax.legend(fontsize=7)
        ax.set_title(f"{setting}, {int(sub['rows'].iloc[0]):,} rows", fontsize=9)
        ax.set_ylabel("median CPU seconds")
    big = frame[frame["setting"] == "census resampled l=4"]
    ax = axes[3]
    ax.bar(big["engine"], big["peak_rss_mb"], color=[colors[e] for e in big["engine"]])
    ax.bar(big["engine"], big["rss_before_mb"], color="grey", alpha=0.5, label="before Mondrian")
    ax.axhline(1024, color="red", linestyle="--", linewidth=1, label="target 1 GB")
    ax.set_title("peak RSS of the child, big table", fontsize=9)
    ax.set_ylabel("MB")
    ax.legend(fontsize=7)
    fig.suptitle(
        "Mondrian by counting vs sorted orders (issue 15; identical partitions asserted)",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(RESULTS / "mondrian_counting.png", dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
