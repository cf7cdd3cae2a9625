"""Paper 002's experiments (Zhang, Wang, Jajodia, Brodsky, "Exclusive Strategy for
Generalization Algorithms in Micro-Data Disclosure", DBSec 2008; our account of it:
``docs/theory/disclosure-sets.md``, full citation at its top).

The paper has no empirical evaluation: its "experiments" are Examples 1-8 on the 10-row patient
table. This module reproduces them and runs the two experiments we add
(``docs/theory/disclosure-sets.md#experiments``), on the disclosure-set engine
:mod:`kerckhoffs.disclosure` (naive, inclusive and exclusive publishers, and the class-wide engine):

- ``exclusive-examples``: every worked number (``docs/theory/disclosure-sets.md#worked-examples``)
  as a table, one row per quantity, with the paper's printed number (where it prints one), our value
  verified by enumeration (the ``spec`` column) and the engine's. ``|PER|`` of G0 under g1-g3;
  ``|DS|`` and the largest value share for G0, G_a and G_b under g1-g3 and both strategies; Example
  3's circles; Example 7 (the paper prints 120 instances and a share of 0.8 for E = c4; the correct
  values are **100** and **19/25 = 0.76**, ``docs/theory/disclosure-sets.md#err-example7``: 20
  instances of "case 2", which the paper says cannot exist, leave DS_3); Example 8 (68 instances,
  11/17); the outcomes table (G0, G_a, G_b and our X1, X4 where only the inclusive strategy
  releases); the exhaustive outcome counts over all 453,600 permutations of G0's sensitive multiset.
- ``exclusive-ea-utility`` / ``exclusive-ea-joint`` (E-A,
  ``docs/theory/disclosure-sets.md#experiments``): random tables of 8-12 rows, 3-7 sensitive labels,
  2-4 QI-based generalizations with increasing group sizes. The first reports how often the naive
  release is unsafe (CHK fails on the adversary's true knowledge) and how often each safe strategy
  strictly wins (releases an earlier, more useful, generalization, or releases where the other
  releases nothing); the second the joint distribution of (inclusive, exclusive, naive) outcomes.
  Both read the same sample (one per process, :meth:`Context.cached`).
- ``exclusive-eb-functions`` / ``exclusive-eb-groups`` (E-B,
  ``docs/theory/disclosure-sets.md#complexity`` and ``#experiments``): PER instances enumerated and
  wall time of the inclusive publisher (memoized and not) against the exclusive one, and the exact
  instance count of the non-memoized recursion where running it would take hours, as the number of
  generalizations grows and as the group sizes grow, on tables whose naive index is the last
  candidate (so every strategy computes a disclosure set at every level: the worst case of the
  paper's recurrence).

CHK is the paper's recursive (2,2)-diversity (:data:`~kerckhoffs.disclosure.PAPER_CHK`:
every person's largest value share over the disclosure set below 2/3, strict).

**Budget.** E-A and E-B together must run in under three minutes on the project's 2-core machine
(our speed target: ``docs/theory/choices.md#reproduction-budget``), so their grids are sized for it;
each experiment's ``notes`` says what that cost.

**Where the code is.** This module holds the measures and the experiments; the running
example and the worked-example table are in :mod:`.paper_002_examples`, E-A's random tables
and samples in :mod:`.paper_002_random`, E-B's worst-case tables and exact counts in
:mod:`.paper_002_cost` (their public names are re-exported here).
"""

from __future__ import annotations

import time

import numpy as np

from kerckhoffs.disclosure import (
    PAPER_CHK,
    TooManyInstances,
    exclusive,
    inclusive,
    per_size,
    signature,
)
from kerckhoffs.experiments.base import Context, Experiment, Plot, Row
from kerckhoffs.experiments.paper_002_cost import (
    COUNTED,
    NO_MEMO,
    NO_MEMO_LIMIT,
    no_memo_instances,
    recurrence_estimate,
    worst_case_instance,
)
from kerckhoffs.experiments.paper_002_examples import (
    G0,
    GA,
    GB,
    X1,
    X4,
    exclusive_disclosure_set,
    outcome_code,
    outcome_name,
    running_sequence,
    worked_examples,
)
from kerckhoffs.experiments.paper_002_random import (
    UTILITY_SERIES,
    UtilitySample,
    integer_partitions,
    interval,
    paper_sequence_exact,
    partition_probability,
    random_class_sample,
    random_sequence,
    random_table,
    strict_winner,
    summarize,
    utility_sample,
)

