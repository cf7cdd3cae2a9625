"""Question: how fast is the intersection attack over 5 releases of 30,000 rows (the project's
target: under 2 s), and does it give the same answer as a straightforward per-target loop?

Setting: Adult (``../shared/data/adult``, 45,222 rows, the 8 QIs of
``examples/adult/schema.toml``, SA education, 16 values). :func:`make_subsets` draws 5
subsets of 30,000 rows sharing 26,195 rows (the targets P; each subset adds a disjoint chunk
of 3,805 rows), each anonymized independently by Mondrian, k = 5 (paper 004's setting,
spec ``composition.md`` 3.6, 5.2). Anonymization is not timed. Timed, end to end from the
releases to the AttackResult (all 26,195 targets, 5 releases):

1. **oracle locator** (spec 3.3 ``locate_oracle``: the row of each target in each release is
   known, the paper's "always assume locatability"): ours (``OverlappingReleases.locations``
   + ``intersection_attack``) vs the reference, Algorithm 1 written as a Python loop over
   targets with Python sets of each class's distinct values.
2. **cell locator** (spec 3.3 ``locate_region``: each target located by its QIs through the
   published cells ``[lo-hi]`` / hierarchy nodes): ours (``locate_all`` on the 5 releases +
   ``intersection_attack``) vs the reference, a Python loop over targets that scans every
   group's box (numpy over groups, one target at a time) and unions the candidate classes'
   value sets. Both read the same parsed cells (cell parsing is shared, not compared).
3. **cell locator on files**: the same releases written with ``Release.write``, read back with
   ``Release.from_published`` (reading not timed), located through the cell strings with the
   schema's hierarchies: ours only (the cells are identical to setting 2).

Every run checks that ours and the reference give identical ``S_i`` for every target. Medians
of repeated runs (the reference runs once: it is slow). Run: ``python
benchmarks/bench_composition.py [--repeat 7] [--ref-repeat 1] [--replot]``. Writes
``benchmarks/results/composition.csv`` and ``.png`` (log axis; ``--replot`` redraws the PNG
from the CSV).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from _timing import RESULTS, SHARED_DATA, median_seconds, save
from kerckhoffs import Release, Schema, Table
from kerckhoffs.attacks.composition import intersect, intersection_attack, overlapping_releases
from kerckhoffs.attacks.locate import _schema_hierarchy, locate_all
from kerckhoffs.data.cells import label_ranges as _label_ranges
from kerckhoffs.data.cells import numeric_cell as _numeric_cell
from kerckhoffs.data.schema import Kind
from kerckhoffs.models import KAnonymity

HERE = Path(__file__).resolve().parent
SCHEMA = HERE.parent / "examples" / "adult" / "schema.toml"
N_REL, SIZE, OVERLAP, K, SEED = 5, 30_000, 26_195, 5, 0
TARGET_S = 2.0
TITLE = (
    f"Intersection attack, Adult: {N_REL} Mondrian k={K} releases of {SIZE:,} rows, "
    f"{OVERLAP:,} targets (target {TARGET_S:g} s)"
)


# -- references: Algorithm 1 as a per-target loop --------------------------------------------------
def class_value_sets(rel: Release) -> list[set[str]]:
    """Each group's distinct published SA values (Python sets)."""
    labels = rel.table.decode_sa(rel.sa_published).tolist()
    sets: list[set[str]] = [set() for _ in range(rel.partition.n_groups)]
    for g, v in zip(rel.partition.group.tolist(), labels, strict=True):
        sets[g].add(str(v))
    return sets


def reference_oracle(releases: list[Release], rows: list[np.ndarray]) -> list[set[str]]:
    """Spec 3.2: for each target, for each release, the class's value set; intersect."""
    sets = [class_value_sets(r) for r in releases]
    groups = [r.partition.group.tolist() for r in releases]
    row_lists = [r.tolist() for r in rows]
    out = []
    for i in range(len(row_lists[0])):
        s = set(sets[0][groups[0][row_lists[0][i]]])
        for j in range(1, len(releases)):
            s &= sets[j][groups[j][row_lists[j][i]]]
        out.append(s)
    return out


