"""Question: how much faster is the random-worlds audit of a randomized algorithm when the
branches of each candidate's enumeration share the steps computed before their first draw?

The auditor (``kerckhoffs audit-algorithm``, :func:`kerckhoffs.audits.random_worlds.
random_worlds`) weighs every candidate world by the exact probability that the algorithm
publishes the observed release, running the algorithm once per branch of its random choices
(about ten per candidate for Mondrian++ on 6 rows). Branches agree up to their first draw, so
a step marked ``deterministic_stage`` (Mondrian+'s cuts, Hilb+'s groups, the Hilbert index) is
computed once per candidate (:class:`kerckhoffs.randomness.SharedPrefix`). The baseline is the
same auditor with ``share_prefix=False``: every branch recomputes everything (the previous
behaviour). Both must give the same weights (asserted).

Each row: one audit of ``TABLES`` random 6-row tables (3 SA values, the algorithm's default
models, as ``audit-algorithm --rows 6`` draws them), median wall and CPU seconds of
``--repeat`` runs. Run: ``python benchmarks/bench_random_worlds.py [--repeat 5]``. Writes
``benchmarks/results/random_worlds.csv`` and ``.png``.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
import pandas as pd

import kerckhoffs.audits.random_worlds as rw
from _timing import median_wall_cpu, save
from kerckhoffs.algorithms.registry import get
from kerckhoffs.audits.algorithm import default_models
from kerckhoffs.audits.enumerating_rng import enumerate_outcomes
from kerckhoffs.audits.random_tables import random_table

ALGORITHMS = ["mondrian++", "hilb++", "hilb++strict", "mask++", "anatomy"]
TABLES = 20
ROWS = 6


def audit(name: str, share: bool) -> list[Any]:
    """The smart weights of every candidate world of every table (or the refusal)."""
    models = default_models(get(name))
    saved = rw.enumerate_outcomes

    def enumerate_(run: Any, **kw: Any) -> Any:
        return enumerate_outcomes(run, **kw, share_prefix=share)

    rw.enumerate_outcomes = enumerate_
    try:
        out: list[Any] = []
        for s in range(TABLES):
            table = random_table(np.random.default_rng(s), ROWS, n_sa=3)
            try:
                out.append(rw.random_worlds(name, table, models, seed=0).weights)
            except Exception as exc:  # refused table: part of the audit's work, same both ways
                out.append(repr(exc))
        return out
    finally:
        rw.enumerate_outcomes = saved


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    rows = []
    for name in ALGORITHMS:
        results = {}
        for method, share in (("recomputed per branch (before)", False), ("shared prefix", True)):
            wall, cpu, out = median_wall_cpu(lambda n=name, s=share: audit(n, s), args.repeat)
            results[method] = out
            rows.append(
                {"algorithm": name, "method": method, "median_s": wall, "median_cpu_s": cpu}
            )
            print(f"{name:14s} {method:32s} wall {wall:6.3f} s  cpu {cpu:6.3f} s", flush=True)
        before, after = results.values()
        assert before == after, f"{name}: the weights differ with a shared prefix"
    df = pd.DataFrame(rows)
    save(
        df,
        "random_worlds",
        f"random-worlds audit of {TABLES} random {ROWS}-row tables (median of {args.repeat})",
        "algorithm",
    )


if __name__ == "__main__":
    main()