PAPER = "002"


def measure_examples(point: Row, ctx: Context) -> list[Row]:
    """The worked-example table (:func:`worked_examples`)."""
    return worked_examples(ctx)


# -- E-A: utility ------------------------------------------------------------------------------
EA_ROWS = (8, 10, 12)
EA_FUNCS = (2, 3, 4)
EA_TABLES = 300
EA_PAPER_CLASSES = 38
"""The partitions of 10 rows into at most 7 values: every class of the exact paper point."""
EA_SEEDS = (0,)
PAPER_SEQUENCE = "paper g1-g3"
RANDOM_CLASSES = "random, class-wide"
EA_RANDOM_CLASSES = 700
"""Multiset classes per point of E-A's class-wide random setting (10 rows; 2,100 in all)."""
RANDOM_SEQUENCES = "random"


def _sample(point: Row, ctx: Context) -> UtilitySample:
    seed = int(point["seed"])
    if point.get("sequence") == PAPER_SEQUENCE:
        return ctx.cached("p002:ea-paper:exact", paper_sequence_exact)
    n_rows, n_funcs = int(point["n_rows"]), int(point["n_funcs"])
    max_group = int(point.get("max_group", 8))
    if point.get("sequence") == RANDOM_CLASSES:
        classes = int(point["classes"])
        return ctx.cached(
            f"p002:ea-classes:{n_rows}:{n_funcs}:{classes}:{seed}:{max_group}",
            lambda: random_class_sample(n_rows, n_funcs, classes, seed, max_group),
        )
    tables = int(point.get("tables", EA_TABLES))
    return ctx.cached(
        f"p002:ea:{n_rows}:{n_funcs}:{tables}:{seed}:{max_group}",
        lambda: utility_sample(n_rows, n_funcs, tables, seed, max_group),
    )


def setting(point: Row) -> str:
    """The E-A setting's display name (plot panel / series)."""
    if point.get("sequence") == PAPER_SEQUENCE:
        return "paper's g1-g3, 10 rows (every table, exact)"
    if point.get("sequence") == RANDOM_CLASSES:
        return f"random, {int(point['n_rows'])} rows (class-wide)"
    return f"random, {int(point['n_rows'])} rows"


def measure_utility(point: Row, ctx: Context) -> list[Row]:
    """E-A summary: one row per quantity (``quantity``, ``count``: tables, or in the
    class-wide mode expected tables, ``percent`` of all), with ``unsafe_of_naive`` (percent
    of the naive releases that are unsafe), ``units`` (tables or classes drawn, or every
    class of the exact point), ``percent_low`` / ``percent_high`` (95 % interval over the
    units, :func:`interval`; the value itself at the exact point) and the sample's publishing
    ``seconds``."""
    s = _sample(point, ctx)
    counts = summarize(s)
    total = s.total
    released = counts["naive_released"]
    unsafe_of_naive = 100.0 * counts["naive_unsafe"] / released if released else float("nan")
    binary = point.get("sequence") == RANDOM_SEQUENCES
    bounds = {
        key: (
            (100.0 * counts[key] / total,) * 2
            if s.exact
            else tuple(100.0 * v for v in interval(s.per_unit[key], binary))
            if s.per_unit.get(key)
            else (float("nan"),) * 2  # a sample without its units
        )
        for key, _ in UTILITY_SERIES
    }
    return [
        {
            "setting": setting(point),
            "quantity": label,
            "count": counts[key],
            "percent": 100.0 * counts[key] / total,
            "percent_low": bounds[key][0],
            "percent_high": bounds[key][1],
            "unsafe_of_naive": unsafe_of_naive,
            "units": s.units,
            "seconds": s.seconds,
            "classes_exclusive_wins": s.classes_won.get("exclusive", ""),
            "classes_inclusive_wins": s.classes_won.get("inclusive", ""),
        }
        for key, label in UTILITY_SERIES
    ]


