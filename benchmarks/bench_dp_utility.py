"""Which DP release answers questions about Adult best at epsilon 1, and how close does it come
to Mondrian k=5? (dp-synthetic, dp-histogram, dp-marginals, Mondrian k=5 on the same table.)

Adult: 45,222 rows, the eight QIs of ``examples/adult/schema.toml`` and the SA education.
Every method releases the whole table once, at its defaults where it has them:

* ``dp-synthetic``: DP synthetic microdata (OpenDP's MST over Private-PGM), ``dp=1`` (pure DP);
* ``dp-histogram``: a noisy count table, its levels chosen with DP (``dp=1``), SA in the cells;
* ``dp-marginals``: eight noisy QI x SA tables at the leaves (``dp=1``, split evenly), read
  with the naive-Bayes estimate ``N_s prod_j P(range_j | s)`` (each QI independent given the
  SA), the natural estimator for marginals that share the SA;
* ``mondrian`` k=5 (not DP; the syntactic baseline paper 000 uses).

Two measures, each a mean over many questions:

1. Paper 000's COUNT workload (Section 6, the "query error" of its Figures 11-12): 10,000
   queries, 3 QI ranges and one SA range, selectivity 5 %, relative error
   ``|Act - Est| / Act`` (``kerckhoffs.metrics.query_error``). A generalized group, a DP cell
   or a synthetic row spread its count uniformly over the codes it covers.
2. Marginal error: for every 1-way (9), 2-way (36) and 3-way (84) marginal over the nine
   columns at their leaves, the total variation distance ``sum |true - est| / (2 n)``
   between the true marginal and the method's, averaged per order.

Times are CPU and wall of the release step (encoding excluded), medians of ``--runs`` runs;
the errors are medians over the same runs (DP errors vary between runs). Ratios are quoted
from one run of this script.

Run: ``python benchmarks/bench_dp_utility.py`` (``--runs 3`` default; ``--quick``: 1 run).
"""

from __future__ import annotations

import itertools
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

import kerckhoffs.algorithms  # noqa: F401  (registers every algorithm)
from _timing import RESULTS, SHARED_DATA
from kerckhoffs.algorithms.registry import get as get_algorithm
from kerckhoffs.data.schema import Schema
from kerckhoffs.data.table import Table
from kerckhoffs.datasets import load_adult
from kerckhoffs.metrics.dp_cells import _node_ranges
from kerckhoffs.metrics.query_engine import Mass, aggregate, evaluate
from kerckhoffs.metrics.query_error import Workload, _dp_mass, _release_mass, _sa_counts
from kerckhoffs.models import DifferentialPrivacy, KAnonymity

EPSILON = 1.0
QUERIES = 10_000
NAME = "dp_utility"


# -- each method as boxes with SA mass (the query engine's Mass) -------------------------------
def mass_of_release(release: Any, table: Table, work: Workload) -> Mass:
    """A grouped release (Mondrian) or a DP count table as boxes with SA mass."""
    if release.scheme.value == "dp":
        return _dp_mass(release, work, table)
    return _release_mass(release, _sa_counts(release, work))


