"""Question: how fast is m-privacy verification of one group (paper 003 section V.A setting:
n_G = 15 providers, |T_G| in {150, 750}, k = 50, distinct l = 4, m = 5)? Targets: the exact
verifier under 0.5 ms per group; the heuristic verifiers under 10 microseconds per oracle call.

Groups are synthetic: SA values drawn with the frequencies of Adult's Occupation (14 values,
spec mprivacy.md 5.1), records spread over the providers with Exp(1) weights (spec 3.10),
every provider non-empty; 5 seeds. The exact verifier is timed from the group's rows (triples
built inside), the heuristics from their GroupStats (per call = time / oracle calls). CPU and
wall time, medians over repeats and seeds.

Run: ``python benchmarks/bench_mprivacy_verify.py [--repeat 7]``
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import pandas as pd

from _timing import RESULTS
from kerckhoffs.mprivacy.constraints import Conjunction, DistinctL, KAnon
from kerckhoffs.mprivacy.exact import m_private_groups
from kerckhoffs.mprivacy.group import GroupStats
from kerckhoffs.mprivacy.verify import adaptive, binary, bottom_up, direct, top_down

OCCUPATION = [6020, 6008, 5984, 5540, 5408, 4808, 2970, 2316, 2046, 1480, 1420, 976, 232, 14]
N_PROV, M, K, L = 15, 5, 50, 4


def group(size: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    p_sa = np.array(OCCUPATION) / sum(OCCUPATION)
    sa = rng.choice(len(OCCUPATION), size=size, p=p_sa)
    while True:
        w = rng.exponential(1.0, N_PROV)
        prov = rng.choice(N_PROV, size=size, p=w / w.sum())
        if np.unique(prov).size == N_PROV:
            return prov, sa


def timed(fn, repeat: int) -> tuple[float, float, object]:  # type: ignore[no-untyped-def]
    fn()
    wall, cpu = [], []
    out = None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--seeds", type=int, default=5)
    args = ap.parse_args()
    c = Conjunction((KAnon(K), DistinctL(L)))
    rows = []
    for size in (150, 750):
        for seed in range(args.seeds):
            prov, sa = group(size, seed)
            g = np.zeros(size, dtype=np.int64)
            wall, cpu, ok = timed(
                lambda prov=prov, sa=sa, g=g: m_private_groups(
                    g, prov, sa, 1, N_PROV, len(OCCUPATION), M, c
                ),
                args.repeat,
            )
            rows.append(
                dict(
                    size=size,
                    seed=seed,
                    method="exact",
                    private=bool(ok[0]),  # type: ignore[index]
                    calls=0,
                    wall_s=wall,
                    cpu_s=cpu,
                )
            )
            stats = GroupStats.from_records(prov, sa, len(OCCUPATION))
            for fn in (direct, bottom_up, top_down, binary, adaptive):
                wall, cpu, res = timed(lambda fn=fn, stats=stats: fn(stats, M, c), args.repeat)
                assert res.private == ok[0]  # type: ignore[attr-defined,index]
                rows.append(
                    dict(
                        size=size,
                        seed=seed,
                        method=fn.__name__.replace("_", "-"),
                        private=res.private,
                        calls=res.calls,  # type: ignore[attr-defined]
                        wall_s=wall,
                        cpu_s=cpu,
                    )
                )
    df = pd.DataFrame(rows)
    df["wall_per_call_us"] = np.where(
        df.calls > 0, df.wall_s / df.calls.clip(lower=1) * 1e6, np.nan
    )
    df["cpu_per_call_us"] = np.where(df.calls > 0, df.cpu_s / df.calls.clip(lower=1) * 1e6, np.nan)
    RESULTS.mkdir(exist_ok=True)
    df.to_csv(RESULTS / "mprivacy_verify_runs.csv", index=False)
    summary = (
        df.groupby(["size", "method"], sort=False)
        .agg(
            private=("private", "mean"),
            calls=("calls", "median"),
            wall_ms=("wall_s", lambda s: 1e3 * s.median()),
            cpu_ms=("cpu_s", lambda s: 1e3 * s.median()),
            wall_per_call_us=("wall_per_call_us", "median"),
            cpu_per_call_us=("cpu_per_call_us", "median"),
        )
        .reset_index()
    )
    summary.to_csv(RESULTS / "mprivacy_verify.csv", index=False)
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(summary.round(3).to_string(index=False))


if __name__ == "__main__":
    main()
