"""Question: what does it cost to run paper 003's m-privacy anonymizers with the providers on
Dask workers (one site per provider, records never pooled) instead of in one process, and how
much crosses between each provider and the coordinator, against the provider's own records?

Setting: paper 003 Table II on Adult (45,222 rows, the QIs of spec mprivacy.md A23, SA
occupation, 10 providers with Exp(1) weights, seed 0; m = 3, k = 30, distinct l = 4), the
table of ``bench_mprivacy_anonymize.py``. Both algorithms (provider-aware and the baseline
mondrian-mprivacy), exact verifier:

- ``memory``: :func:`~kerckhoffs.algorithms.mprivacy_anonymize.coordinate` over
  :class:`~kerckhoffs.mprivacy.providers.LocalProviders` (the pooled table in this process);
- ``dask``: :func:`~kerckhoffs.engines.dask_providers.mprivacy_dask` on a local cluster of 2
  worker processes (1 thread each), the table encoded on the workers from 4 partitions, 10
  sites spread over the 2 workers; the partition is asserted identical to ``memory``'s.

Recorded: wall and client CPU seconds (medians of ``--repeat`` runs after one warm-up; worker
CPU is not in the client's), levels, queries, and per provider the bytes of its replies before
the submission (counts), of its submission ((group, SA) pairs: the release) and of its own
records as int32 codes (QIs and SA) for scale. Writes ``results/dask_providers.csv`` and
``.png``. Run: ``python benchmarks/bench_dask_providers.py [--repeat 3]``; ``--plot-only``
redraws the plot from the CSV.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
import pandas as pd

from _timing import RESULTS, median_wall_cpu
from bench_mprivacy_anonymize import K, L, M, adult_table
from kerckhoffs.algorithms.mprivacy_anonymize import coordinate, setting_from_models
from kerckhoffs.models import DistinctLDiversity, KAnonymity, MPrivacy, combine_m_privacy
from kerckhoffs.mprivacy.providers import LocalProviders

ALGORITHMS = ("provider-aware", "mondrian-mprivacy")


def kb(per_provider: np.ndarray) -> str:
    return ";".join(f"{x / 1e3:.1f}" for x in per_provider)


def main() -> None:
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    from kerckhoffs.engines.dask_providers import mprivacy_dask
    from kerckhoffs.engines.dask_table import encode_dask

    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    table = adult_table()
    assert table.provider_values is not None
    models = combine_m_privacy([KAnonymity(K), DistinctLDiversity(L), MPrivacy(M)])
    # the same rows as a frame of codes (the encoding is not what is measured here)
    frame = pd.DataFrame({name: table.qi[:, j] for j, name in enumerate(table.qi_names)})
    frame["occupation"] = table.sa
    frame["provider"] = np.asarray(table.provider_values)[table.provider]
    from kerckhoffs import Schema

    schema = Schema.build({q: {"kind": "numeric"} for q in table.qi_names}, "occupation",
                          provider="provider")  # fmt: skip
    own = np.bincount(table.provider, minlength=len(table.provider_values)) * 4 * (table.d + 1)
    rows: list[dict[str, Any]] = []
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,  # fmt: skip
        Client(cluster) as client,
    ):
        dt = encode_dask(dd.from_pandas(frame, npartitions=4), schema, client)
        for algorithm in ALGORITHMS:
            setting = setting_from_models(models, algorithm)
            aware = algorithm == "provider-aware"
            wall_m, cpu_m, want = median_wall_cpu(
                lambda s=setting, a=aware: coordinate(LocalProviders(table), s, provider_aware=a),
                args.repeat,
            )
            stats: dict[str, Any] = {}

            def on_dask(a: str = algorithm, st: dict[str, Any] = stats) -> Any:
                st.clear()
                groups, providers = mprivacy_dask(dt, models, a, stats=st)
                return np.concatenate(client.gather(groups.groups)), providers

            wall_d, cpu_d, (got, providers) = median_wall_cpu(on_dask, args.repeat)
            assert np.array_equal(got, want), algorithm
            counts = np.zeros(providers.n_providers, np.int64)
            submitted = np.zeros(providers.n_providers, np.int64)
            for r in providers.replies:
                (submitted if r.kind == "generalize_and_submit" else counts)[r.provider] += r.bytes
            queries = sum(r.kind != "generalize_and_submit" for r in providers.replies)
            queries //= providers.n_providers
            for engine, wall, cpu in (("memory", wall_m, cpu_m), ("dask", wall_d, cpu_d)):
                rows.append(
                    {
                        "algorithm": algorithm,
                        "engine": engine,
                        "rows": table.n,
                        "groups": int(want.max()) + 1,
                        "levels": stats["levels"],
                        "median_s": wall,
                        "client_cpu_s": cpu,
                        "queries": queries,
                        "count_kb_per_provider": kb(counts),
                        "submit_kb_per_provider": kb(submitted),
                        "own_kb_per_provider": kb(own),
                        "count_kb_total": counts.sum() / 1e3,
                        "own_kb_total": own.sum() / 1e3,
                    }
                )
            print(
                f"{algorithm:18s} memory {wall_m:.2f} s  dask {wall_d:.2f} s "
                f"(x{wall_d / wall_m:.1f}); {int(want.max()) + 1} groups, {stats['levels']} "
                f"levels, {queries} queries; counts {counts.sum() / 1e3:,.0f} KB in all "
                f"(largest provider {counts.max() / 1e3:,.0f} KB) vs records "
                f"{own.sum() / 1e3:,.0f} KB; submissions {submitted.sum() / 1e3:,.0f} KB",
                flush=True,
            )
    df = pd.DataFrame(rows)
    RESULTS.mkdir(exist_ok=True)
    df.to_csv(RESULTS / "dask_providers.csv", index=False)
    plot(df, counts_by_algorithm(df))


def counts_by_algorithm(df: pd.DataFrame) -> dict[str, tuple[list[float], list[float]]]:
    out = {}
    for algorithm, sub in df[df.engine == "dask"].groupby("algorithm", sort=False):
        row = sub.iloc[0]
        out[str(algorithm)] = (
            [float(x) for x in row.count_kb_per_provider.split(";")],
            [float(x) for x in row.own_kb_per_provider.split(";")],
        )
    return out


def plot(df: pd.DataFrame, per_provider: dict[str, tuple[list[float], list[float]]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    ax = axes[0]
    for i, engine in enumerate(("memory", "dask")):
        sub = df[df.engine == engine]
        ax.bar(np.arange(len(sub)) + (i - 0.5) * 0.4, sub.median_s, 0.4, label=engine)
    ax.set_xticks(range(len(ALGORITHMS)), ALGORITHMS)
    ax.set_ylabel("median wall seconds")
    ax.set_title("Adult, 10 providers, m=3 k=30 distinct l=4", fontsize=9)
    ax.legend(fontsize=8)
    ax = axes[1]
    top = 0.0
    for algorithm, (counts, own) in per_provider.items():
        ax.scatter(own, counts, label=f"{algorithm}: counts sent")
        top = max(top, *counts, *own)
    ax.plot([0, top], [0, top], "--", color="gray", linewidth=1, label="as many KB as its records")
    ax.set_xlabel("the provider's own records, KB (int32 codes)")
    ax.set_ylabel("KB of counts the provider sent")
    ax.set_title("per provider, before the submission", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(RESULTS / "dask_providers.png", dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--plot-only"]:  # redraw from the committed CSV
        saved = pd.read_csv(RESULTS / "dask_providers.csv")
        plot(saved, counts_by_algorithm(saved))
    else:
        main()