def node_of_labels(table: Table, j: int, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Code ranges ``[lo, hi]`` in ``table`` of the hierarchy nodes named by ``labels`` (QI
    ``j``), at the lowest level whose node labels contain every label."""
    col = table.qi_columns[j]
    h = col.hierarchy
    assert h is not None
    wanted = pd.Index(pd.unique(labels.astype(str)))
    for level in range(h.height + 1):
        names = pd.Index(h.node_labels(level).astype(str))
        if wanted.isin(names).all():
            lo, hi = _node_ranges(table, j, level)
            node = names.get_indexer(labels.astype(str))
            return lo[node], hi[node]
    raise ValueError(f"column {col.name!r}: labels {list(wanted[:3])} are no level's nodes")


def mass_of_rows(rows: pd.DataFrame, table: Table) -> Mass:
    """Synthetic rows (node labels per column) as boxes of weight 1 each, equal boxes merged."""
    lo = np.zeros((len(rows), table.d), dtype=np.int64)
    hi = np.zeros_like(lo)
    for j, name in enumerate(table.qi_names):
        lo[:, j], hi[:, j] = node_of_labels(table, j, rows[name].to_numpy())
    sa_values = pd.Index([str(v) for v in table.sa_column.values.tolist()])
    sa = sa_values.get_indexer(rows[table.sa_name].astype(str).to_numpy())
    keep = (sa >= 0) & np.all(lo <= hi, axis=1)
    lo, hi, sa = lo[keep], hi[keep], sa[keep]
    boxes, box = np.unique(np.concatenate([lo, hi], axis=1), axis=0, return_inverse=True)
    b, s, w = aggregate(box.astype(np.int64), sa.astype(np.int64), np.ones(sa.size), table.n_sa)
    d = table.d
    return Mass(boxes[:, :d].astype(np.int32), boxes[:, d:].astype(np.int32), b, s, w)


def query_answers(mass: Mass, work: Workload) -> np.ndarray:
    w = work
    return evaluate(mass, w.columns, w.lo, w.hi, w.sa_lo, w.sa_hi, w.sizes, w.n_sa, "auto")


def marginal_of_mass(mass: Mass, cols: tuple[int, ...], sizes: list[int], d: int) -> np.ndarray:
    """The marginal over ``cols`` (QI indices < d, or d for the SA) of boxes spreading their
    mass uniformly: expanded box by box over the cells they cover (vectorized)."""
    lo = np.concatenate([mass.lo[mass.box], mass.sa[:, None]], axis=1).astype(np.int64)
    hi = np.concatenate([mass.hi[mass.box], mass.sa[:, None]], axis=1).astype(np.int64)
    w = mass.weight.astype(np.float64)
    lo, hi = lo[:, list(cols)], hi[:, list(cols)]
    width = hi - lo + 1
    cells = np.prod(width, axis=1)
    share = w / cells
    item = np.repeat(np.arange(w.size), cells)
    offset = np.arange(item.size) - np.repeat(np.cumsum(cells) - cells, cells)
    flat = np.zeros(item.size, dtype=np.int64)
    for k in range(len(cols)):  # mixed radix over the box's own widths, then the marginal's
        inner = np.prod(width[:, k + 1 :], axis=1)[item]
        digit = (offset // inner) % width[item, k]
        flat = flat * sizes[cols[k]] + lo[item, k] + digit
    return np.bincount(flat, weights=share[item], minlength=int(np.prod([sizes[c] for c in cols])))


def marginal_errors(
    estimate: Callable[[tuple[int, ...]], np.ndarray], truth: Mass, sizes: list[int], d: int, n: int
) -> dict[int, float]:
    """Mean total variation distance per order (1-, 2-, 3-way) over every column subset."""
    out = {}
    for order in (1, 2, 3):
        tv = []
        for cols in itertools.combinations(range(d + 1), order):
            true = marginal_of_mass(truth, cols, sizes, d)
            tv.append(float(np.abs(true - estimate(cols)).sum()) / (2 * n))
        out[order] = statistics.fmean(tv)
    return out


# -- dp-marginals read with naive Bayes ----------------------------------------------------------
class NaiveBayes:
    """Eight QI x SA noisy tables at the leaves: ``N_s`` and ``P(code | s)`` per QI (negative
    noisy counts clamped at 0 for the conditionals: post-processing of the release)."""

    def __init__(self, release: Any, table: Table) -> None:
        counts = release.counts
        self.d, self.n_sa = table.d, table.n_sa
        self.sizes = [c.size for c in table.qi_columns]
        sa_index = pd.Index([str(v) for v in table.sa_column.values.tolist()])
        self.cond: list[np.ndarray] = []
        totals = []
        for j, name in enumerate(table.qi_names):
            part = counts[counts["marginal"].astype(str).str.split("+").str[0] == name]
            codes = pd.Index([str(v) for v in table.qi_columns[j].values.tolist()])
            q = codes.get_indexer(part[name].astype(str).to_numpy())
            s = sa_index.get_indexer(part[table.sa_name].astype(str).to_numpy())
            ok = (q >= 0) & (s >= 0)
            grid = np.zeros((self.sizes[j], self.n_sa))
            np.add.at(grid, (q[ok], s[ok]), part["count"].to_numpy(dtype=np.float64)[ok])
            totals.append(grid.sum(axis=0))
            pos = np.clip(grid, 0, None)
            self.cond.append(pos / np.maximum(pos.sum(axis=0), 1e-12))
        self.n_s = np.clip(np.mean(totals, axis=0), 0, None)

    def queries(self, work: Workload) -> np.ndarray:
        cum = [np.vstack([np.zeros(self.n_sa), np.cumsum(c, axis=0)]) for c in self.cond]
        out = np.zeros(work.n_queries)
        for i in range(work.n_queries):
            sa = slice(int(work.sa_lo[i]), int(work.sa_hi[i]) + 1)
            p = self.n_s[sa].copy()
            for k, j in enumerate(work.columns[i]):
                p *= cum[j][int(work.hi[i][k]) + 1, sa] - cum[j][int(work.lo[i][k]), sa]
            out[i] = p.sum()
        return out

    def marginal(self, cols: tuple[int, ...]) -> np.ndarray:
        qis = [c for c in cols if c < self.d]
        letters = "abc"[: len(qis)]
        inputs = ",".join(["s", *(f"{x}s" for x in letters)])
        joint = np.einsum(f"{inputs}->{letters}s", self.n_s, *[self.cond[j] for j in qis])
        if self.d not in cols:
            joint = joint.sum(axis=-1)
        return joint.reshape(-1)


# -- the runs --------------------------------------------------------------------------------
def timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    c0, w0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - c0, time.perf_counter() - w0


def main() -> None:
    runs = 1 if "--quick" in sys.argv else 3
    if "--runs" in sys.argv:
        runs = int(sys.argv[sys.argv.index("--runs") + 1])
    schema = Schema.from_toml("examples/adult/schema.toml")
    table = Table.encode(load_adult(SHARED_DATA / "adult"), schema)
    work = Workload.draw(table, n_queries=QUERIES, qd=3, selectivity=0.05, seed=0)
    sizes = [c.size for c in table.qi_columns] + [table.n_sa]
    truth = mass_of_rows(
        pd.DataFrame(
            {
                **{
                    c.name: np.asarray(c.values)[table.qi[:, j]].astype(str)
                    for j, c in enumerate(table.qi_columns)
                },
                table.sa_name: np.asarray(table.sa_column.values)[table.sa].astype(str),
            }
        ),
        table,
    )
    act = work.actual.astype(np.float64)
    dp = [DifferentialPrivacy(EPSILON)]
    marginals = ";".join(f"{q}+{table.sa_name}" for q in table.qi_names)

    def synthetic() -> Any:
        return get_algorithm("dp-synthetic").run(table, dp)

    methods: dict[str, Callable[[], Any]] = {
        "dp-synthetic": synthetic,
        "dp-histogram": lambda: get_algorithm("dp-histogram").run(table, dp, with_sa=True),
        "dp-marginals": lambda: get_algorithm("dp-marginals").run(table, dp, marginals=marginals),
        "mondrian k=5": lambda: get_algorithm("mondrian").run(table, [KAnonymity(5)], seed=0),
    }
    if "--only" in sys.argv:
        keep = sys.argv[sys.argv.index("--only") + 1].split(",")
        methods = {k: v for k, v in methods.items() if k in keep}
    rows = []
    for name, make in methods.items():
        for run in range(runs):
            release, cpu, wall = timed(make)
            if name == "dp-marginals":
                nb = NaiveBayes(release, table)
                est = nb.queries(work)
                marg = marginal_errors(nb.marginal, truth, sizes, table.d, table.n)
            else:
                mass = (
                    mass_of_rows(release.to_pandas(), table)
                    if name == "dp-synthetic"
                    else mass_of_release(release, table, work)
                )
                est = query_answers(mass, work)
                marg = marginal_errors(
                    lambda cols, m=mass: marginal_of_mass(m, cols, sizes, table.d),
                    truth,
                    sizes,
                    table.d,
                    table.n,
                )
            err = np.abs(act - est) / act
            rows.append(
                {
                    "method": name,
                    "run": run,
                    "cpu_s": cpu,
                    "wall_s": wall,
                    "query_error_mean": float(err.mean()),
                    "query_error_median": float(np.median(err)),
                    "tv_1way": marg[1],
                    "tv_2way": marg[2],
                    "tv_3way": marg[3],
                }
            )
            print(rows[-1], flush=True)
    df = pd.DataFrame(rows)
    summary = df.groupby("method", sort=False).median(numeric_only=True).drop(columns="run")
    RESULTS.mkdir(exist_ok=True)
    df.to_csv(RESULTS / f"{NAME}.csv", index=False)
    print(summary.to_string())
    plot(summary)


def plot(summary: pd.DataFrame) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    ax = axes[0]
    ax.bar(summary.index, summary["query_error_mean"], color="#4477aa")
    ax.set_yscale("log")
    ax.set_ylabel("mean relative error (log)")
    ax.set_title(f"Paper 000's {QUERIES:,} COUNT queries, Adult")
    ax.tick_params(axis="x", rotation=15)
    ax = axes[1]
    x = np.arange(3)
    width = 0.8 / len(summary)
    for i, (name, row) in enumerate(summary.iterrows()):
        ax.bar(x + i * width, [row["tv_1way"], row["tv_2way"], row["tv_3way"]], width, label=name)
    ax.set_xticks(x + width * (len(summary) - 1) / 2, ["1-way", "2-way", "3-way"])
    ax.set_ylabel("mean total variation distance")
    ax.set_title("Marginal error (all 1-, 2-, 3-way marginals)")
    ax.legend(loc="upper left", fontsize=8)
    fig.suptitle(f"DP releases at epsilon {EPSILON:g} vs Mondrian k=5 (medians of runs)")
    fig.tight_layout()
    fig.savefig(RESULTS / f"{NAME}.png", dpi=110)


if __name__ == "__main__":
    main()
