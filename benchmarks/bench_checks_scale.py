"""Question: how long does each privacy-model check take on a 300,000-row release with
10,000 groups? Target: every check under 50 ms.

The release: Census-Income resampled (seed 0) to 300,000 rows with the census example
schema, cut into 10,000 groups of 30 rows after sorting on the QIs (contiguous, like a
Mondrian leaf order). Each check is timed from scratch: the per-group histogram
(one bincount) plus the model. The reference computes the same histogram with pandas
``groupby([group, sa]).size().unstack()``, the usual DataFrame way. Medians of repeated runs.

Run: ``python benchmarks/bench_checks_scale.py [--repeat 21]``
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from _timing import SHARED_DATA, median_seconds, save
from kerckhoffs import Partition, Release, Schema, Table
from kerckhoffs.models import parse_model

SCHEMA = Path(__file__).resolve().parents[1] / "examples" / "census" / "schema.toml"
MODELS = [
    "k=10",
    "l=3",
    "distinct-l=3",
    "entropy-l=2",
    "recursive-cl=3,3",
    "t=0.3",
    "alpha-k=0.5,10",
    "m=3",
]
N, GROUPS = 300_000, 10_000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=21)
    args = ap.parse_args()
    from kerckhoffs.datasets import load_census

    base = load_census(SHARED_DATA / "census")
    df = base.sample(N, replace=True, random_state=0).reset_index(drop=True)
    table = Table.encode(df, Schema.from_toml(SCHEMA))
    order = np.lexsort(table.qi.T[::-1])
    group = np.empty(N, dtype=np.int32)
    group[order] = np.arange(N) // (N // GROUPS)
    partition = Partition(group)
    assert partition.n_groups == GROUPS
    rows = []
    for spec in MODELS:
        model = parse_model(spec)

        def run(model=model) -> None:  # type: ignore[no-untyped-def]
            Release(table, partition).check([model])

        t, runs = median_seconds(run, args.repeat)
        rows.append(
            {
                "method": "kerckhoffs (histogram + model)",
                "check": spec,
                "rows": N,
                "groups": GROUPS,
                "median_s": t,
                "runs": len(runs),
            }
        )
    frame = pd.DataFrame({"group": group, "sa": table.sa})
    t, runs = median_seconds(
        lambda: frame.groupby(["group", "sa"]).size().unstack(fill_value=0), args.repeat
    )
    rows.append(
        {
            "method": "pandas groupby histogram only",
            "check": "histogram",
            "rows": N,
            "groups": GROUPS,
            "median_s": t,
            "runs": len(runs),
        }
    )
    t, runs = median_seconds(lambda: Release(table, partition).histogram().counts, args.repeat)
    rows.append(
        {
            "method": "kerckhoffs (histogram + model)",
            "check": "histogram",
            "rows": N,
            "groups": GROUPS,
            "median_s": t,
            "runs": len(runs),
        }
    )
    out = pd.DataFrame(rows)
    save(
        out,
        "checks_scale",
        "Checks on a 300,000-row release with 10,000 groups",
        "check",
        limit=0.05,
    )
    print(out.to_string(index=False))


if __name__ == "__main__":
    main()
