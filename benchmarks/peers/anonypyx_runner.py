"""Run anonypyx's Mondrian (k-anonymity) on one CSV and write the partition it found.

Run with the python of the anonypyx venv (see ``venv.py``), not ours:

    python anonypyx_runner.py CSV SEP QI1,QI2,... K OUT.npy [--numeric age,...] [--repeat N]

The CSV is loaded once with ``pandas.read_csv(CSV, sep=SEP, skipinitialspace=True)``; the
quasi-identifiers not named by ``--numeric`` become pandas ``category`` columns (anonypyx
splits those by halving their set of distinct values, and numeric ones at the median:
``< median`` / ``>= median``). Timed: ``anonypyx.mondrian.Mondrian(df, qis).partition(
[anonypyx.models.kAnonymity(K)])``, the partitioning step of ``Anonymiser(...).anonymise()``
without turning the groups into generalized records, ``--repeat`` times with
``time.perf_counter`` and ``time.process_time`` (CPU). The group id of every row (in file
order) is saved to ``OUT.npy`` so that the caller can measure the partition with its own
metrics. One JSON object goes to stdout: ``{"anonypyx_version", "rows", "groups", "seconds":
[...], "median", "cpu_seconds": [...]}``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from importlib import metadata

import numpy as np
import pandas as pd
from anonypyx import models
from anonypyx.mondrian import Mondrian


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("sep")
    ap.add_argument("qis")
    ap.add_argument("k", type=int)
    ap.add_argument("out")
    ap.add_argument("--numeric", default="")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    qis = args.qis.split(",")
    numeric = set(filter(None, args.numeric.split(",")))
    df = pd.read_csv(args.csv, sep=args.sep, skipinitialspace=True)
    for q in qis:
        if q not in numeric:
            df[q] = df[q].astype(str).str.strip().astype("category")
    seconds, cpu_seconds = [], []
    parts = None
    for _ in range(args.repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        parts = Mondrian(df, qis).partition([models.kAnonymity(args.k)])
        seconds.append(time.perf_counter() - t0)
        cpu_seconds.append(time.process_time() - c0)
    assert parts is not None
    group = np.full(len(df), -1, dtype=np.int64)
    for gid, idx in enumerate(parts):
        group[df.index.get_indexer(idx)] = gid
    if (group < 0).any():
        raise SystemExit("anonypyx left some rows out of its partition")
    np.save(args.out, group)
    print(
        json.dumps(
            {
                "anonypyx_version": metadata.version("anonypyx"),
                "rows": len(df),
                "groups": len(parts),
                "seconds": seconds,
                "median": statistics.median(seconds),
                "cpu_seconds": cpu_seconds,
            }
        )
    )


if __name__ == "__main__":
    main()