def measure_joint(point: Row, ctx: Context) -> list[Row]:
    """E-A joint distribution: one row per (inclusive, exclusive, naive) outcome triple that
    occurs (names ``g1..``/``nothing``; ``outcome`` joins them with φ for nothing, the
    paper's sign, so the figure's labels stay short), with ``count``, ``percent``, ``unsafe``
    (the naive release is unsafe) and ``winner``."""
    s = _sample(point, ctx)
    total = s.total
    rows = []
    for key in sorted(s.weight):
        names = [outcome_name(outcome_code(v)) for v in key]
        rows.append(
            {
                "setting": setting(point),
                "outcome": "/".join(n.replace("nothing", "φ") for n in names),
                "inclusive": names[0],
                "exclusive": names[1],
                "naive": names[2],
                "winner": strict_winner(key[0], key[1]),
                "count": s.weight[key],
                "unsafe": s.unsafe[key],
                "percent": 100.0 * s.weight[key] / total,
            }
        )
    return rows


# -- E-B: cost -----------------------------------------------------------------------------------
def measure_cost(point: Row, ctx: Context | None) -> list[Row]:
    """E-B: on ``repeats`` worst-case tables of the point (``n_funcs`` generalizations,
    groups of 2..``max_group`` rows, ``n_rows`` rows, ``n_values`` labels), the PER instances
    enumerated and the seconds of the exclusive publisher and the inclusive one with and
    without memoization (the last run only up to :data:`NO_MEMO_LIMIT` instances), and for
    every table the exact count of the non-memoized run (:func:`no_memo_instances`,
    strategy :data:`COUNTED`, no seconds). One row per (table, strategy), with ``per_last``
    (``|PER|`` of the last generalization) and ``recurrence`` (:func:`recurrence_estimate`).
    The same point is measured once per process (``ctx``)."""
    if ctx is not None:
        key = "p002:eb:" + ":".join(f"{k}={point[k]}" for k in sorted(point))
        return list(ctx.cached(key, lambda: measure_cost(point, None)))
    n_rows, n_funcs = int(point["n_rows"]), int(point["n_funcs"])
    n_values, max_group = int(point["n_values"]), int(point["max_group"])
    rng = np.random.default_rng([int(point["seed"]), n_rows, n_funcs, max_group, 5])
    rows = []
    for rep in range(int(point.get("repeats", 3))):
        seq, x = worst_case_instance(rng, n_rows, n_funcs, n_values, max_group)
        last = len(seq) - 1
        common = {
            "repeat": rep,
            "per_last": per_size(seq, last, signature(seq, last, x)),
            "recurrence": recurrence_estimate(seq, x),
        }
        counted, counted_release = no_memo_instances(seq, x, PAPER_CHK)
        rows.append(
            {
                **common,
                "strategy": COUNTED,
                "instances": counted,
                "seconds": float("nan"),
                "released": outcome_name(outcome_code(counted_release)),
            }
        )
        runs = ["exclusive", "inclusive (memo)"]
        if counted <= NO_MEMO_LIMIT:
            runs.append(NO_MEMO)
        else:
            nan = float("nan")
            rows.append(
                {
                    **common,
                    "strategy": NO_MEMO,
                    "instances": nan,
                    "seconds": nan,
                    "released": "not run (count above limit)",
                }
            )
        for name in runs:
            t0 = time.perf_counter()
            try:
                got = (
                    exclusive(seq, x, PAPER_CHK)
                    if name == "exclusive"
                    else inclusive(seq, x, PAPER_CHK, memo=name == "inclusive (memo)")
                )
            except TooManyInstances:
                nan = float("nan")
                rows.append(
                    {
                        **common,
                        "strategy": name,
                        "instances": nan,
                        "seconds": nan,
                        "released": "refused (PER bound)",
                    }
                )
                continue
            seconds = time.perf_counter() - t0
            rows.append(
                {
                    **common,
                    "strategy": name,
                    "instances": got.instances,
                    "seconds": seconds,
                    "released": outcome_name(outcome_code(got.released)),
                }
            )
    return _long_cost(rows)