def boxes(rel: Release, schema: Schema) -> tuple[np.ndarray, np.ndarray, list[Kind]]:
    """Each group's box: per QI, [lo, hi] as numbers (numeric) or leaf indices (categorical),
    read from the published cells with the same parser as the locator."""
    cells = rel.generalized_cells()
    lo = np.zeros((len(cells), rel.table.d))
    hi = np.zeros_like(lo)
    kinds = []
    for j, name in enumerate(rel.table.qi_names):
        col = schema.column(name)
        h = _schema_hierarchy(col, schema)
        kinds.append(col.kind)
        for g, text in enumerate(cells[name].astype(str).tolist()):
            if col.kind == Kind.NUMERIC:
                lo[g, j], hi[g, j] = _numeric_cell(text, h)
            else:
                ((a, b),) = _label_ranges(h)[text] if text != "*" else [(0, len(h) - 1)]
                lo[g, j], hi[g, j] = a, b
    return lo, hi, kinds


def coordinates(pop: pd.DataFrame, schema: Schema, names: list[str]) -> np.ndarray:
    """Targets' values as numbers (numeric QIs) or leaf indices (categorical QIs)."""
    x = np.zeros((len(pop), len(names)))
    for j, name in enumerate(names):
        col = schema.column(name)
        if col.kind == Kind.NUMERIC:
            x[:, j] = pop[name].to_numpy(dtype=float)
        else:
            leaves = pd.Index(_schema_hierarchy(col, schema).leaves)
            x[:, j] = leaves.get_indexer(pop[name].astype(str))
    return x


def reference_cells(releases: list[Release], pop: pd.DataFrame, schema: Schema) -> list[set[str]]:
    """Spec 3.2 + 3.3 locate_region: per target, per release, every group whose box holds the
    target (numpy over the groups), the union of their value sets; then intersect."""
    names = releases[0].table.qi_names
    x = coordinates(pop, schema, names)
    prepared = [(boxes(r, schema), class_value_sets(r)) for r in releases]
    out = []
    for i in range(len(pop)):
        s: set[str] | None = None
        for (lo, hi, _), sets in prepared:
            hits = np.flatnonzero(((lo <= x[i]) & (x[i] <= hi)).all(axis=1))
            vals: set[str] = set().union(*(sets[g] for g in hits.tolist()))
            s = vals if s is None else s & vals
        out.append(s or set())
    return out


