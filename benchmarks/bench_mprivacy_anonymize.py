"""Question: how fast are the m-privacy anonymizers of paper 003 (provider-aware, Algorithm 2,
and the Mondrian baseline) at the paper's anonymization setting (Table II: m = 3, k = 30,
distinct l = 4, 10 providers)? Targets: under 1 s each on Adult, under 5 s each on the Census
stand-in.

Settings:

1. Adult (``../shared/data/adult``, adult.data + adult.test without missing values, 45,222
   rows), QIs of spec mprivacy.md A23 (age, workclass, education, marital-status, race, sex,
   native-country, hours-per-week; categorical codes in lexicographic order, spec R17), SA
   occupation (14 values), 10 providers with Exp(1) weights (spec R24, seed 0).
2. Census stand-in (``../shared/data/census``, the 148,318 rows with occupation != 0, half of
   Census-Income, 7 QIs of ``examples/census/schema.toml``, SA occupation, 46 codes),
   20 providers with Exp(1) weights (seed 0).

Both algorithms run with the default exact vectorized verifier, through the in-process
provider interface (:class:`kerckhoffs.mprivacy.providers.LocalProviders`), from the encoded
table to the Release. CPU and wall time, medians of ``--repeat`` runs (default 3) after one
warm-up; the ``stats`` of the last run give the time per phase, groups, checks and messages.

Run: ``python benchmarks/bench_mprivacy_anonymize.py [--repeat 3]``. Writes
``benchmarks/results/mprivacy_anonymize.csv`` and ``.png``.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from _timing import RESULTS, SHARED_DATA
from kerckhoffs import Schema, Table
from kerckhoffs.algorithms.mprivacy_anonymize import mondrian_mprivacy, provider_aware
from kerckhoffs.data.datasets import load_adult, load_census
from kerckhoffs.data.schema import Column, Role
from kerckhoffs.models import DistinctLDiversity, KAnonymity, MPrivacy, combine_m_privacy

HERE = Path(__file__).resolve().parent
CENSUS_SCHEMA = HERE.parent / "examples" / "census" / "schema.toml"
ADULT_QIS = [
    "age",
    "workclass",
    "education",
    "marital-status",
    "race",
    "sex",
    "native-country",
    "hours-per-week",
]
M, K, L = 3, 30, 4
TARGET = {"adult": 1.0, "census": 5.0}


def adult_table() -> Table:
    df = load_adult(SHARED_DATA / "adult", providers=10, provider_split="exponential", seed=0)
    cols: dict[str, dict[str, str]] = {
        q: {"role": "quasi", "kind": "numeric" if q in ("age", "hours-per-week") else "categorical"}
        for q in ADULT_QIS
    }
    cols["occupation"] = {"role": "sensitive", "kind": "categorical"}
    cols["provider"] = {"role": "provider"}
    return Table.encode(df[list(cols)], Schema.from_dict({"columns": cols}))


def census_table() -> Table:
    df = load_census(SHARED_DATA / "census", providers=20, provider_split="exponential", seed=0)
    raw = Schema.from_toml(CENSUS_SCHEMA)
    schema = dataclasses.replace(
        raw, columns=(*raw.columns, Column(name="provider", role=Role.PROVIDER))
    )
    return Table.encode(df, schema)


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, float, list[float]]:
    fn()
    wall, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu), wall


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    models = combine_m_privacy([KAnonymity(K), DistinctLDiversity(L), MPrivacy(M)])
    rows = []
    for data, make in (("adult", adult_table), ("census", census_table)):
        table = make()
        assert table.provider_values is not None
        for name, fn in (
            ("provider-aware", provider_aware),
            ("mondrian-mprivacy", mondrian_mprivacy),
        ):
            stats: dict[str, Any] = {}
            wall, cpu, runs = timed(
                lambda fn=fn, s=stats, t=table: fn(t, models, stats=s), args.repeat
            )
            release = fn(table, models)
            assert all(r.satisfied for r in release.check()), (data, name)
            phases = stats["time"]
            rows.append(
                dict(
                    data=data,
                    rows=table.n,
                    providers=len(table.provider_values),
                    method=name,
                    label=f"{data} {table.n:,} rows",
                    median_s=wall,
                    cpu_s=cpu,
                    runs=";".join(f"{r:.3f}" for r in runs),
                    target_s=TARGET[data],
                    groups=release.partition.n_groups,
                    checks=stats["checks"],
                    nodes=stats["nodes"],
                    messages=stats["messages"],
                    mbytes=stats["bytes"] / 1e6,
                    **{f"t_{k.replace(' ', '_')}": v for k, v in phases.items()},
                )
            )
            print(
                f"{data:7s} {name:18s} wall {wall:.3f} s cpu {cpu:.3f} s  groups "
                f"{release.partition.n_groups}  phases "
                + ", ".join(f"{k} {v:.3f}" for k, v in phases.items())
            )
    df = pd.DataFrame(rows)
    save_plot(df)


def save_plot(df: pd.DataFrame) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    RESULTS.mkdir(exist_ok=True)
    df.to_csv(RESULTS / "mprivacy_anonymize.csv", index=False)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, (_data, sub) in zip(axes, df.groupby("data", sort=False), strict=True):
        phases = [c for c in sub.columns if c.startswith("t_") and c != "t_total"]
        bottom = [0.0] * len(sub)
        for p in phases:
            vals = sub[p].fillna(0.0).tolist()
            ax.bar(sub.method, vals, bottom=bottom, label=p[2:].replace("_", " "))
            bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
        ax.scatter(sub.method, sub.median_s, color="black", marker="_", s=400, label="median wall")
        ax.axhline(float(sub.target_s.iloc[0]), color="red", linestyle="--", label="target")
        ax.set_title(f"{sub.label.iloc[0]}, {int(sub.providers.iloc[0])} providers", fontsize=9)
        ax.set_ylabel("seconds")
        ax.legend(fontsize=7)
    fig.suptitle(f"m-privacy anonymizers, m={M}, k={K}, distinct l={L} (phases of the last run)")
    fig.tight_layout()
    fig.savefig(RESULTS / "mprivacy_anonymize.png", dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