def _long_cost(rows: list[Row]) -> list[Row]:
    """One row per (table, strategy, measure); the counted strategy has no seconds row (it
    was not run, so it has no time to plot)."""
    out = []
    for r in rows:
        relative = r["instances"] / r["per_last"]
        measures = [
            ("PER instances enumerated", r["instances"]),
            ("instances / |PER| of the last generalization", relative),
        ]
        if r["strategy"] != COUNTED:
            measures.append(("seconds", r["seconds"]))
        out += [{**r, "measure": label, "value": value} for label, value in measures]
    return out


# -- the experiments -----------------------------------------------------------------------------
EB_FUNCS = (1, 2, 3, 4, 5)
EB_GROUPS = (3, 4, 5, 6, 8)
EB_ROWS = 12
EB_VALUES = 4
EB_REPEATS = 5

_EA_NOTE = (
    "Random tables: n rows in QI order, values drawn uniformly from 3-7 labels (recoded to "
    "those that occur); each generalization a random partition into contiguous groups of 2 to "
    "8 rows (8 rows), 2-6 (10 rows) or 2-5 (12 rows), the number of groups strictly decreasing "
    "(group sizes increasing; partitions not nested). A fresh sequence per table. CHK = "
    "recursive (2,2)-diversity. 'Strictly better': releases an earlier generalization, or "
    "releases where the other releases nothing. Settings: 'random' = 300 single tables per "
    "point, one seed; 'random, class-wide' = 700 random (sequence, table) pairs per point, "
    "each table's whole multiset class published at once by the class-wide engine (each class "
    "weighs 1, its tables 1/|class|; count = expected tables out of 700); the paper's own g1-g3 "
    "= every table the generator can draw, exactly: one class per partition of 10 rows into at "
    "most 7 values (38 classes; CHK is symmetric in the values), each weighted by its "
    "probability (count = probability, summing to 1). percent_low/percent_high: 95 % interval "
    "over the units (Wilson for single tables, normal over class shares; the exact point has "
    "none). "
)

_EB_NOTE = (
    "Worst-case tables: random sequences (as E-A, but with the n coarsest group counts, so group "
    "sizes grow with the largest group allowed) and tables of 12 rows with 4 labels, redrawn "
    "until the naive index is the last generalization, so every earlier PER fails CHK and (by the "
    "lemma on share rules, docs/theory/disclosure-sets.md#chk) both safe strategies compute a "
    "disclosure set at every level. Instances = PER instances enumerated (Outcome.instances); 5 "
    "tables per point, median plotted. 'inclusive (no memo), counted' is the exact number of "
    "instances the non-memoized recursion (paper 002's Table 3, the algorithm its section 3 "
    "analyses) enumerates on each table, computed once per distinct (level, signature) without "
    "running it; it equals the measured count of every run. The non-memoized publisher is run "
    "where that count is at most 20 million (about 15 s); above, its row is NaN ('not run'). "
    "Seconds are measured only. The CSV also has |PER| of the last generalization (per_last) and "
    "the paper's section-3 recurrence evaluated with the table's own PER sizes (recurrence): an "
    "estimate, not a bound (one table needs more). Where the non-memoized publisher ran, its line "
    "covers the counted one: they are equal at every table. "
)

EB_LABELS = ((NO_MEMO, "inclusive (no memo), run: its line covers the count's (equal)"),)
"""E-B's legend: where the non-memoized publisher ran, its line lies on the exact count's."""