# -- ours ------------------------------------------------------------------------------------------
def ours_sets(releases: list[Release], locations: list) -> list[set[str]]:
    return [set(s) for s in intersect(releases, locations).value_sets()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--ref-repeat", type=int, default=1)
    parser.add_argument("--replot", action="store_true", help="only redraw the PNG")
    args = parser.parse_args()
    if args.replot:
        log_plot(pd.read_csv(RESULTS / "composition.csv"), TITLE)
        return
    adult = SHARED_DATA / "adult"
    if not adult.is_dir():
        sys.exit(f"Adult not found at {adult}")
    from kerckhoffs.datasets import load_adult

    schema = Schema.from_toml(SCHEMA)
    table = Table.encode(load_adult(adult), schema)
    ov = overlapping_releases(table, N_REL, OVERLAP, "mondrian", [KAnonymity(K)], SEED, size=SIZE)
    releases = ov.releases
    pop = ov.population()
    truth = ov.true_values()
    print(
        f"Adult {table.n:,} rows; {N_REL} Mondrian k={K} releases of "
        f"{[r.table.n for r in releases]} rows, {[r.partition.n_groups for r in releases]} "
        f"groups; {pop.shape[0]:,} targets"
    )
    oracle_rows = [np.searchsorted(sub, ov.overlap) for sub in ov.subsets]

    def ours_oracle() -> object:
        return intersection_attack(releases, ov.locations(), true_values=truth)

    def ours_cells(rels: list[Release]) -> object:
        return intersection_attack(rels, locate_all(rels, pop, schema), true_values=truth)

    with tempfile.TemporaryDirectory() as tmp:
        for j, r in enumerate(releases):
            r.write(Path(tmp) / f"r{j}", [KAnonymity(K)], formats=("csv",))
        back = [Release.from_published(Path(tmp) / f"r{j}") for j in range(N_REL)]

    records = []

    def record(method: str, run: str, med: float, runs: list[float], res: object) -> None:
        d = res.details  # type: ignore[attr-defined]
        records.append(
            {
                "method": method,
                "run": run,
                "median_s": med,
                "runs": " ".join(f"{x:.4f}" for x in runs),
                "targets": d["targets"],
                "releases": d["releases"],
                "perfect_breach": d["perfect_breach"],
                "perfect_breach_share": round(d["perfect_breach_share"], 4),
                "breach_25pct_share": round(d["breach_by_confidence"]["25%"], 4),
                "vulnerable_share": round(d["vulnerable_share"], 4),
                "ea_before": round(d["effective_anonymity_before"], 3),
                "ea_after": round(d["effective_anonymity_after"], 3),
                "ambiguous_per_release": round(float(np.mean(d["ambiguous"])), 1),
                "identical_to_reference": None,
            }
        )
        print(f"{method:28s} {run:34s} {med:8.3f} s  perfect {d['perfect_breach']:,}")

    # 1. oracle
    med, runs = median_seconds(ours_oracle, args.repeat)
    res_o = ours_oracle()
    record("kerckhoffs (vectorized)", "oracle locator", med, runs, res_o)
    ref_o: list[set[str]] = []
    med_r, runs_r = median_seconds(
        lambda: ref_o.__setitem__(slice(None), reference_oracle(releases, oracle_rows)),
        args.ref_repeat,
        warmup=0,
    )
    same_o = ours_sets(releases, ov.locations()) == ref_o
    records[-1]["identical_to_reference"] = same_o
    record("reference (per-target loop)", "oracle locator", med_r, runs_r, res_o)
    records[-1]["identical_to_reference"] = same_o

    # 2. cells, in-process
    med, runs = median_seconds(lambda: ours_cells(releases), args.repeat)
    res_c = ours_cells(releases)
    record("kerckhoffs (vectorized)", "cell locator", med, runs, res_c)
    ref_c: list[set[str]] = []
    med_r, runs_r = median_seconds(
        lambda: ref_c.__setitem__(slice(None), reference_cells(releases, pop, schema)),
        args.ref_repeat,
        warmup=0,
    )
    locs = locate_all(releases, pop, schema)
    same_c = ours_sets(releases, locs) == ref_c
    records[-1]["identical_to_reference"] = same_c
    record("reference (per-target loop)", "cell locator", med_r, runs_r, res_c)
    records[-1]["identical_to_reference"] = same_c

    # 3. cells, read back from files
    med, runs = median_seconds(lambda: ours_cells(back), args.repeat)
    res_b = ours_cells(back)
    record("kerckhoffs (vectorized)", "cell locator, releases read from files", med, runs, res_b)
    locs_b = locate_all(back, pop, schema)
    records[-1]["identical_to_reference"] = ours_sets(back, locs_b) == ref_c

    df = pd.DataFrame(records)
    print(df[["method", "run", "median_s", "identical_to_reference"]].to_string(index=False))
    if not df["identical_to_reference"].all():
        sys.exit("ours and the reference disagree")
    save(df, "composition", TITLE, label="run", limit=TARGET_S)
    log_plot(df, TITLE)


def log_plot(df: pd.DataFrame, title: str) -> None:
    """Redraw ``composition.png`` on a log axis: the reference's ~50 s bar would flatten ours
    on the linear axis of ``_timing.save``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{r.run}\n{r.method}" for r in df.itertuples()]
    colors = ["tab:blue" if m.startswith("kerckhoffs") else "tab:orange" for m in df.method]
    fig, ax = plt.subplots(figsize=(9, 4.2))
    y = np.arange(len(df))
    ax.barh(y, df.median_s, color=colors)
    for i, v in enumerate(df.median_s):
        ax.text(v * 1.08, i, f"{v:.3f} s" if v < 10 else f"{v:.1f} s", va="center", fontsize=8)
    ax.axvline(TARGET_S, color="red", linestyle="--", linewidth=1, label=f"target {TARGET_S:g} s")
    ax.set_xscale("log")
    ax.set_xlim(right=df.median_s.max() * 4)
    ax.set_yticks(y, labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("median seconds (log)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(RESULTS / "composition.png", dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
