"""Question: how long does full-domain generalization take on Adult (45,222 rows, 8 QIs, the
example hierarchies, k = 5), against a naive scan of the whole lattice? Target: under 5 s.

All methods share one node evaluation (a frequency set mapped to the node's levels, grouped,
one bincount, the models; :mod:`kerckhoffs.algorithms.lattice`) and differ only in which nodes
they evaluate: the naive scan evaluates every node of the 15,360-node lattice; Incognito-style
bottom-up search with predictive tagging skips the nodes above a satisfying one; Samarati's
binary search on height evaluates whole heights; the default two-way search adds a top-down
frontier that skips the nodes below a violating one. Each method's time is the search from
the encoded table; the default is also timed end to end as ``lattice()`` (search plus the
release). Medians of repeated runs; nodes evaluated and the chosen node are in the CSV.

With ``--arx``: the four settings of the ARX comparison, encode + search from a DataFrame in
memory (the rows already parsed, as ARX's side is timed from rows in memory): (a) ARX's Adult
(the 30,162-row training split, its hierarchies, 8 QIs in its order, SA salary-class) with k = 5,
(b) the same with distinct l = 2, (c) Census-Income (all 299,285 rows, ``examples/census``, 7 QIs,
SA occupation) with k = 5, (d) the same with distinct l = 2. Side by side in one run, interleaved
run by run: today's ``Table.encode`` + ``search_lattice`` and the code before this speed work
(``baselines/lattice_v1``: the evaluator and search of main at 615b350, encode with its thread
threshold); chosen and minimal nodes asserted equal. CPU (``time.process_time``, threads
included) medians. Writes ``benchmarks/results/lattice_memory.csv`` and ``.png``.

Run: ``python benchmarks/bench_lattice.py [--repeat 5] [--slow-repeat 3]``;
``python benchmarks/bench_lattice.py --arx [--repeat 9]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import pandas as pd

from _timing import ADULT_ARX_QIS, SHARED_DATA, adult_arx_schema, median_seconds, save
from baselines import lattice_v1
from kerckhoffs import Schema, Table
from kerckhoffs.algorithms.lattice import Lattice, lattice, search_lattice
from kerckhoffs.data import table as table_module
from kerckhoffs.datasets import load_adult, load_adult_training, load_census
from kerckhoffs.models import DistinctLDiversity, KAnonymity

SCHEMA = Path(__file__).resolve().parents[1] / "examples" / "adult" / "schema.toml"
TARGET_S = 5.0
METHODS = [
    ("naive scan (reference)", "naive", True),
    ("Incognito bottom-up", "incognito", True),
    ("Samarati binary search", "samarati", True),
    ("two-way (default)", "two-way", False),
]


CENSUS_SCHEMA = SCHEMA.parents[1] / "census" / "schema.toml"


def arx_settings() -> list[tuple[str, pd.DataFrame, Schema, list]]:
    """The four in-memory settings of the ARX comparison (module docstring)."""
    adult_dir = SHARED_DATA / "adult"
    adult = load_adult_training(adult_dir)
    adult_schema = adult_arx_schema(ADULT_ARX_QIS, "salary-class")
    census = load_census(SHARED_DATA / "census", in_universe=False)
    census_schema = Schema.from_toml(CENSUS_SCHEMA)
    return [
        ("(a) Adult k=5", adult, adult_schema, [KAnonymity(5)]),
        (
            "(b) Adult k=5, distinct l=2",
            adult,
            adult_schema,
            [KAnonymity(5), DistinctLDiversity(2)],
        ),
        ("(c) Census k=5", census, census_schema, [KAnonymity(5)]),
        (
            "(d) Census k=5, distinct l=2",
            census,
            census_schema,
            [KAnonymity(5), DistinctLDiversity(2)],
        ),
    ]


def in_memory(repeat: int) -> None:
    """Encode + search from a DataFrame, today's code against ``baselines/lattice_v1``."""

    def ours(df: pd.DataFrame, schema: Schema, models: list) -> object:
        return search_lattice(Table.encode(df, schema), models)

    def before(df: pd.DataFrame, schema: Schema, models: list) -> object:
        now = table_module.PARALLEL_CELLS
        table_module.PARALLEL_CELLS = lattice_v1.ENCODE_PARALLEL_CELLS
        try:
            return lattice_v1.search_lattice(Table.encode(df, schema), models)
        finally:
            table_module.PARALLEL_CELLS = now

    rows = []
    for label, df, schema, models in arx_settings():
        new, old = ours(df, schema, models), before(df, schema, models)
        assert new.chosen == old.chosen and new.minimal == old.minimal, label
        cpu: dict[str, list[float]] = {"before": [], "ours": []}
        for _ in range(repeat):
            for side, fn in (("before", before), ("ours", ours)):
                c0 = time.process_time()
                fn(df, schema, models)
                cpu[side].append(time.process_time() - c0)
        for side in ("before", "ours"):
            rows.append(
                {
                    "setting": label,
                    "method": "before (main at 615b350)" if side == "before" else "now",
                    "rows": len(df),
                    "nodes_evaluated": new.evaluated,
                    "chosen": "".join(map(str, new.chosen)),
                    "cpu_median_s": round(statistics.median(cpu[side]), 5),
                    "runs": repeat,
                    "load_1min": round(os.getloadavg()[0], 2),
                }
            )
        ratio = rows[-2]["cpu_median_s"] / rows[-1]["cpu_median_s"]
        print(
            f"{label}: before {rows[-2]['cpu_median_s'] * 1e3:.1f} ms, now "
            f"{rows[-1]['cpu_median_s'] * 1e3:.1f} ms CPU ({ratio:.2f}x); chosen "
            f"{rows[-1]['chosen']}",
            flush=True,
        )
    out = pd.DataFrame(rows)
    save(
        out,
        "lattice_memory",
        "Lattice encode + search from a DataFrame in memory: CPU median",
        "setting",
        value="cpu_median_s",
        group="method",
    )
    print(out.to_string(index=False))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5, help="runs of the fast methods")
    ap.add_argument("--slow-repeat", type=int, default=3, help="runs of the slow methods")
    ap.add_argument("--arx", action="store_true", help="the ARX comparison's settings instead")
    args = ap.parse_args()
    if args.arx:
        in_memory(max(args.repeat, 5))
        return
    t0 = time.perf_counter()
    table = Table.encode(load_adult(SHARED_DATA / "adult"), Schema.from_toml(SCHEMA))
    load_s = time.perf_counter() - t0
    models = [KAnonymity(5)]
    size = Lattice.of(table).size
    print(f"Adult: {table.n:,} rows, {table.d} QIs, {size:,} lattice nodes; load {load_s:.2f} s")
    rows = []
    chosen = None
    for label, strategy, slow in METHODS:
        found = search_lattice(table, models, strategy=strategy)
        chosen = chosen or found.chosen
        assert found.chosen == chosen, (strategy, found.chosen, chosen)
        repeat = args.slow_repeat if slow else args.repeat
        t, runs = median_seconds(
            lambda s=strategy: search_lattice(table, models, strategy=s),
            repeat,
            warmup=0 if slow else 1,
        )
        rows.append(
            {
                "method": f"{label}: {found.evaluated:,} nodes",
                "strategy": strategy,
                "setting": "Adult, k=5, 8 QIs",
                "rows": table.n,
                "lattice_nodes": size,
                "nodes_evaluated": found.evaluated,
                "minimal_nodes": len(found.minimal),
                "chosen": "".join(map(str, found.chosen)),
                "information_loss": round(found.losses[found.chosen], 6),
                "median_s": t,
                "runs": len(runs),
            }
        )
        print(rows[-1])
    found = search_lattice(table, models)
    t, runs = median_seconds(lambda: lattice(table, models), args.repeat)
    rows.append(
        {
            "method": f"lattice() end to end: {found.evaluated:,} nodes",
            "strategy": "two-way",
            "setting": "Adult, k=5, 8 QIs",
            "rows": table.n,
            "lattice_nodes": size,
            "nodes_evaluated": found.evaluated,
            "minimal_nodes": len(found.minimal),
            "chosen": "".join(map(str, found.chosen)),
            "information_loss": round(found.losses[found.chosen], 6),
            "median_s": t,
            "runs": len(runs),
        }
    )
    print(rows[-1])
    out = pd.DataFrame(rows)
    save(
        out,
        "lattice",
        f"Full-domain generalization, Adult {table.n:,} rows, k=5: {size:,}-node lattice",
        "method",
        group="setting",
        limit=TARGET_S,
    )
    print(out.drop(columns=["setting", "rows"]).to_string(index=False))


if __name__ == "__main__":
    main()
