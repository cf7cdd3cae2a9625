"""Question: how long does the query-workload relative error (spec asap.md 2.14) take for
10,000 queries, and does the fast evaluation give the straightforward per-query answers?

Settings, measured in one run (qd = 3, selectivity 5 %, 10,000 queries, seed 0, the
defaults of paper 000's Fig. 10):

1. Census stand-in (``../shared/data/census``, 148,318 rows with occupation != 0, the 7 QIs
   of ``examples/census/schema.toml``, SA occupation), Mondrian l = 4
   (``registry.get("mondrian").run(table, [LDiversity(4)])``).
2. The same table resampled with replacement (numpy seed 0) to 300,000 rows (the project's
   target: 10,000 queries over a 300,000-row release in under 5 s), Mondrian l = 4; and on
   the same 300,000 rows Anatomy l = 4 (bucketization estimator) and Mondrian++ l = 4 (tens of
   thousands of small groups with wide cells, the dearest case for generalization).

For each: ``Workload.draw`` (queries + ``Act`` on the original rows, zero answers redrawn) and
``estimate`` (our grouped summed-area / dense / sparse evaluation), medians of repeated runs;
then the straightforward reference (``reference_actual``: a boolean mask over the rows per
query; ``reference_estimate``: the spec's formula per query, vectorized over groups or rows
only) on the first ``--ref-queries`` queries, its time scaled to 10,000 queries, and the
largest difference between the two on those queries (``Act`` must be equal, ``Est`` equal up
to float rounding).

Run: ``python benchmarks/bench_query_error.py [--repeat 5] [--ref-queries 200]``. Writes
``benchmarks/results/query_error.csv`` and ``benchmarks/results/query_error.png``.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

import numpy as np
import pandas as pd

from _timing import RESULTS, SHARED_DATA, median_seconds
from kerckhoffs import Schema, Table
from kerckhoffs.algorithms import registry
from kerckhoffs.metrics import Workload, estimate, query_error
from kerckhoffs.metrics.query_error import reference_actual, reference_estimate
from kerckhoffs.models import LDiversity

HERE = Path(__file__).resolve().parent
CENSUS_SCHEMA = HERE.parent / "examples" / "census" / "schema.toml"
QUERIES, QD, SEL, SEED = 10_000, 3, 0.05, 0
TARGET_S = 5.0


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


def measure(
    label: str, table: Table, algorithm: str, repeat: int, ref_q: int
) -> tuple[list[dict], tuple[np.ndarray, np.ndarray]]:
    release = registry.get(algorithm).run(table, [LDiversity(4)], seed=SEED)
    holder: dict[str, Workload] = {}

    def draw() -> None:
        holder["w"] = Workload.draw(table, QUERIES, QD, SEL, SEED)

    draw_s, _ = median_seconds(draw, repeat)
    w = holder["w"]
    est_s, _ = median_seconds(lambda: estimate(release, w), repeat)
    est = estimate(release, w)
    res = query_error(release, w)
    sub = w.subset(slice(0, ref_q))
    t0 = time.perf_counter()
    ref_act = reference_actual(table, sub)
    ref_act_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    ref_est = reference_estimate(release, sub)
    ref_est_s = time.perf_counter() - t0
    scale = QUERIES / ref_q
    act_equal = bool(np.array_equal(ref_act, sub.actual))
    abs_diff = float(np.abs(est[:ref_q] - ref_est).max())
    rel_diff = float((np.abs(est[:ref_q] - ref_est) / np.maximum(np.abs(ref_est), 1e-300)).max())
    common = {
        "setting": label,
        "algorithm": algorithm,
        "scheme": release.scheme.value,
        "rows": table.n,
        "groups": release.partition.n_groups,
        "queries": QUERIES,
        "qd": QD,
        "selectivity": SEL,
        "drawn": w.drawn,
        "median_rel_error": res.median,
        "mean_rel_error": res.mean,
        "act_equal_on_sample": act_equal,
        "est_max_abs_diff": abs_diff,
        "est_max_rel_diff": rel_diff,
    }
    ours = {
        **common,
        "method": "kerckhoffs",
        "draw_s": draw_s,
        "estimate_s": est_s,
        "median_s": draw_s + est_s,
        "timed_queries": QUERIES,
    }
    ref = {
        **common,
        "method": "reference (per query)",
        "draw_s": ref_act_s * scale,
        "estimate_s": ref_est_s * scale,
        "median_s": (ref_act_s + ref_est_s) * scale,
        "timed_queries": ref_q,
    }
    print(
        f"{label}: {release.partition.n_groups:,} groups; ours draw {draw_s:.3f} s + estimate "
        f"{est_s:.3f} s = {draw_s + est_s:.3f} s; reference {ref['median_s']:.1f} s "
        f"(x{ref['median_s'] / (draw_s + est_s):.0f}); Act equal {act_equal}, Est max diff "
        f"{abs_diff:.2e} (rel {rel_diff:.1e}); rel. error median {res.median:.4f} mean "
        f"{res.mean:.4f}",
        flush=True,
    )
    return [ours, ref], (est[:ref_q], ref_est)


def plot(df: pd.DataFrame, pairs: dict[str, tuple[np.ndarray, np.ndarray]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4.4), gridspec_kw={"width_ratios": [3, 2]})
    labels = list(dict.fromkeys(df.setting))
    y = np.arange(len(labels))
    for i, (method, color) in enumerate(
        [("kerckhoffs", "tab:blue"), ("reference (per query)", "tab:orange")]
    ):
        sub = df[df.method == method].set_index("setting").reindex(labels)
        ys = y + (i - 0.5) * 0.38
        ax.barh(ys, sub.median_s, 0.36, color=color, label=method)
        for yy, v in zip(ys, sub.median_s, strict=True):
            ax.text(v * 1.1, yy, f"{v:.2f} s" if v < 10 else f"{v:.0f} s", va="center", fontsize=7)
    ax.axvline(TARGET_S, color="red", linestyle="--", linewidth=1, label="target 5 s")
    ax.set_xscale("log")
    ax.set_xlim(right=df.median_s.max() * 6)
    ax.set_yticks(y, labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("seconds for 10,000 queries (draw + Act + Est; reference scaled), log")
    ax.set_title("query-workload relative error, qd = 3, sel = 5 %", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    for label, (ours, ref) in pairs.items():
        ax2.scatter(ref, ours, s=6, label=label)
    hi = max(float(max(r.max(), o.max())) for o, r in pairs.values())
    ax2.plot([0, hi], [0, hi], color="grey", linewidth=0.8)
    ax2.set_xlabel("Est, per-query reference")
    ax2.set_ylabel("Est, kerckhoffs")
    ax2.set_title("identical estimates on the reference sample", fontsize=9)
    ax2.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(RESULTS / "query_error.png", dpi=120)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--ref-queries", type=int, default=200)
    args = parser.parse_args()
    census = census_table()
    big = resampled(census, 300_000, 0)
    rows: list[dict] = []
    pairs = {}
    for label, table, algorithm in [
        ("Census 148,318, Mondrian l=4", census, "mondrian"),
        ("Census 300,000, Mondrian l=4", big, "mondrian"),
        ("Census 300,000, Anatomy l=4", big, "anatomy"),
        ("Census 300,000, Mondrian++ l=4", big, "mondrian++"),
    ]:
        r, pair = measure(label, table, algorithm, args.repeat, args.ref_queries)
        rows += r
        pairs[label] = pair
    df = pd.DataFrame(rows)
    RESULTS.mkdir(exist_ok=True)
    df.to_csv(RESULTS / "query_error.csv", index=False)
    plot(df, pairs)


if __name__ == "__main__":
    main()
