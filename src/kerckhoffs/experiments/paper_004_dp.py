"""Paper 004's differential-privacy alternative (Ganta, Kasiviswanathan, Smith, KDD 2008,
sections 4-5: differential privacy, semantic privacy and its theorems, the DP mechanisms, the
exact semantic-privacy checker and the analytic baseline, from
``docs/theory/composition.md#differential-privacy`` to ``#analytic-baseline``, and the
properties the tests check, ``docs/theory/composition.md#properties``): our DP experiments
(``docs/theory/composition.md#experiments``), X1-X4 beside the composition figures of
:mod:`.paper_004_composition`, whose setting they reuse (same data, same overlapping subsets,
same targets, same caches).

* **X1** (``dp-x1-breach``): DP histograms (SA in the cells, public hierarchy levels) of the
  two Adult subsets at epsilon 0.1 ... 4, attacked by the thresholded intersection attack
  (``dp-intersection``: a cell whose noisy count is at least 1 holds its value), beside the
  intersection attack's breach of Mondrian and MDAV at k = 5 on the same subsets and targets.
  Two public cell domains: *coarse* (:data:`COARSE_LEVELS`, 20,160 cells) and *fine*
  (:data:`FINE_LEVELS`, 322,560 cells). Breaches are split into all perfect breaches
  (``|S_i| = 1``) and the *correct* ones (naming the target's true value); a noisy breach
  that names a wrong value discloses nothing.
* **X2** (``dp-x2-utility``): query error (paper 000's COUNT workload, 3 QI ranges and an SA
  range, 5 % selectivity; :func:`kerckhoffs.metrics.query_error` with ``source=``) of the DP
  histogram vs epsilon beside Mondrian k-anonymity at k = 5 ... 50, on all of Adult.
* **X3** (``dp-x3-semantic``): the exact semantic-privacy check
  (``docs/theory/composition.md#semantic-checker``, :mod:`kerckhoffs.dp.semantic`) of randomized
  response and the geometric count on tiny domains: the worst statistical distance between the
  real-world and person-removed posteriors (over the uniform prior and random priors) against
  Proposition 14's bound ``e^eps - 1``, the tighter ``tanh(eps)`` we derive from it
  (``docs/theory/composition.md#theorems``) and, for the ``(eps, delta)`` variant that publishes
  everything with probability ``delta``, Theorem 15's ``e^{3 eps} - 1 + 2 sqrt(delta)``. No data.
* **X4** (``dp-x4-budget``): two to four nested releases of the Census stand-in (Fig. 8's
  setting): the k-anonymous releases' breach (Mondrian, k = 5 and 10) beside each person's
  composed epsilon by the ledger's basic composition (:class:`kerckhoffs.dp.ledger.Ledger`)
  when every release is instead a DP histogram at epsilon 1 per release, and the
  ``dp-intersection`` breach of those DP releases: what a budget buys.

Kerckhoffs (``docs/theory/choices.md#opendp``): the DP noise is OpenDP's and cannot be seeded, so
X1, X2 and X4 measure every DP point in several independent runs (:data:`X1_RUNS`, :data:`X2_RUNS`,
:data:`X4_RUNS`; the ``run`` column) and declare their noisy columns in ``varies``;
:func:`run_summary` gives each point's mean and 95 % intervals. The subsets
(``docs/theory/composition.md#subsets``) and the random priors of X3 are seeded; X3 is exact. Time
(CPU): X1 about 7 minutes, X2 about 3, X4 about 2, X3 2 s; one seed (the composition figures use
three), Adult only in X1 and X2, k in {5, 10} in X4.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs.algorithms.registry import get as get_algorithm
from kerckhoffs.attacks.composition import OverlappingReleases, take_rows
from kerckhoffs.attacks.composition.dp_intersection import dp_intersection_attack
from kerckhoffs.attacks.locate import locate_all
from kerckhoffs.data.hierarchy import Hierarchy
from kerckhoffs.data.table import Table
from kerckhoffs.dp.counts import DPRelease, dp_histogram
from kerckhoffs.dp.ledger import Ledger
from kerckhoffs.errors import ParameterError
from kerckhoffs.experiments.base import Context, Experiment, Plot
from kerckhoffs.experiments.paper_004_composition import attack_metrics, subsets_of
from kerckhoffs.experiments.paper_004_setting import census_frame, table_of
from kerckhoffs.models import KAnonymity

PAPER = "004"
EPSILONS = (0.1, 0.5, 1.0, 2.0, 4.0)
K_REF = 5
"""The k of the k-anonymous releases X1 compares with (the paper's headline k)."""
COARSE_LEVELS = {
    "age": 2,
    "workclass": 2,
    "education": 2,
    "marital-status": 2,
    "race": 1,
    "sex": 0,
    "native-country": 2,
}
"""Adult's coarse public cell domain: 10-year ages, 2 workclasses, 3 education levels, 2
marital states, 2 races, sex, 3 country regions (1,440 QI cells) x 14 occupations."""
FINE_LEVELS = {
    "age": 1,
    "workclass": 1,
    "education": 1,
    "marital-status": 1,
    "race": 1,
    "sex": 0,
    "native-country": 2,
}
"""Adult's fine public cell domain: 5-year ages, 4 workclasses, 6 education levels, 4 marital
states, 2 races, sex, 3 regions (23,040 QI cells, under one person per QI cell per subset)."""
DOMAINS = {"coarse": COARSE_LEVELS, "fine": FINE_LEVELS}
K_X2 = (5, 10, 20, 30, 50)
X2_QUERIES = 2000
CENSUS_LEVELS = {
    "age": 2,
    "sex": 0,
    "education": 2,
    "marital_status": 2,
    "race": 1,
    "workclass": 2,
    "country": 2,
}
"""The Census stand-in's public cell domain for X4 (1,920 QI cells x 46 occupations)."""
X4_EPSILON = 1.0
X4_K = (5, 10)
SEEDS = (0,)
X1_RUNS = 8
"""Independent runs of every X1 point: OpenDP's noise cannot be seeded, so a point is a fresh
draw each run (the grid's ``run`` index keeps each run's result in the cache; it is a run
number, not a seed). REPRODUCTION.md states each point's mean and the 95 % prediction
interval of a single run (:func:`run_summary`). Eight runs decide every verdict (the
intervals stay far from Mondrian's and MDAV's breaches where the expectation speaks) at
about 7 minutes of CPU: each run draws noise for 685,440 cells per epsilon (two releases on
two domains), 9.5 of its 10.6 s in OpenDP's sampler."""
X4_RUNS = 20
"""Independent runs of every X4 point (as :data:`X1_RUNS`; a run is 5.7 s of CPU)."""
X2_RUNS = 3
"""Independent runs of every DP point of X2 (its query errors move less between runs)."""
DATA_NOTE = (
    "Setting of the composition figures (paper_004_composition): Adult training split "
    "(30,162 rows, SA occupation) or the Census stand-in (70,187 rows), overlap 5000, the "
    "rest split evenly; one seed (0), where the composition figures use three (time budget). "
    "DP histograms: the registered dp-histogram (OpenDP geometric noise, substitution "
    "neighbours, sensitivity 2, scale 2/epsilon, clamped at 0 and rounded); OpenDP cannot be "
    "seeded, so DP numbers vary between runs by sampling error: X1, X2 and X4 run every DP "
    f"point {X1_RUNS}, {X2_RUNS} and {X4_RUNS} times (column run); the plots show the median "
    "of the runs."
)


# -- repeated runs: mean and intervals ----------------------------------------------------------
T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip
"""Student's t 0.975-quantiles for 1 ... 30 degrees of freedom (printed tables)."""


def run_summary(
    df: pd.DataFrame, value: str, by: list[str], floor: float | None = 0.0
) -> pd.DataFrame:
    """Each point's independent runs summarised: ``runs``, ``mean``, ``sd``; ``mean_lo`` /
    ``mean_hi``, the 95 % t-interval of the mean (where the mean of infinitely many runs
    lies); ``single_lo`` / ``single_hi``, the 95 % prediction interval of one more single run,
    ``mean +- t sd sqrt(1 + 1/runs)`` (what one release may give; a fresh measurement's mean
    of the same number of runs falls inside it with probability well above 95 %), cut at
    ``floor`` (a share cannot be negative); ``min`` / ``max`` of the runs. The t-intervals
    assume roughly normal runs (sums over thousands of people's noisy cells); REPRODUCTION.md
    quotes the mean and the prediction interval."""
    g = df.groupby(by, sort=False)[value]
    out = g.agg(runs="count", mean="mean", sd="std", min="min", max="max").reset_index()
    t = np.array([T975[min(n, 31) - 2] if n >= 2 else np.nan for n in out["runs"]])
    n = out["runs"].to_numpy(dtype=float)
    sd = out["sd"].fillna(0.0).to_numpy()
    half_mean, half_single = t * sd / np.sqrt(n), t * sd * np.sqrt(1 + 1 / n)
    out["mean_lo"], out["mean_hi"] = out["mean"] - half_mean, out["mean"] + half_mean
    out["single_lo"], out["single_hi"] = out["mean"] - half_single, out["mean"] + half_single
    if floor is not None:
        for c in ("mean_lo", "single_lo"):
            out[c] = out[c].clip(lower=floor)
    return out


# -- X1: breach of DP histograms vs k-anonymity -------------------------------------------------
CENSUS_OCCUPATION_CODES = tuple(str(c) for c in range(1, 47))
"""The Census-Income (KDD) codebook's detailed occupation recodes 1-46 (0, "not in universe",
is filtered out of the stand-in): the public SA domain of the Census DP histograms."""


def dp_table(ctx: Context, dataset: str) -> Table:
    """The table of :func:`~.paper_004_setting.table_of` (same rows, same QIs) with a
    public hierarchy on the SA, so that the DP cell domain may hold the SA values: a DP
    histogram refuses a domain read from the data
    (``docs/theory/composition.md#dp-mechanisms``). Adult: the project's
    occupation hierarchy file; Census stand-in: the codebook's codes 1-46, flat."""

    def make() -> Table:
        base = table_of(ctx, dataset)
        sa = base.sa_name
        if dataset == "adult":
            from kerckhoffs.datasets import load_adult_training

            hierarchy = Hierarchy.read_csv(
                ctx.examples / "adult" / "hierarchies" / "occupation.csv"
            )
            frame = load_adult_training(ctx.data_dir / "adult")
        else:
            hierarchy = Hierarchy([[c, "*"] for c in CENSUS_OCCUPATION_CODES], sa)
            frame = census_frame(ctx)
        columns = tuple(
            dataclasses.replace(c, hierarchy=hierarchy) if c.name == sa else c
            for c in base.schema.columns
        )
        return Table.encode(frame, dataclasses.replace(base.schema, columns=columns))

    return ctx.cached(f"p004dp:table:{dataset}", make)


def dp_releases(
    ctx: Context,
    dataset: str,
    epsilon: float,
    levels: dict[str, int],
    seed: int,
    n_chunks: int,
    n_rel: int,
) -> list[DPRelease]:
    """DP histograms (SA in the cells, ``levels``) of the first ``n_rel`` of the ``n_chunks``
    subsets of ``seed`` (:func:`~.paper_004_composition.subsets_of`)."""
    subs, _ = subsets_of(ctx, dataset, n_chunks, seed)
    table = dp_table(ctx, dataset)
    return [
        dp_histogram(take_rows(table, subs[j]), epsilon, levels=levels, with_sa=True)
        for j in range(n_rel)
    ]


def dp_attack(
    ctx: Context,
    dataset: str,
    releases: list[DPRelease],
    seed: int,
    n_chunks: int,
    layout: str = "",
) -> dict[str, Any]:
    """``dp-intersection`` on ``releases`` for the overlap population, located by their QIs
    through the published cells; shares in percent of the overlap.

    ``layout`` names the releases' public cell domain (their levels): where it is given, the
    targets' locations are computed once per layout and reused by every run. A DP histogram
    publishes every cell of its public domain, zeros included, so which cells cover a
    target does not depend on the noise, only which of them the attack keeps (a count of at
    least 1) does (``tests/test_experiments_004_dp.py`` checks this on two draws)."""
    subs, common = subsets_of(ctx, dataset, n_chunks, seed)
    table = dp_table(ctx, dataset)
    over = OverlappingReleases(table, list(releases), list(subs[: len(releases)]), common)

    def locate() -> Any:
        return locate_all(releases, over.population(), table.schema)

    if layout:
        key = f"p004dp:located:{dataset}:{layout}:{seed}:{n_chunks}:{len(releases)}"
        located = ctx.cached(key, locate)
    else:
        located = locate()
    d = dp_intersection_attack(releases, located, true_values=over.true_values()).details
    m = max(int(d["targets"]), 1)
    return {
        "targets": int(d["targets"]),
        "perfect_pct": 100.0 * int(d["perfect_breach"]) / m,
        "correct_pct": 100.0 * int(d["correct_breach"]) / m,
        "truth_in_set": float(d["truth_in_set"]),
        "ea_post": float(d["effective_anonymity_after"]),
    }


def measure_x1(point: dict[str, Any], ctx: Context) -> list[dict[str, Any]]:
    """One epsilon: the DP histograms' breach on both cell domains, and (the same numbers at
    every epsilon, for the plot) the k-anonymous releases' breach at k = 5."""
    eps, seed = float(point["epsilon"]), int(point["seed"])
    rows: list[dict[str, Any]] = []
    for name, levels in DOMAINS.items():
        rels = dp_releases(ctx, "adult", eps, levels, seed, 2, 2)
        m = dp_attack(ctx, "adult", rels, seed, 2, layout=name)
        cells = rels[0].table.n
        for what, key in (("correct", "correct_pct"), ("all", "perfect_pct")):
            rows.append(
                {
                    "series": f"DP histogram, {name} ({cells:,} cells): {what} breaches",
                    "breach_pct": m[key],
                    "cells": cells,
                    **m,
                }
            )
    for scheme in ("mondrian", "mdav"):
        k = attack_metrics(ctx, "adult", (scheme, scheme), {"k": K_REF}, seed)
        rows.append(
            {
                "series": f"{scheme.upper() if scheme == 'mdav' else 'Mondrian'} k = {K_REF} "
                "(oracle locator; every breach correct)",
                "breach_pct": k["pvp100"],
                "perfect_pct": k["pvp100"],
                "correct_pct": k["pvp100"],
                "targets": k["targets"],
                "truth_in_set": k["truth_in_set"],
                "ea_post": k["ea_post"],
            }
        )
    return rows


# -- X2: utility --------------------------------------------------------------------------------
def _x2_workload(ctx: Context) -> Any:
    from kerckhoffs.metrics import Workload

    table = dp_table(ctx, "adult")
    return ctx.cached(
        "p004dp:x2-workload", lambda: Workload.draw(table, n_queries=X2_QUERIES, seed=0)
    )


def measure_x2(point: dict[str, Any], ctx: Context) -> list[dict[str, Any]]:
    """Query error of one release of all of Adult: a DP histogram (``epsilon``, both cell
    domains) or Mondrian (``k``)."""
    from kerckhoffs.metrics import query_error

    table = dp_table(ctx, "adult")
    work = _x2_workload(ctx)
    scheme, param = str(point["scheme"]), float(point["param"])
    rows = []
    if scheme == "dp":
        for name, levels in DOMAINS.items():
            rel = dp_histogram(table, param, levels=levels, with_sa=True)
            err = query_error(rel, work, source=table)
            rows.append(
                {
                    "panel": "(a) DP histogram (x = epsilon)",
                    "series": f"{name} cells ({rel.table.n:,})",
                    "mean_error": err.mean,
                    "median_error": err.median,
                }
            )
    elif scheme == "mondrian":
        k_rel = get_algorithm("mondrian").run(
            table, [KAnonymity(int(param))], categorical_cuts="median"
        )
        err = query_error(k_rel, work)
        rows.append(
            {
                "panel": "(b) Mondrian k-anonymity (x = k)",
                "series": "Mondrian",
                "mean_error": err.mean,
                "median_error": err.median,
                "groups": k_rel.partition.n_groups,
            }
        )
    else:
        raise ParameterError(f"dp-x2: unknown scheme {scheme!r}")
    return rows


# -- X3: exact semantic privacy vs the bounds --------------------------------------------------
VERBATIM_PANEL = "randomized response + verbatim, delta = 1/100"
THM15_PANEL = "Theorem 15 where it is not vacuous, delta = 1/10,000"
X3_EXP_EPS = (Fraction(5, 4), Fraction(2), Fraction(3), Fraction(5))
"""``e^eps`` (exact rationals): eps = 0.22, 0.69, 1.10, 1.61."""
X3_DELTA = Fraction(1, 100)
X3_SMALL_DELTA = Fraction(1, 10_000)
"""The delta at which Theorem 15 says something. Its ``eps' = e^{3 eps} - 1 + 2 sqrt(delta)``
is below 1 (a statistical distance never exceeds 1, so a bound of 1 or more cannot fail)
only when ``e^{3 eps} < 2 - 2 sqrt(delta)``: at delta = 1/100 that needs e^eps < 1.8^(1/3) =
1.216, below every point of :data:`X3_EXP_EPS` (there eps' >= 1.15); at delta = 1/10,000 it
needs e^eps < 1.98^(1/3) = 1.256, which :data:`X3_THM15_EXP_EPS` spans."""
X3_THM15_EXP_EPS = (
    Fraction(21, 20),
    Fraction(11, 10),
    Fraction(23, 20),
    Fraction(6, 5),
    Fraction(5, 4),
)
"""``e^eps`` of the Theorem 15 panel: eps = 0.049 ... 0.223, eps' = 0.18 ... 0.97 (all below 1)."""
X3_CONTROL_DELTA = Fraction(1, 10)
"""The verbatim probability of the control mechanism: randomized response that publishes the
database with probability 1/10, checked against the bounds of delta = 1/10,000. It is not
(eps, 1/10,000)-DP, and Def. 13's check must fail on it (its bad mass, about 3/4 of 1/10,
exceeds delta' = 0.02-0.03): the check is one that can fail."""
X3_TRIALS = 40


def _x3_mechanism(name: str, exp_eps: Fraction) -> tuple[Any, tuple[int, ...], int]:
    from kerckhoffs.dp.semantic import geometric_count, randomized_response, with_verbatim

    if name == "randomized response":
        return randomized_response(exp_eps, (0, 1)), (0, 1), 2
    if name == "geometric count":
        return geometric_count(exp_eps, 3), (0, 1), 3
    if name == VERBATIM_PANEL:
        inner: Any = randomized_response(exp_eps, (0, 1))  # (the semantic module's types)
        return with_verbatim(inner, X3_DELTA), (0, 1), 2
    raise ParameterError(f"dp-x3: unknown mechanism {name!r}")


def measure_theorem15(exp_eps: Fraction) -> list[dict[str, Any]]:
    """Theorem 15 checked as stated (Def. 13: with probability at least ``1 - delta'`` over
    the database, drawn from the uniform prior, and the transcript, every person's SD is at
    most ``eps'``) at delta = 1/10,000, where ``eps' < 1``: on randomized response + verbatim
    (n = 2), the geometric count + verbatim (n = 3), and a control that is not
    (eps, 1/10,000)-DP (verbatim with probability 1/10), which must fail. Rows: ``eps'``,
    ``delta'`` for n = 2 and 3, and each mechanism's exact probability that some SD exceeds
    ``eps'`` (``within_bound``: at most its ``delta'``; ``control`` marks the control)."""
    from kerckhoffs.dp.semantic import (
        geometric_count,
        randomized_response,
        semantic_privacy,
        theorem15_bound,
        uniform_prior,
        with_verbatim,
    )

    eps = math.log(float(exp_eps))
    rr: Any = randomized_response(exp_eps, (0, 1))  # (the semantic module's types)
    geometric: Any = geometric_count(exp_eps, 3)
    checked: tuple[tuple[str, Any, int, bool], ...] = (
        ("randomized response + verbatim", with_verbatim(rr, X3_SMALL_DELTA), 2, False),
        (
            "geometric count + verbatim",
            with_verbatim(geometric, X3_SMALL_DELTA),
            3,
            False,
        ),
        ("control: verbatim with probability 1/10", with_verbatim(rr, X3_CONTROL_DELTA), 2, True),
    )
    eps_prime = theorem15_bound(exp_eps, X3_SMALL_DELTA, 2)[0]
    base = {"panel": THM15_PANEL, "epsilon": eps, "exp_eps": str(exp_eps), "delta": "1/10000"}
    rows: list[dict[str, Any]] = [
        {**base, "n": 2, "quantity": "Theorem 15 eps'", "value": eps_prime},
    ]
    for n in (2, 3):
        rows.append(
            {
                **base,
                "n": n,
                "quantity": f"Theorem 15 delta' (n = {n})",
                "value": theorem15_bound(exp_eps, X3_SMALL_DELTA, n)[1],
            }
        )
    for label, mech, n, control in checked:
        delta_prime = theorem15_bound(exp_eps, X3_SMALL_DELTA, n)[1]
        bad = semantic_privacy(mech, uniform_prior((0, 1), n), default=0).bad_mass(eps_prime)
        rows.append(
            {
                **base,
                "n": n,
                "quantity": f"P(some SD > eps'): {label}",
                "value": float(bad),
                "bad_mass_exact": str(bad),
                "delta_prime": delta_prime,
                "within_bound": bool(eps_prime < 1 and float(bad) <= delta_prime),
                "control": control,
            }
        )
    return rows


def measure_x3(point: dict[str, Any], ctx: Context) -> list[dict[str, Any]]:
    """Worst SD of one mechanism at one ``e^eps`` (uniform prior; worst over random priors)
    and the bounds it must respect; or Theorem 15's check (:func:`measure_theorem15`)."""
    from kerckhoffs.dp.semantic import (
        proposition14_bound,
        semantic_privacy,
        tanh_bound,
        theorem15_bound,
        uniform_prior,
        worst_over_priors,
    )

    name = str(point["mechanism"])
    exp_eps = Fraction(str(point["exp_eps"]))
    if name == THM15_PANEL:
        return measure_theorem15(exp_eps)
    mech, domain, n = _x3_mechanism(name, exp_eps)
    uniform = semantic_privacy(mech, uniform_prior(domain, n), default=0).worst_sd
    worst, _ = worst_over_priors(
        mech, domain, n, trials=X3_TRIALS, default=0, seed=int(point["seed"])
    )
    eps = math.log(float(exp_eps))
    quantities: list[tuple[str, float]] = [
        ("worst SD, uniform prior", float(uniform)),
        ("worst SD over priors", float(worst)),
    ]
    if name == VERBATIM_PANEL:
        quantities.append(
            ("Theorem 15 bound e^(3eps)-1+2sqrt(delta)", theorem15_bound(exp_eps, X3_DELTA, n)[0])
        )
    else:
        quantities.append(("Proposition 14 bound e^eps-1", float(proposition14_bound(exp_eps))))
        quantities.append(("tanh(eps) bound (derived)", float(tanh_bound(exp_eps))))
    bound = min(v for q, v in quantities if "bound" in q)
    return [
        {
            "panel": name,
            "epsilon": eps,
            "exp_eps": str(exp_eps),
            "n": n,
            "quantity": q,
            "value": v,
            "within_bound": bool(float(worst) <= bound + 1e-12),
        }
        for q, v in quantities
    ]


# -- X4: composed epsilon vs the breach of n releases -------------------------------------------
def composed_epsilon(subsets: list[np.ndarray], epsilon: float) -> pd.Series:
    """Each person's total epsilon over releases of ``subsets`` at ``epsilon`` each, by the
    ledger's basic composition: a Series indexed by source row (as text, the ledger's ids)."""
    ledger = Ledger()
    for j, rows in enumerate(subsets):
        ledger.record(f"release {j + 1}", epsilon, 0.0, rows.astype(str))
    return ledger.spent()["epsilon"]


def measure_x4(point: dict[str, Any], ctx: Context) -> list[dict[str, Any]]:
    """n = 2, 3, 4 nested Census releases (Fig. 8): Mondrian's breach at k, the DP
    histograms' breach at epsilon 1 each, and the composed epsilon of the overlap and of the
    others."""
    k, seed = int(point["k"]), int(point["seed"])
    subs, common = subsets_of(ctx, "census", 4, seed)
    rows = []
    # the DP side does not depend on k: measured once per run, at the first k. The n
    # releases are the first n of one run's four (nested: n = 3 adds a release to n = 2's
    # two, as Fig. 8 adds subsets and as the ledger composes them)
    dp_side = k == X4_K[0]
    rels = dp_releases(ctx, "census", X4_EPSILON, CENSUS_LEVELS, seed, 4, 4) if dp_side else []
    for n_rel in (2, 3, 4):
        m = attack_metrics(ctx, "census", ("mondrian",) * n_rel, {"k": k}, seed, n_chunks=4)
        spent = composed_epsilon(list(subs[:n_rel]), X4_EPSILON)
        shared = spent.index.isin(common.astype(str))
        overlap_eps = float(spent[shared].mean())
        other_eps = float(spent[~shared].mean())
        common_row = {"n_rel": n_rel, "releases": f"n = {n_rel}", "k": k}
        rows.append(
            {
                **common_row,
                "metric": "(a) perfect breach, % of overlap",
                "series": f"Mondrian k = {k}",
                "value": m["pvp100"],
            }
        )
        if dp_side:
            d = dp_attack(ctx, "census", rels[:n_rel], seed, 4, layout="census")
            rows.append(
                {
                    **common_row,
                    "metric": "(a) perfect breach, % of overlap",
                    "series": f"DP histograms, epsilon {X4_EPSILON:g} each: correct breaches",
                    "value": d["correct_pct"],
                    "all_breaches_pct": d["perfect_pct"],
                }
            )
            for who, val in (("overlap (in every release)", overlap_eps), ("others", other_eps)):
                rows.append(
                    {
                        **common_row,
                        "metric": "(b) composed epsilon per person (basic composition)",
                        "series": f"DP, {who}",
                        "value": val,
                    }
                )
    return rows


# -- the experiments ----------------------------------------------------------------------------
EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        name="dp-x1-breach",
        varies=("breach_pct", "perfect_pct", "correct_pct", "truth_in_set", "ea_post"),
        paper=PAPER,
        figure="X1",
        title="DP histograms vs k-anonymity (Adult)",  # short: fits one panel's width
        grid=[{"epsilon": e, "run": r} for e in EPSILONS for r in range(X1_RUNS)],
        measure=measure_x1,
        plot=Plot(
            x="epsilon",
            y="breach_pct",
            xlabel="epsilon per release (two releases)",
            ylabel="perfect breach (% of the 5000 shared people)",
            series="series",
        ),
        claim="Paper 004 sections 4-5: DP composes and its guarantee holds whatever the "
        "adversary's side information (other releases included), so the composition attack "
        "that breaks k-anonymity (about 12 % perfect breach on Adult at k = 5) should name "
        "almost nobody's value correctly from DP releases at small epsilon.",
        seeds=SEEDS,
        notes=DATA_NOTE + " Targets are located by their QIs through the published cells; "
        "the threshold is 0.5 (a published count of at least 1). Mondrian and MDAV use the "
        "oracle locator (composition-fig1), so their breaches are always correct.",
    ),
    Experiment(
        name="dp-x2-utility",
        varies=("mean_error", "median_error"),
        paper=PAPER,
        figure="X2 (DP alternative)",
        title="query error: DP histogram vs Mondrian k-anonymity (Adult)",
        grid=[{"scheme": "dp", "param": e, "run": r} for e in EPSILONS for r in range(X2_RUNS)]
        + [{"scheme": "mondrian", "param": k} for k in K_X2],
        measure=measure_x2,
        plot=Plot(
            x="param",
            y="mean_error",
            xlabel="epsilon (a) or k (b)",
            ylabel="mean relative query error",
            series="series",
            panels="panel",
            logy=True,
            sharey=True,  # one log scale: DP's error is 10-1000x Mondrian's
        ),
        claim="No number in the paper: DP's price is noise of order 2/epsilon per cell, "
        "which a fine cell domain adds up over many cells, while k-anonymity's error grows "
        "with k.",
        seeds=SEEDS,
        notes="All of Adult's training split (30,162 rows, SA occupation). Workload: paper "
        f"000's COUNT queries ({X2_QUERIES}, 3 QI ranges and an SA range, 5 % selectivity, "
        "seed 0); a DP table's noisy counts are spread uniformly over each cell's box "
        "(metrics source=).",
    ),
    Experiment(
        name="dp-x3-semantic",
        paper=PAPER,
        figure="X3 (Prop. 14, Thm. 15)",
        title="exact semantic privacy vs the paper's bounds (tiny domains)",
        grid=[
            {"mechanism": m, "exp_eps": str(x)}
            for m in ("randomized response", "geometric count", VERBATIM_PANEL)
            for x in X3_EXP_EPS
        ]
        + [{"mechanism": THM15_PANEL, "exp_eps": str(x)} for x in X3_THM15_EXP_EPS],
        measure=measure_x3,
        version=2,  # Theorem 15 checked at five e^eps, on two mechanisms and a control
        plot=Plot(
            x="epsilon",
            y="value",
            xlabel="epsilon",
            ylabel="statistical distance (SD) / probability",
            series="quantity",
            panels="panel",
            logy_panels=("1/10,000",),  # eps', delta' and probabilities of 1e-5 .. 1
        ),
        claim="Proposition 14: epsilon-DP implies (e^eps - 1)-semantic privacy; Theorem 15: "
        "(eps, delta)-DP implies (e^(3 eps) - 1 + 2 sqrt(delta), ...)-semantic privacy. The "
        "worst SD over every prior must stay below the bound.",
        seeds=SEEDS,
        notes="Exact Fractions (kerckhoffs.dp.semantic). Randomized response on a binary "
        "domain, n = 2; the geometric mechanism on a count, n = 3 (clamped to 0..n); the "
        f"(eps, delta) variant publishes the database with probability delta = {X3_DELTA}. "
        f"Priors: uniform plus {X3_TRIALS} random priors (seeded); default value 0 for the "
        "removed person. Substitution neighbours. Theorem 15 is vacuous at delta = 1/100 "
        "(eps' >= 1.15 > 1, the largest possible SD); it is checked as stated (Def. 13: some "
        "SD above eps' with probability at most delta', uniform prior) at delta = 1/10,000 and "
        "e^eps = 21/20 ... 5/4, where eps' = 0.18 ... 0.97, on randomized response + verbatim "
        "(n = 2), the geometric count + verbatim (n = 3), and a control that publishes the "
        "database with probability 1/10 (not (eps, 1/10,000)-DP), which must fail it.",
    ),
    Experiment(
        name="dp-x4-budget",
        varies=("value", "all_breaches_pct"),
        paper=PAPER,
        figure="X4 (Fig. 8 setting)",
        title="n releases: k-anonymity's breach vs DP's composed epsilon (Census stand-in)",
        grid=[{"k": k, "run": r} for k in X4_K for r in range(X4_RUNS)],
        measure=measure_x4,
        version=2,  # one run's n = 2, 3, 4 are the first n of the same four DP releases
        plot=Plot(
            x="n_rel",
            y="value",
            xlabel="number of releases n (nested subsets)",
            ylabel="(a) % perfectly breached / (b) composed epsilon",
            series="series",
            panels="metric",
        ),
        claim="Fig. 8: the breach of k-anonymous releases grows with the number of releases "
        "and nothing bounds it; DP's loss composes: n releases at epsilon each cost the "
        "people in all of them at most n epsilon (basic composition), and a budget B caps it.",
        seeds=SEEDS,
        notes=DATA_NOTE + " Four subsets built once, the first n used (composition-fig8). "
        "Composed epsilon from kerckhoffs.dp.ledger (basic composition), averaged over the "
        "overlap and over the other people.",
    ),
)

__all__ = [
    "COARSE_LEVELS",
    "DOMAINS",
    "FINE_LEVELS",
    "composed_epsilon",
    "dp_attack",
    "dp_releases",
    "measure_theorem15",
    "measure_x1",
    "measure_x2",
    "measure_x3",
    "measure_x4",
    "run_summary",
]
