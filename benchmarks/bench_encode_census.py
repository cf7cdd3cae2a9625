"""Question: how long does encoding Census-Income (299,285 rows) take? Target (issue 15): 40 ms.

Both sides start from the same DataFrame (``load_census(..., in_universe=False)``): ours is
``Table.encode`` with ``examples/census/schema.toml`` (7 QIs through their hierarchies + SA,
missing country as a category). Side by side in one run:

- ``kerckhoffs Table.encode``: today's encode, whose ``category`` missing-value path fills the
  arrow strings (``fillna``) and factorizes them;
- ``baseline (object cast)``: the same encode with the missing-value path of the previous
  release (cast the column to Python objects, then ``where``; 39% of the encode), kept here
  as :func:`baseline_fill`; the two tables are asserted identical (codes and domains);
- ``pandas astype(category)``: what a pandas user would write to get integer codes, with no
  hierarchy ordering, validation or missing-value policy.

CPU (``time.process_time``) and wall time, medians of repeated runs.
Run: ``python benchmarks/bench_encode_census.py [--repeat 11]``
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd

from _timing import SHARED_DATA, save
from kerckhoffs import Schema, Table
from kerckhoffs.data import table as table_module
from kerckhoffs.data.schema import MISSING_LABEL
from kerckhoffs.datasets import load_census

SCHEMA = Path(__file__).resolve().parents[1] / "examples" / "census" / "schema.toml"
TARGET_S = 0.040


def baseline_fill(s: pd.Series, na: np.ndarray, *, sorted_later: bool) -> pd.Series:
    """The missing-value path of ``Table.encode`` before issue 15: through Python objects."""
    return s.astype(object).where(~na, MISSING_LABEL)


@contextlib.contextmanager
def baseline_encode() -> Iterator[None]:
    """``Table.encode`` with the previous missing-value path, for the block."""
    ours = table_module._fill_missing
    table_module._fill_missing = baseline_fill
    try:
        yield
    finally:
        table_module._fill_missing = ours


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, float, list[float]]:
    """Median wall and CPU seconds of ``fn`` (one untimed warm-up) and the CPU runs."""
    fn()
    wall, cpu = [], []
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu), cpu


def same(a: Table, b: Table) -> bool:
    return (
        np.array_equal(a.qi, b.qi)
        and np.array_equal(a.sa, b.sa)
        and all(
            np.array_equal(x.values, y.values)
            for x, y in zip((*a.qi_columns, a.sa_column), (*b.qi_columns, b.sa_column), strict=True)
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=11)
    args = ap.parse_args()
    df = load_census(SHARED_DATA / "census", in_universe=False)
    schema = Schema.from_toml(SCHEMA)
    cols = [c.name for c in schema.quasi] + [schema.sensitive.name]
    with baseline_encode():
        old = Table.encode(df, schema)
    new = Table.encode(df, schema)
    assert same(old, new), "the encodings differ"
    runs: list[tuple[str, Callable[[], object]]] = [
        ("kerckhoffs Table.encode", lambda: Table.encode(df, schema)),
        ("baseline (object cast)", lambda: _baseline(df, schema)),
        ("pandas astype(category)", lambda: df[cols].astype("category")),
    ]
    rows = []
    for method, fn in runs:
        wall, cpu, cpu_runs = timed(fn, args.repeat)
        rows.append(
            {
                "method": method,
                "task": f"encode {len(df):,} rows",
                "rows": len(df),
                "median_s": wall,
                "median_cpu_s": cpu,
                "runs": len(cpu_runs),
            }
        )
    out = pd.DataFrame(rows)
    ours = out.loc[0, "median_cpu_s"]
    out["cpu_ratio_to_ours"] = out["median_cpu_s"] / ours
    save(
        out,
        "encode_census",
        f"Encoding Census-Income, {len(df):,} rows, 8 columns (CPU)",
        "task",
        value="median_cpu_s",
        limit=TARGET_S,
    )
    print(out.to_string(index=False))
    verdict = "met" if ours <= TARGET_S else "NOT met"
    print(f"identical tables; target {TARGET_S * 1e3:.0f} ms CPU: {verdict}")


def _baseline(df: pd.DataFrame, schema: Schema) -> Table:
    with baseline_encode():
        return Table.encode(df, schema)


if __name__ == "__main__":
    main()