EA_MAX_GROUP = {8: 8, 10: 6, 12: 5}
"""Largest group per table size in E-A: bounds the inclusive recursion's cost (the budget)."""


def _ea_grid() -> list[Row]:
    random_points: list[Row] = [
        {
            "sequence": RANDOM_SEQUENCES,
            "n_rows": n,
            "n_funcs": f,
            "max_group": EA_MAX_GROUP[n],
            "tables": EA_TABLES,
        }
        for n in EA_ROWS
        for f in EA_FUNCS
    ]
    paper: Row = {
        "sequence": PAPER_SEQUENCE,
        "n_rows": 10,
        "n_funcs": 3,
        "classes": EA_PAPER_CLASSES,
    }
    classes: list[Row] = [
        {
            "sequence": RANDOM_CLASSES,
            "n_rows": 10,
            "n_funcs": f,
            "max_group": EA_MAX_GROUP[10],
            "classes": EA_RANDOM_CLASSES,
        }
        for f in EA_FUNCS
    ]
    # the paper's point last: each figure then gives every setting the same colour in every
    # panel (the paper's exists only at 3 generalizations)
    return [*random_points, *classes, paper]


EXPERIMENTS = [
    Experiment(
        name="exclusive-examples",
        paper=PAPER,
        figure="Examples 1-8",
        title="worked examples, paper vs ours",
        grid=[{"table": "running example"}],
        measure=measure_examples,
        plot=Plot(
            x="figure_panel",
            y="quantities",
            xlabel="group of quantities (table / example)",
            ylabel="quantities",
            series="verdict",
            kind="bar",
            legend_below=True,
        ),
        claim=(
            "|PER(G_1)| = 16 (printed 2x2x1x2); Example 3: 9 g1-generalizations, 8 pass; "
            "Example 7: DS_3 (inclusive) has 72 + 24 + 24 = 120 instances, E = c4 share 0.8, no "
            "instance in case 2; Example 8: DS_3 (exclusive) has 20 + 24 + 24 = 68, share "
            "0.647; G0: naive releases G_2 (E, F certainly c4), inclusive and exclusive release "
            "nothing; G_b: only the exclusive strategy releases (G_3)."
        ),
        notes=(
            "Plot: per group of quantities, how many the paper prints and we reproduce, how many "
            "the paper prints wrong (our value = our verified correction) and how many only we "
            "give (ours match). Columns paper / spec / ours (floats, NaN where absent) and "
            "paper_text / spec_text / ours_text (exact fractions, outcome names; the per-person "
            "rows list A..J); the spec column holds our values verified by enumeration. Example 7 "
            "as printed is wrong: 20 instances of case 2 leave DS_3, which has 100 instances with "
            "E = c4 in 76 (19/25 = 0.76); the conclusion (inclusive releases nothing) stands. The "
            "exhaustive counts come from the class-wide engine (all 453,600 tables with G0's "
            "sensitive multiset)."
        ),
    ),
    Experiment(
        name="exclusive-ea-utility",
        version=2,  # the paper's sequence exact over every table; 95 % intervals
        varies=("seconds",),
        paper=PAPER,
        figure="E-A",
        title="random tables: naive unsafe, inclusive vs exclusive strict wins",
        grid=_ea_grid(),
        seeds=EA_SEEDS,
        measure=measure_utility,
        plot=Plot(
            x="n_funcs",
            y="percent",
            xlabel="number of generalizations",
            ylabel="% of tables (log scale above 0.1 %)",
            series="quantity",
            panels="setting",
            symlog=0.1,  # the 0-4 % differences beside the 40-99 % release rates
        ),
        claim=(
            "(No experiment in the paper.) Utility incomparable: each safe strategy can release "
            "where the other releases nothing; the naive algorithm is unsafe. We expect "
            "both strict directions to occur, the exclusive strategy winning somewhat more "
            "often."
        ),
        notes=_EA_NOTE + "Column unsafe_of_naive: % of the naive releases that are unsafe.",
    ),
    Experiment(
        name="exclusive-ea-joint",
        version=2,  # as exclusive-ea-utility
        paper=PAPER,
        figure="E-A",
        title="random tables: joint distribution of (inclusive, exclusive, naive) outcomes",
        grid=_ea_grid(),
        seeds=EA_SEEDS,
        measure=measure_joint,
        plot=Plot(
            x="outcome",
            y="percent",
            xlabel="inclusive / exclusive / naive",
            ylabel="% of tables",
            series="setting",
            kind="bar",
            logy=True,
            panels="n_funcs",
        ),
        claim="(No experiment in the paper.) See exclusive-ea-utility.",
        notes=_EA_NOTE + "Same sample as exclusive-ea-utility (one draw per process).",
    ),
    Experiment(
        name="exclusive-eb-functions",
        version=2,  # the exact non-memoized count added; the run limit on it, not the estimate
        varies=("seconds", "value[seconds]"),
        paper=PAPER,
        figure="E-B",
        title="cost vs number of generalizations: inclusive (memo / no memo) vs exclusive",
        grid=[
            {
                "n_rows": EB_ROWS,
                "n_funcs": f,
                "n_values": EB_VALUES,
                "max_group": 6,
                "repeats": EB_REPEATS,
            }
            for f in EB_FUNCS
        ],
        measure=measure_cost,
        plot=Plot(
            x="n_funcs",
            y="value",
            xlabel="number of generalizations (groups of 2-6 rows)",
            ylabel="value",
            ylabel_per_panel=True,
            series="strategy",
            panels="measure",
            logy=True,
            labels=EB_LABELS,
        ),
        claim=(
            "Inclusive: x_i = (sum_{j<i} x_j) * |PER(G_i)|, O(|PER(G_max)|^n), exponential in "
            "the number of generalizations; exclusive: O(n^2 |PER(G_max)|), polynomial."
        ),
        notes=_EB_NOTE + "n = 1..5 generalizations, groups of 2-6 rows.",
    ),
    Experiment(
        name="exclusive-eb-groups",
        version=2,  # as exclusive-eb-functions
        varies=("seconds", "value[seconds]"),
        paper=PAPER,
        figure="E-B",
        title="cost vs group size: inclusive (memo / no memo) vs exclusive, 3 generalizations",
        grid=[
            {
                "n_rows": EB_ROWS,
                "n_funcs": 3,
                "n_values": EB_VALUES,
                "max_group": g,
                "repeats": EB_REPEATS,
            }
            for g in EB_GROUPS
        ],
        measure=measure_cost,
        plot=Plot(
            x="max_group",
            y="value",
            xlabel="largest group (rows), 3 generalizations",
            ylabel="value",
            ylabel_per_panel=True,
            series="strategy",
            panels="measure",
            logy=True,
            labels=EB_LABELS,
        ),
        claim=(
            "Exclusive cost linear in |PER(G_max)|, which is exponential in the group size "
            "(the paper's 'polynomial in the size of the table' holds in |PER| and n, not in the "
            "table size); inclusive "
            "multiplies PER sizes across levels."
        ),
        notes=_EB_NOTE + "3 generalizations, largest group 3, 4, 5, 6, 8 rows.",
    ),
]

__all__ = [
    "COUNTED",
    "EA_PAPER_CLASSES",
    "EXPERIMENTS",
    "G0",
    "GA",
    "GB",
    "PAPER_SEQUENCE",
    "RANDOM_CLASSES",
    "RANDOM_SEQUENCES",
    "UTILITY_SERIES",
    "X1",
    "X4",
    "UtilitySample",
    "exclusive_disclosure_set",
    "integer_partitions",
    "interval",
    "measure_cost",
    "measure_examples",
    "measure_joint",
    "measure_utility",
    "no_memo_instances",
    "partition_probability",
    "random_sequence",
    "random_table",
    "recurrence_estimate",
    "running_sequence",
    "strict_winner",
    "summarize",
    "utility_sample",
    "worked_examples",
    "worst_case_instance",
]
