"""Question: how fast is our Mondrian against the project's targets (README table), and against
anonypyx's Mondrian?

Three settings, measured in one run:

1. Census stand-in (``../shared/data/census``, the 148,318 rows with occupation != 0, 7 QIs
   of ``examples/census/schema.toml``, SA occupation), l = 4. Target: under 1 s.
2. The same table resampled with replacement (numpy seed 0) to 3,000,000 rows, l = 4.
   Targets: under 30 s and under 4 GB. Run in a child process so that its memory is its own:
   the peak resident set of the whole child (``resource.getrusage``: read + encode +
   resample + Mondrian) and the peak of numpy/Python allocations during Mondrian alone
   (``tracemalloc``, one extra run after the timed ones). The resample draws rows of the
   encoded table (encoding 3,000,000 rows through pandas is not what is measured).
3. The Adult training split (``../shared/data/adult/adult.csv``, 30,162 rows, the 8 QIs of
   ``examples/adult/schema_training.toml``), k = 10: ours with ``categorical_cuts`` values
   (the default), median (the paper reproductions' cut) and hierarchy, interleaved, vs
   anonypyx (PyPI, in its own venv ``benchmarks/.venvs/anonypyx`` through
   ``peers/anonypyx_runner.py``), CPU seconds of the partitioning only on both sides
   (anonypyx's ``Mondrian.partition``; our ``mondrian()``, which also builds the Release).
   Target: the default at least 500x faster than anonypyx with tool-neutral NCP and
   discernibility / n at or below its (:func:`neutral_utility`: neither tool's own
   generalization enters). Our hierarchy-based NCP (:mod:`kerckhoffs.metrics.ncp`) is
   recorded too (column ``ncp``).

Medians of repeated runs. Run: ``python benchmarks/bench_mondrian.py [--repeat 7]
[--big-repeat 3] [--peer-repeat 1] [--skip-peer] [--adult-only]``. Writes
``benchmarks/results/mondrian.csv`` and ``benchmarks/results/mondrian.png``.
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
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

from _timing import ADULT_ARX_QIS, RESULTS, SHARED_DATA, median_seconds
from kerckhoffs import Partition, Release, Schema, Table
from kerckhoffs.algorithms.mondrian import mondrian
from kerckhoffs.data.schema import Kind
from kerckhoffs.metrics import ncp
from kerckhoffs.models import KAnonymity, LDiversity

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "peers"))
from venv import ensure_venv  # noqa: E402

EXAMPLES = HERE.parent / "examples"
CENSUS_SCHEMA = EXAMPLES / "census" / "schema.toml"
ADULT_SCHEMA = EXAMPLES / "adult" / "schema_training.toml"
ADULT_CSV = SHARED_DATA / "adult" / "adult.csv"
ADULT_QIS = ADULT_ARX_QIS
BIG_ROWS = 3_000_000
L, K = 4, 10


def census_table() -> Table:
    from kerckhoffs.datasets import load_census

    return Table.encode(load_census(SHARED_DATA / "census"), Schema.from_toml(CENSUS_SCHEMA))


def resampled(table: Table, rows: int, seed: int) -> Table:
    """``rows`` rows drawn with replacement from the encoded ``table`` (numpy ``seed``)."""
    pick = np.random.default_rng(seed).integers(0, table.n, rows)
    return dataclasses.replace(
        table,
        qi=np.asfortranarray(table.qi[pick]),
        sa=table.sa[pick],
        row_ids=None,
        other=None,
    )


def child_big(rows: int, seed: int, repeat: int) -> None:
    """Setting 2 in this (child) process; prints one JSON object."""
    table = census_table()
    big = resampled(table, rows, seed)
    del table
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    runs = []
    release = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        release = mondrian(big, [LDiversity(L)])
        runs.append(time.perf_counter() - t0)
    assert release is not None
    ok = release.check([LDiversity(L)])[0].satisfied
    groups = release.partition.n_groups
    del release
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    tracemalloc.start()
    mondrian(big, [LDiversity(L)])
    _, traced_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(
        json.dumps(
            {
                "rows": big.n,
                "runs": runs,
                "median": statistics.median(runs),
                "rss_before_mb": rss_before,
                "peak_rss_mb": peak_rss,
                "tracemalloc_peak_mb": traced_peak / 2**20,
                "groups": groups,
                "l_diverse": ok,
            }
        )
    )


def neutral_utility(table: Table, group: np.ndarray) -> tuple[float, float]:
    """Tool-neutral utility of a partition: NCP (numeric QI: group range / domain range;
    categorical: distinct values in the group / distinct values in the table, 0 for a single
    value; averaged over QIs and rows) and discernibility / n (sum of squared group sizes / n).
    Neither tool's own generalization enters (anonypyx publishes value sets, we publish
    hierarchy nodes)."""
    group = np.asarray(group, dtype=np.int64)
    m = int(group.max()) + 1
    sizes = np.bincount(group, minlength=m).astype(np.float64)
    total = 0.0
    for j, col in enumerate(table.qi_columns):
        code = table.qi[:, j].astype(np.int64)
        if col.kind == Kind.NUMERIC:
            x = np.asarray(col.values, dtype=np.float64)[code]
            lo, hi = np.full(m, np.inf), np.full(m, -np.inf)
            np.minimum.at(lo, group, x)
            np.maximum.at(hi, group, x)
            pen = (hi - lo) / (x.max() - x.min())
        else:
            width = int(code.max()) + 1
            pairs = np.unique(group * width + code)
            distinct = np.bincount(pairs // width, minlength=m)
            pen = np.where(distinct == 1, 0.0, distinct / np.unique(code).size)
        total += float((pen * sizes).sum())
    return total / (table.n * table.d), float((sizes**2).sum()) / table.n


def row(
    task: str, method: str, rows: int, param: str, median_s: float, runs: int, **kw: object
) -> dict[str, object]:
    return {
        "task": task,
        "method": method,
        "rows": rows,
        "param": param,
        "median_s": median_s,
        "runs": runs,
        **kw,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7, help="runs of settings 1 and 3 (ours)")
    ap.add_argument("--big-repeat", type=int, default=3, help="runs of setting 2")
    ap.add_argument("--peer-repeat", type=int, default=1, help="runs of anonypyx")
    ap.add_argument("--skip-peer", action="store_true")
    ap.add_argument(
        "--adult-only",
        action="store_true",
        help="run setting 3 only (settings 1-2 kept from the CSV)",
    )
    ap.add_argument("--plot-only", action="store_true", help="redraw the plot from the CSV")
    ap.add_argument("--child-big", nargs=3, type=int, metavar=("ROWS", "SEED", "REPEAT"))
    args = ap.parse_args()
    if args.child_big:
        child_big(*args.child_big)
        return
    if args.plot_only:
        plot(pd.read_csv(RESULTS / "mondrian.csv"))
        return
    if args.adult_only:
        out = [r for r in pd.read_csv(RESULTS / "mondrian.csv").to_dict("records")
               if r["task"] != "adult k=10"]  # fmt: skip
    else:
        out = settings_1_2(args)
    adult_vs_anonypyx(args, out)
    frame = pd.DataFrame(out)
    RESULTS.mkdir(exist_ok=True)
    frame.to_csv(RESULTS / "mondrian.csv", index=False)
    plot(frame)
    print(frame.to_string(index=False))


def settings_1_2(args: argparse.Namespace) -> list[dict[str, object]]:
    """Settings 1 (census, l = 4) and 2 (3,000,000 rows, in a child process)."""
    out: list[dict[str, object]] = []
    # 1. census, l = 4
    census = census_table()
    t, runs = median_seconds(lambda: mondrian(census, [LDiversity(L)]), args.repeat)
    rel = mondrian(census, [LDiversity(L)])
    assert rel.check([LDiversity(L)])[0].satisfied
    out.append(
        row(
            "census l=4",
            "kerckhoffs",
            census.n,
            f"l={L}",
            t,
            len(runs),
            target_s=1.0,
            groups=rel.partition.n_groups,
            ncp=ncp(rel),
        )
    )
    print(f"[1] census l={L}: {t:.3f} s, {rel.partition.n_groups} groups", flush=True)

    # 2. 3,000,000 rows in a child process
    proc = subprocess.run(
        [sys.executable, __file__, "--child-big", str(BIG_ROWS), "0", str(args.big_repeat)],
        check=True,
        capture_output=True,
        text=True,
    )
    big = json.loads(proc.stdout.strip().splitlines()[-1])
    assert big["l_diverse"]
    out.append(
        row(
            "census resampled l=4",
            "kerckhoffs",
            big["rows"],
            f"l={L}",
            big["median"],
            len(big["runs"]),
            target_s=30.0,
            groups=big["groups"],
            peak_rss_mb=big["peak_rss_mb"],
            rss_before_mb=big["rss_before_mb"],
            tracemalloc_peak_mb=big["tracemalloc_peak_mb"],
            target_mb=4096,
        )
    )
    print(
        f"[2] {big['rows']:,} rows l={L}: {big['median']:.2f} s; peak RSS of the child "
        f"{big['peak_rss_mb']:.0f} MB ({big['rss_before_mb']:.0f} MB before Mondrian), "
        f"tracemalloc peak in Mondrian {big['tracemalloc_peak_mb']:.0f} MB",
        flush=True,
    )

    return out


def adult_vs_anonypyx(args: argparse.Namespace, out: list[dict[str, object]]) -> None:
    """Setting 3: Adult k = 10, ours (three categorical cuts, interleaved) vs anonypyx, CPU
    seconds, with the tool-neutral utility of every partition (:func:`neutral_utility`)."""
    # 3. Adult k = 10, ours (three categorical cuts) vs anonypyx, CPU seconds
    from kerckhoffs.datasets import load_adult_training

    adult = Table.encode(load_adult_training(ADULT_CSV), Schema.from_toml(ADULT_SCHEMA))
    variants = {"values": "kerckhoffs (default)", "median": "kerckhoffs median cuts",
                "hierarchy": "kerckhoffs hierarchy cuts"}  # fmt: skip
    cpu: dict[str, list[float]] = {v: [] for v in variants}
    for v in variants:  # warm-up
        mondrian(adult, [KAnonymity(K)], categorical_cuts=v)
    for _ in range(args.repeat):  # interleaved
        for v in variants:
            c0 = time.process_time()
            mondrian(adult, [KAnonymity(K)], categorical_cuts=v)
            cpu[v].append(time.process_time() - c0)
    ours_default = statistics.median(cpu["values"])
    for v, method in variants.items():
        rel = mondrian(adult, [KAnonymity(K)], categorical_cuts=v)
        assert rel.check([KAnonymity(K)])[0].satisfied
        t = statistics.median(cpu[v])
        neutral_ncp, disc = neutral_utility(adult, rel.partition.group)
        out.append(
            row(
                "adult k=10", method, adult.n, f"k={K}", t, len(cpu[v]),
                groups=rel.partition.n_groups, ncp=ncp(rel), ncp_neutral=neutral_ncp,
                discernibility_n=disc, clock="cpu",
            )
        )  # fmt: skip
        print(
            f"[3] adult k={K} {method}: {t * 1000:.1f} ms CPU, neutral NCP {neutral_ncp:.4f}, "
            f"discernibility/n {disc:.2f}, {rel.partition.n_groups} groups",
            flush=True,
        )
    if not args.skip_peer:
        py = ensure_venv("anonypyx", ["anonypyx"])
        with tempfile.TemporaryDirectory() as tmp:
            part_file = Path(tmp) / "anonypyx_groups.npy"
            proc = subprocess.run(
                [
                    str(py),
                    str(HERE / "peers" / "anonypyx_runner.py"),
                    str(ADULT_CSV),
                    ";",
                    ",".join(ADULT_QIS),
                    str(K),
                    str(part_file),
                    "--numeric",
                    "age",
                    "--repeat",
                    str(args.peer_repeat),
                ],
                check=True,
                capture_output=True,
                text=True,
            )
            peer = json.loads(proc.stdout.strip().splitlines()[-1])
            theirs = Release(adult, Partition(np.load(part_file)))
        assert theirs.check([KAnonymity(K)])[0].satisfied
        peer_ncp, peer_disc = neutral_utility(adult, theirs.partition.group)
        peer_cpu = statistics.median(peer["cpu_seconds"])
        out.append(
            row(
                "adult k=10", f"anonypyx {peer['anonypyx_version']}", peer["rows"], f"k={K}",
                peer_cpu, len(peer["cpu_seconds"]), groups=peer["groups"], ncp=ncp(theirs),
                ncp_neutral=peer_ncp, discernibility_n=peer_disc, clock="cpu",
            )
        )  # fmt: skip
        print(
            f"[3] adult k={K} anonypyx {peer['anonypyx_version']}: {peer_cpu:.2f} s CPU, "
            f"neutral NCP {peer_ncp:.4f}, discernibility/n {peer_disc:.2f}; our default "
            f"(values cuts) is "
            f"x{peer_cpu / ours_default:.0f} faster (target 500), hierarchy cuts "
            f"x{peer_cpu / statistics.median(cpu['hierarchy']):.0f}",
            flush=True,
        )


def plot(frame: pd.DataFrame) -> None:
    """Three panels: census time, 3M time and memory, Adult time (log) and NCP vs anonypyx."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(13, 3.8))
    census = frame[frame["task"] == "census l=4"].iloc[0]
    ax = axes[0]
    ax.bar(["kerckhoffs"], [census["median_s"]], color="C0")
    ax.axhline(1.0, color="red", linestyle="--", linewidth=1, label="target 1 s")
    ax.set_title(f"Census {int(census['rows']):,} rows, l={L}", fontsize=9)
    ax.set_ylabel("median seconds")
    ax.legend(fontsize=7)
    big = frame[frame["task"] == "census resampled l=4"].iloc[0]
    ax = axes[1]
    ax.bar(["kerckhoffs"], [big["median_s"]], color="C0")
    ax.axhline(30.0, color="red", linestyle="--", linewidth=1, label="target 30 s")
    ax.set_title(f"Census resampled {int(big['rows']):,} rows, l={L}", fontsize=9)
    ax.set_ylabel("median seconds")
    ax.legend(fontsize=7)
    ax = axes[2]
    ax.bar(
        ["peak RSS\n(whole child)", "tracemalloc\n(Mondrian)"],
        [big["peak_rss_mb"], big["tracemalloc_peak_mb"]],
        color="C2",
    )
    ax.axhline(4096, color="red", linestyle="--", linewidth=1, label="target 4 GB")
    ax.set_title("memory, 3M rows", fontsize=9)
    ax.set_ylabel("MB")
    ax.legend(fontsize=7)
    adult = frame[frame["task"] == "adult k=10"]
    ax = axes[3]
    labels = [
        m.replace("kerckhoffs (default)", "values (default)").replace("kerckhoffs ", "")
        for m in adult["method"]
    ]
    labels = [m.replace(" ", "\n", 1) for m in labels]
    bars = ax.bar(labels, adult["median_s"], color=["C0", "C9", "C2", "C1"][: len(adult)])
    ax.set_yscale("log")
    ax.set_ylim(top=float(adult["median_s"].max()) * 20)
    for b, (_, r) in zip(bars, adult.iterrows(), strict=True):
        ax.annotate(
            f"{r['median_s']:.3g} s\nNCP {r['ncp_neutral']:.3f}\nDM/n {r['discernibility_n']:.1f}",
            (b.get_x() + b.get_width() / 2, b.get_height()),
            ha="center",
            va="bottom",
            fontsize=7,
        )
    ax.set_title(f"Adult {int(adult['rows'].iloc[0]):,} rows, k={K}", fontsize=9)
    ax.set_ylabel("median CPU seconds (log)")
    ax.tick_params(axis="x", labelsize=6)
    fig.suptitle(
        "Mondrian (Adult: tool-neutral NCP and discernibility / n; anonypyx in the same run)",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(RESULTS / "mondrian.png", dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
