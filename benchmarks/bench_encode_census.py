"""Question: how long does encoding Census-Income (299,285 rows) take? Target: under 1 s.

Both sides start from the same DataFrame (``load_census(..., in_universe=False)``): ours is
``Table.encode`` with ``examples/census/schema.toml`` (7 QIs through their hierarchies + SA,
missing country as a category). The reference is what a pandas user would write to get
integer codes: ``astype("category")`` on the same 8 columns, which does no hierarchy ordering,
no validation and no missing-value policy. Medians of repeated runs.

Run: ``python benchmarks/bench_encode_census.py [--repeat 11]``
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from _timing import SHARED_DATA, median_seconds, save
from kerckhoffs import Schema, Table
from kerckhoffs.datasets import load_census

SCHEMA = Path(__file__).resolve().parents[1] / "examples" / "census" / "schema.toml"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=11)
    args = ap.parse_args()
    df = load_census(SHARED_DATA / "census", in_universe=False)
    schema = Schema.from_toml(SCHEMA)
    cols = [c.name for c in schema.quasi] + [schema.sensitive.name]
    rows = []
    ours, runs = median_seconds(lambda: Table.encode(df, schema), args.repeat)
    rows.append(
        {
            "method": "kerckhoffs Table.encode",
            "task": "encode 299,285 rows",
            "rows": len(df),
            "median_s": ours,
            "runs": len(runs),
        }
    )
    ref, runs = median_seconds(lambda: df[cols].astype("category"), args.repeat)
    rows.append(
        {
            "method": "pandas astype(category)",
            "task": "encode 299,285 rows",
            "rows": len(df),
            "median_s": ref,
            "runs": len(runs),
        }
    )
    out = pd.DataFrame(rows)
    out["ratio_to_ours"] = out["median_s"] / ours
    save(out, "encode_census", "Encoding Census-Income, 299,285 rows, 8 columns", "task", limit=1.0)
    print(out.to_string(index=False))


if __name__ == "__main__":
    main()
