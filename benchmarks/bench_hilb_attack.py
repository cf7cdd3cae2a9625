"""Question: how fast is the Hilbert-order attack on Hilb (paper 000 Algorithm 7) on the
Census stand-in at l = 4 and l = 6, next to a literal O(m^2) transcription of Algorithm 7, and
how many tuples does it compromise (paper 000 Figure 9: 259,937 of 300,000 = 86.6 % at l = 6)?

Setting (paper 000 section 8.3.1): Census-Income rows with occupation != 0 (148,318),
QIs age, sex, education, marital_status, race, workclass, country, SA occupation; Hilb releases
at l = 2..6 (made once, not timed). Timed, medians of repeated runs:

- ``algorithm7``: the vulnerable groups and the union-rule compromised tuples (Hilbert index,
  sort, group order, line 5 for every group at once, skipped rows by interval logic);
- ``hilb_order_attack``: the same plus the per-tuple posteriors (the attack as the CLI runs it);
- the literal reference: Algorithm 7 line by line, one group per step, line 6 testing every
  remaining tuple against the group's Q_T range (numpy over rows inside each step, so
  O(groups x rows)), given the same Q_T order. Both must name the same vulnerable groups and
  the same compromised tuples (asserted).

Run: ``python benchmarks/bench_hilb_attack.py [--repeat 7] [--literal-repeat 1]``
Writes ``benchmarks/results/hilb_attack.csv`` and ``benchmarks/results/hilb_attack.png``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from _timing import RESULTS, SHARED_DATA, median_seconds
from kerckhoffs import Schema, Table
from kerckhoffs.algorithms.anatomy import sa_buckets
from kerckhoffs.algorithms.hilb import hilb, table_hilbert_index
from kerckhoffs.algorithms.hilbert_curve import hilbert_order
from kerckhoffs.attacks.hilb.order import algorithm7, hilb_order_attack
from kerckhoffs.models import LDiversity
from kerckhoffs.release import Release

SCHEMA = Path(__file__).resolve().parents[1] / "examples" / "census" / "schema.toml"
PAPER_SHARE_L6 = 259_937 / 300_000  # paper 000 section 8.3.1 (IPUMS Census, 300,000 rows)
TARGET_S = 1.0  # seconds: the project's target


def algorithm7_literal(release: Release, l: int) -> tuple[list[int], np.ndarray]:  # noqa: E741
    """Paper 000 Algorithm 7 as printed (spec asap.md 2.12's fixes: line 5 counts tuples and
    takes S_max over the published SA of the rows left; "Goto Line 14" terminates). One step
    per group; line 6 looks at every tuple of every other remaining group."""
    table = release.table
    n = table.n
    pos = np.empty(n, dtype=np.int64)
    pos[hilbert_order(index=table_hilbert_index(table, release.provenance.parameters["bits"]))] = (
        np.arange(n)
    )
    group = release.partition.group
    members = release.partition.groups()
    bucket = sa_buckets(table)[0]
    n_b = int(bucket.max()) + 1
    first = np.array([pos[g].min() for g in members])
    counts = np.bincount(bucket, minlength=n_b)  # SA histogram of the tuples left in G
    alive = np.ones(n, dtype=bool)
    left = n
    vulnerable: list[int] = []
    union = np.zeros(n, dtype=bool)
    for g1 in np.argsort(first).tolist():  # lines 2-4: groups by lowest Q_T
        rows1 = members[g1]
        if left - rows1.size < l * int(counts.max()):  # line 5
            break  # line 11: early termination
        lo, hi = pos[rows1].min(), pos[rows1].max()
        inside = alive & (pos >= lo) & (pos <= hi) & (group != g1)  # line 6, every tuple
        if inside.any() and rows1.size + 1 < 2 * l:  # line 7
            vulnerable.append(g1)
            union[rows1] = True
            union |= np.isin(group, np.unique(group[inside]))
        alive[rows1] = False  # line 13
        counts -= np.bincount(bucket[rows1], minlength=n_b)
        left -= rows1.size
    return vulnerable, union


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--literal-repeat", type=int, default=1)
    args = ap.parse_args()
    from kerckhoffs.datasets import load_census

    table = Table.encode(load_census(SHARED_DATA / "census"), Schema.from_toml(SCHEMA))
    rows = []
    for l in (2, 3, 4, 5, 6):  # noqa: E741
        release = hilb(table, [LDiversity(l)])
        result = hilb_order_attack(release)
        d = result.details
        row = {
            "l": l,
            "rows": table.n,
            "groups": release.partition.n_groups,
            "deterministic_groups": d["deterministic_groups"],
            "vulnerable_groups": d["vulnerable_groups"],
            "compromised_union": d["compromised_union"],
            "share_union": d["compromised_union"] / table.n,
            "breached": result.compromised,
            "share_breached": result.compromised / table.n,
            "pinned": d["pinned"],
        }
        if l in (4, 6):
            a7 = algorithm7(release)
            vulnerable, union = algorithm7_literal(release, l)
            assert sorted(vulnerable) == sorted(a7.vulnerable_groups.tolist())
            assert np.array_equal(union, a7.union)
            t7, _ = median_seconds(lambda r=release: algorithm7(r), args.repeat)
            ta, _ = median_seconds(lambda r=release: hilb_order_attack(r), args.repeat)
            tl, _ = median_seconds(
                lambda r=release, k=l: algorithm7_literal(r, k), args.literal_repeat, warmup=0
            )
            row |= {"algorithm7_s": t7, "attack_s": ta, "literal_s": tl, "speedup": tl / t7}
        rows.append(row)
        print(row)
    out = pd.DataFrame(rows)
    RESULTS.mkdir(exist_ok=True)
    out.to_csv(RESULTS / "hilb_attack.csv", index=False)
    plot(out)
    print(out.to_string(index=False))


def plot(df: pd.DataFrame) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.2))
    timed = df.dropna(subset=["algorithm7_s"])
    x = np.arange(len(timed))
    series = [
        ("algorithm7_s", "Algorithm 7 (ours, interval logic)"),
        ("attack_s", "attack with posteriors (ours)"),
        ("literal_s", "literal O(m^2) Algorithm 7"),
    ]
    for i, (col, label) in enumerate(series):
        vals = timed[col].to_numpy(dtype=float)
        ax.bar(x + (i - 1) * 0.27, vals, 0.27, label=label)
        for xi, v in zip(x, vals, strict=True):
            ax.text(xi + (i - 1) * 0.27, v * 1.1, f"{v:.2f}", ha="center", fontsize=7)
    ax.axhline(TARGET_S, color="red", linestyle="--", linewidth=1, label="issue 5 target (1 s)")
    ax.set_yscale("log")
    ax.set_ylim(top=float(timed.literal_s.max()) * 20)
    ax.set_xticks(x, [f"l = {int(v)}" for v in timed.l])
    ax.set_ylabel("median seconds (log)")
    ax.set_title("Census stand-in, 148,318 rows: time", fontsize=10)
    ax.legend(fontsize=7, loc="upper left")

    bx.plot(df.l, df.share_union * 100, "o-", label="union rule (spec 2.12, Figure 9's count)")
    bx.plot(df.l, df.share_breached * 100, "s--", label="posterior > 1/l (derived)")
    bx.plot([6], [PAPER_SHARE_L6 * 100], "r*", markersize=12, label="paper 000: 86.6 % at l = 6")
    for lv, s in zip(df.l, df.share_union, strict=True):
        bx.text(lv, s * 100 + 2, f"{s:.1%}", ha="center", fontsize=7)
    bx.set_xticks(df.l)
    bx.set_xlabel("l")
    bx.set_ylabel("% of tuples compromised")
    bx.set_ylim(0, 105)
    bx.set_title("Compromised tuples vs l (Figure 9)", fontsize=10)
    bx.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(RESULTS / "hilb_attack.png", dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
