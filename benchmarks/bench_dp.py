"""How fast is a DP histogram release (dp-histogram, OpenDP noise), and where does the time go?

Cases: Adult (45,222 rows, 8 QIs at levels giving 960 cells; target 0.05 s); 1,000,000
generated rows over 10,000 cells (target 0.5 s); 10,000,000 rows over 100,000 cells (target
6 s). The timed step is ``dp_histogram`` on an encoded table (cell codes + bincount, OpenDP's
noise, post-processing, the published cell frame); encoding is not timed. Medians of CPU
(process) and wall time; the parts are timed separately.

Run: ``python benchmarks/bench_dp.py`` (add ``--quick`` to skip the 10M case).
"""

from __future__ import annotations

import dataclasses
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np
import pandas as pd

from _timing import SHARED_DATA, save
from kerckhoffs.data.hierarchy import Hierarchy
from kerckhoffs.data.schema import Column, Kind, Role, Schema
from kerckhoffs.data.table import Table
from kerckhoffs.datasets import load_adult
from kerckhoffs.dp.counts import cell_domain, dp_histogram, true_counts
from kerckhoffs.dp.mechanisms import add_noise, count_measurement, post_process
from kerckhoffs.dp.randomized_response import dp_rr
from kerckhoffs.errors import ParameterError

ADULT_LEVELS = "age:3,workclass:2,marital-status:1,occupation:2,race:1,native-country:3"


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median (CPU, wall) seconds of ``fn`` over ``repeat`` runs after one warm-up."""
    fn()
    cpu, wall = [], []
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return statistics.median(cpu), statistics.median(wall)


def synthetic(n: int, a: int, b: int, seed: int = 0) -> Table:
    """``n`` rows over two QIs with public flat hierarchies of ``a`` and ``b`` leaves (the
    codes drawn directly, skipping the encoding of ``n`` rows)."""
    ha = Hierarchy.flat([f"a{i:05d}" for i in range(a)], name="a")
    hb = Hierarchy.flat([f"b{i:05d}" for i in range(b)], name="b")
    hs = Hierarchy.flat(["x", "y"], name="s")
    m = max(a, b)
    df = pd.DataFrame(
        {
            "a": np.asarray(ha.leaves)[np.arange(m) % a],
            "b": np.asarray(hb.leaves)[np.arange(m) % b],
            "s": np.where(np.arange(m) % 2 == 0, "x", "y"),
        }
    )
    cols = (
        Column("a", Role.QUASI, kind=Kind.CATEGORICAL, hierarchy=ha),
        Column("b", Role.QUASI, kind=Kind.CATEGORICAL, hierarchy=hb),
        Column("s", Role.SENSITIVE, kind=Kind.CATEGORICAL, hierarchy=hs),
    )
    small = Table.encode(df, Schema(cols))
    rng = np.random.default_rng(seed)
    # skewed cells (Zipf-like), so many cells are empty: they must be published too
    qa = np.minimum(rng.zipf(1.3, n) - 1, a - 1).astype(np.int32)
    qb = rng.integers(0, b, n, dtype=np.int32)
    return dataclasses.replace(
        small,
        qi=np.stack([qa, qb], axis=1),
        sa=rng.integers(0, 2, n, dtype=np.int32),
        row_ids=None,
        index=None,
    )


def parts(table: Table, levels: str | None, repeat: int) -> dict[str, float]:
    """Wall medians of the steps of dp_histogram, each timed alone."""
    domain, key = cell_domain(table, levels)
    meas, spec = count_measurement(domain.size, 1.0, "geometric")
    counts = true_counts(key, domain.size)
    noisy = add_noise(counts, meas, spec)
    return {
        "cell codes": timed(lambda: cell_domain(table, levels), repeat)[1],
        "bincount": timed(lambda: true_counts(key, domain.size), repeat)[1],
        "OpenDP measurement": timed(
            lambda: count_measurement(domain.size, 1.0, "geometric"), repeat
        )[1],
        "OpenDP noise": timed(lambda: add_noise(counts, meas, spec), repeat)[1],
        "post-process": timed(lambda: post_process(noisy), repeat)[1],
        "cell frame": timed(domain.frame, repeat)[1],
    }


def main() -> None:
    quick = "--quick" in sys.argv
    rows = []
    cases: list[tuple[str, Table, str | None, float, int]] = []
    if (SHARED_DATA / "adult").is_dir():
        from kerckhoffs.data.schema import Schema as S

        adult = Table.encode(
            load_adult(SHARED_DATA / "adult"), S.from_toml("examples/adult/schema.toml")
        )
        cases.append(("Adult 45,222 rows", adult, ADULT_LEVELS, 0.05, 7))
    cases.append(("1M rows", synthetic(1_000_000, 100, 100), None, 0.5, 5))
    if not quick:
        cases.append(("10M rows", synthetic(10_000_000, 1000, 100), None, 6.0, 3))
    for label, table, levels, target, repeat in cases:
        for mech in ("geometric", "laplace"):
            cpu, wall = timed(
                lambda t=table, lv=levels, m=mech: dp_histogram(t, 1.0, levels=lv, mechanism=m),
                repeat,
            )
            cells = cell_domain(table, levels)[0].size
            run = f"{label}, {cells:,} cells"
            rows.append(
                {"run": run, "method": f"dp-histogram {mech}", "median_s": wall,
                 "cpu_s": cpu, "target_s": target}
            )  # fmt: skip
            print(f"{run} {mech}: wall {wall:.4f} s, CPU {cpu:.4f} s (target {target} s)")
        try:  # dp-rr needs a public SA domain (a hierarchy for the SA)
            cpu, wall = timed(lambda t=table, lv=levels: dp_rr(t, 1.0, levels=lv), repeat)
            rows.append(
                {"run": f"{label}, x SA", "method": "dp-rr", "median_s": wall,
                 "cpu_s": cpu, "target_s": target}
            )  # fmt: skip
            print(f"{label} dp-rr: wall {wall:.4f} s, CPU {cpu:.4f} s (target {target} s)")
        except ParameterError as e:
            print(f"{label} dp-rr: skipped ({e})")
        for part, s in parts(table, levels, repeat).items():
            rows.append(
                {"run": f"{label}, {cells:,} cells", "method": part, "median_s": s,
                 "cpu_s": float("nan"), "target_s": target}
            )  # fmt: skip
            print(f"    {part}: {s * 1e3:.2f} ms")
    df = pd.DataFrame(rows)
    save(
        df,
        "dp",
        "dp-histogram (eps=1) and its parts, median wall time",
        "run",
    )


if __name__ == "__main__":
    main()
