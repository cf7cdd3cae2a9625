"""Paper 004's experiments (Ganta, Kasiviswanathan, Smith, "Composition attacks and auxiliary
information in data privacy", KDD 2008), Figures 1-8: the intersection (composition) attack on
independent releases of overlapping populations (``docs/theory/composition.md#experiments``, with
our subsets and experiment driver, ``#subsets`` and ``#driver``, and the paper's metrics,
``#metrics``).

Setting (paper 004 section 5). Two random subsets of a table share ``|P| = 5000`` individuals; the
rest is split evenly between them (the paper does not give the sizes: the subset-sizes error below);
each subset is anonymized independently; the adversary intersects, for every individual of ``P``,
the sets of distinct SA values of the individual's classes in the releases
(:func:`~kerckhoffs.attacks.composition.intersection_attack`).

* **Locating.** The paper's adversary knows every target's class ("the attacks in the
  experiments always assume locatability", section 5), so the figures use the oracle locator
  (:meth:`OverlappingReleases.locations`). Our Mondrian cuts categorical QIs at code medians
  and publishes the lowest common hierarchy node of each class, so two classes can publish
  the same (or nested) categorical cells; locating targets by the published cells then
  leaves several candidate classes and learns much less. Figure 1 also reports that
  cell-located attack on the Mondrian releases, as an extra series.
* **Data.** Adult as in the paper (``docs/theory/composition.md#experiment-data``): the 30,162-row
  training split without missing values (``adult.csv``), QIs age, workclass, education,
  marital-status, race, sex, native-country, SA occupation (14 values), hierarchies
  ``examples/adult/hierarchies``. IPUMS (70,187 rows, occupation with 247 values) cannot be
  obtained: the **Census stand-in** (UCI Census-Income KDD, rows with occupation != 0,
  ``examples/census/schema.toml``, SA the detailed occupation recode, 46 codes) replaces it, sampled
  down to IPUMS's 70,187 rows (one fixed seeded sample, :data:`CENSUS_SAMPLE_SEED`) so the subsets
  have the sizes we take for IPUMS (5000 + 32,593; ``docs/theory/composition.md#err-ipums``) and
  MDAV (``O(n^2/k)``) fits the time budget.
* **Figure 7** (effect of the SA): IPUMS's Industry and Income do not exist in the stand-in;
  its non-QI attributes of different entropy are used instead (:data:`CENSUS_SAS`), all
  with the same QIs. Their domain size and entropy have the same order, so they cannot
  separate the two; ``country`` as SA (43 values, low entropy; QIs without country) is
  added to make the paper's point (entropy, not domain size).
* **Schemes** (paper 004 section 5): k-anonymity by the registered ``mondrian`` (strict median cuts)
  and ``mdav`` (microaggregation, published as each cluster's cells); entropy ℓ-diversity and
  t-closeness (EMD, equal ground distance for a categorical SA: the t-closeness error below) as
  extra constraints on Mondrian's cuts: the registered ``mondrian`` with those models
  (:func:`constrained_mondrian`).
* **Grids** the paper omits (the grids error below): k in {5, ..., 30}, ℓ in {2, ..., 6} and t
  in {0.1, ..., 0.5} with k = 10, confidence levels 100/50/33/25/20 %. Seeds: 3 (we had
  planned 5; the 6-minute budget of this module decides), each seed a new draw of the
  subsets; the plots show the median over seeds.

The paper's ambiguities, resolved as the error rows of ``docs/theory/composition.md#errors``
say (paper 004 sections 4-5): the t-closeness distance is EMD, equal ground distance for a
categorical SA, ordered for a numeric one (``#err-emd``); the "average drop" is reported both
per release and as a mean of per-person drops, the figures plot the first
(``#err-average-drop``); the records outside the overlap are split evenly and disjointly
(``#err-subset-sizes``); entropy is in bits (``#err-entropy-units``); the grids are ours, above
(``#err-grids``).

Caching: releases are cached per (dataset, SA, scheme, parameters, seed, subset) and attack
metrics per scenario in the run's :class:`~kerckhoffs.experiments.base.Context`, so figures
sharing a setting (Figs 1-4 and 6, Figs 5 and 6) compute it once.

The tables, schemes and attack summary are in :mod:`.paper_004_setting` (shared with
:mod:`.paper_004_dp`, re-exported here); this module holds the subsets, releases, measures and
experiments.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from kerckhoffs.algorithms.mdav import mdav_centroids, mdav_encode
from kerckhoffs.attacks.composition import (
    OverlappingReleases,
    intersection_attack,
    make_subsets,
    take_rows,
)
from kerckhoffs.attacks.locate import locate_all
from kerckhoffs.errors import ParameterError
from kerckhoffs.experiments.base import Context, Experiment, Plot
from kerckhoffs.experiments.paper_004_setting import (
    ADULT_QI,
    COUNTRY_SA,
    FINE_SA,
    LEVELS,
    WITHOUT_COUNTRY,
    adult_schema,
    anonymize_scheme,
    census_frame,
    census_schema,
    constrained_mondrian,
    sa_entropy,
    six_qis,
    summarize,
    table_of,
)
from kerckhoffs.release import Partition, Provenance, Release, Scheme

PAPER = "004"
OVERLAP = 5000
K_GRID = (5, 10, 15, 20, 25, 30)
L_GRID = (2, 3, 4, 5, 6)
T_GRID = (0.1, 0.2, 0.3, 0.4, 0.5)
K_DIVERSE = 10
"""The k under ℓ-diversity and t-closeness (paper: "with k = 10")."""
SEEDS = (0, 1, 2)
DATASETS = ("adult", "census")
PANEL = {"adult": "(a) Adult", "census": "(b) Census stand-in (IPUMS in the paper)"}
CENSUS_SAS = ("occupation", "occupation_major", "hispanic_origin", "citizenship", "income")
"""Census stand-in SAs for Figure 7, all with the same QIs (the schema's seven)."""
FIG7_PANELS = {False: "(a) the seven QIs", True: "(b) six QIs, country left out"}
"""Figure 7's panels: the SAs on the schema's seven QIs, and those on the six other than
country (the same partitions for every SA of a panel)."""
FIG7_SAME_QIS = ("occupation", "occupation_major")
"""Figure 7 SAs measured a second time on the country series' six QIs: occupation has about
country's domain size (46 against 43 values) and far more entropy (5.04 against 1.11 bits),
occupation_major fewer values (14) and more entropy (3.37 bits)."""
SCENARIOS = {
    "i": ("mondrian", "mondrian"),
    "ii": ("mdav", "mdav"),
    "iii": ("mondrian", "mdav"),
    "relaxed": ("mondrian-relaxed", "mondrian-relaxed"),
    "hierarchy": ("mondrian-hierarchy", "mondrian-hierarchy"),
}
SCENARIO_LABEL = {
    "i": "(i) Mondrian + Mondrian",
    "ii": "(ii) MDAV + MDAV",
    "iii": "(iii) Mondrian + MDAV",
    "relaxed": "(i) relaxed Mondrian (ties split) on both",
    "hierarchy": "(i) Mondrian, categorical QIs cut along the hierarchy",
    "cells": "(i) Mondrian, located by published cells",
    "hierarchy-cells": "(i) hierarchy-cut Mondrian, located by published cells",
}
CUT_RULES = (
    ("i", "strict Mondrian"),
    ("relaxed", "relaxed Mondrian"),
    ("hierarchy", "hierarchy-cut Mondrian"),
)
"""Mondrian's three cut rules in Figs 1-2 and the sensitivity experiments: median cuts that
keep ties together (the default), relaxed cuts that split them, and categorical QIs cut into
their hierarchy children (LeFevre's categorical split)."""
SA_BLIND = ("mondrian", "mondrian-relaxed", "mondrian-hierarchy", "mdav")
"""Schemes under k-anonymity alone, which never read the SA (their partition serves every SA)."""
PAPER_FIG1 = {"adult": 12.0, "census": 60.0}
"""The paper's perfect-breach levels at k = 5 (Fig. 1, read from the text: "about")."""
PAPER_FIG2 = {"adult": 60.0, "census": 95.0}
"""The paper's partial breach at C = 25 %, k = 5 (Fig. 2: Adult "more than 60 %")."""
SIZE_GRID = {
    "adult": (6000, 8000, 10_000, 12_000, 14_000, 16_000, 17_581),
    "census": (8000, 12_000, 16_000, 20_000, 25_000, 30_000, 37_593),
}
"""Subset sizes (overlap 5000 included) for the sensitivity experiment; the last is the even
split of the rest that the other figures use (the paper does not give the sizes:
``docs/theory/composition.md#err-subset-sizes``)."""
DATA_NOTE = (
    "Adult: adult.csv, 30,162 rows, SA occupation (14 values), QIs age, workclass, education, "
    "marital-status, race, sex, native-country (paper Table 2). Census stand-in (replaces "
    "IPUMS, which cannot be obtained): UCI Census-Income KDD, occupation != 0, sampled to "
    "IPUMS's 70,187 rows (seed 2008), SA detailed occupation (46 codes, not 247), QIs age, "
    "sex, education, marital_status, race, workclass, country. Overlap 5000, the rest split "
    "evenly (the paper does not give the sizes); oracle locator (the paper assumes "
    "locatability). Seeds 0-2 (we had planned 5; time budget), median plotted."
)


# -- releases and the attack (docs/theory/composition.md#subsets, #driver) ----------------------
def subsets_of(
    ctx: Context, dataset: str, n_chunks: int, seed: int, size: int | None = None
) -> tuple[list[np.ndarray], np.ndarray]:
    """``n_chunks`` subsets sharing :data:`OVERLAP` rows (even split of the rest, or ``size`` rows
    each, overlap included; ``docs/theory/composition.md#subsets``)."""
    n = table_of(ctx, dataset).n
    key = f"p004:subsets:{dataset}:{n_chunks}:{seed}" + (f":{size}" if size else "")
    return ctx.cached(key, lambda: make_subsets(n, n_chunks, OVERLAP, seed, size=size))


def release_of(
    ctx: Context,
    dataset: str,
    sa: str | None,
    scheme: str,
    params: dict[str, Any],
    seed: int,
    n_chunks: int,
    j: int,
    size: int | None = None,
) -> Release:
    """Release ``j`` of the ``n_chunks`` subsets of ``seed``. Only the partition is cached
    (a group id per row, small; the release is rebuilt around it). k-anonymity (Mondrian,
    MDAV) never reads the SA, so a Census release with another SA but the same QIs reuses
    the occupation release's partition (same rows, same QIs: the same partition), or the
    country release's when country is left out of the QIs."""
    subs, _ = subsets_of(ctx, dataset, n_chunks, seed, size)
    sub = take_rows(table_of(ctx, dataset, sa), subs[j])
    # tables with the same QIs share a k-anonymous partition: the seven-QI one is keyed by
    # None (occupation's table), the six-QI one by the country SA's table
    qi_key = COUNTRY_SA if dataset == "census" and six_qis(sa) else None
    key_sa = qi_key if scheme in SA_BLIND else sa
    key = f"p004:partition:{dataset}:{key_sa}:{scheme}:{sorted(params.items())}"
    key += f":{seed}:{n_chunks}:{j}" + (f":{size}" if size else "")
    made: list[Release] = []

    def make() -> np.ndarray:
        base = sub if key_sa == sa else take_rows(table_of(ctx, dataset, key_sa), subs[j])
        made.append(anonymize_scheme(base, scheme, params))
        return made[0].partition.group

    group = ctx.cached(key, make)
    if made and key_sa == sa:
        return made[0]
    provenance = Provenance(scheme, dict(params))
    return Release(sub, Partition(group), Scheme.GENERALIZATION, sub.sa, provenance)


def attack_metrics(
    ctx: Context,
    dataset: str,
    schemes: Sequence[str],
    params: dict[str, Any],
    seed: int,
    *,
    sa: str | None = None,
    n_chunks: int | None = None,
    by_cells: bool = False,
    size: int | None = None,
) -> dict[str, Any]:
    """Our experiment driver (``docs/theory/composition.md#driver``) for one setting: releases of
    the first ``len(schemes)`` of ``n_chunks`` subsets (default as many as releases), the
    intersection attack with the oracle locator (or by the published cells with ``by_cells``), and
    the paper's metrics (``docs/theory/composition.md#metrics``; percentages for shares). Cached per
    setting."""
    n_rel = len(schemes)
    chunks = n_chunks or n_rel
    key = f"p004:attack:{dataset}:{sa}:{list(schemes)}:{sorted(params.items())}:{seed}:{chunks}"
    key += ":cells" if by_cells else ""
    key += f":{size}" if size else ""

    def make() -> dict[str, Any]:
        subs, common = subsets_of(ctx, dataset, chunks, seed, size)
        releases = [
            release_of(ctx, dataset, sa, s, params, seed, chunks, j, size)
            for j, s in enumerate(schemes)
        ]
        table = table_of(ctx, dataset, sa)
        over = OverlappingReleases(table, releases, list(subs[:n_rel]), common)
        if by_cells:
            schema = table.schema
            locations = locate_all(releases, over.population(), schema)
        else:
            locations = over.locations()
        res = intersection_attack(releases, locations, true_values=over.true_values())
        return summarize(res.details, n_rel)

    return ctx.cached(key, make)


def centroid_locator_accuracy(ctx: Context, dataset: str, k: int, seed: int) -> float:
    """``locate_centroid`` (``docs/theory/composition.md#enabling-properties`` and ``#locators``) on
    the MDAV release of subset 1: the share (percent) of the overlap population whose nearest
    published centroid (z-scored QIs, as MDAV measures; ties: lowest class id) is their own class.
    The paper reports about 70 %."""

    def make() -> float:
        subs, common = subsets_of(ctx, dataset, 2, seed)
        rel = release_of(ctx, dataset, None, "mdav", {"k": k}, seed, 2, 0)
        rows = np.searchsorted(subs[0], common)
        cent = mdav_centroids(rel)
        # targets with equal QIs have the same nearest centroid: one search per distinct one
        x, of_target = np.unique(mdav_encode(rel.table)[rows], axis=0, return_inverse=True)
        nearest = np.empty(x.shape[0], dtype=np.int64)
        for s in range(0, x.shape[0], 1000):  # chunks keep the distance matrix small
            xs = x[s : s + 1000]
            # squared distances coordinate by coordinate, not by a BLAS product: a product's
            # rounding depends on the BLAS build and its threads, and decided near-ties
            # differently from run to run (a fresh run differed from the committed CSV)
            dist = np.zeros((xs.shape[0], cent.shape[0]))
            for j in range(cent.shape[1]):
                dist += np.square(xs[:, j, None] - cent[None, :, j])
            nearest[s : s + 1000] = np.argmin(dist, axis=1)
        hit = int((nearest[of_target.reshape(-1)] == rel.partition.group[rows]).sum())
        return 100.0 * hit / max(rows.size, 1)

    return ctx.cached(f"p004:centroid:{dataset}:{k}:{seed}", make)


# -- measures -------------------------------------------------------------------------------------
def _k_point(point: dict[str, Any]) -> tuple[str, int, int]:
    return str(point["dataset"]), int(point["k"]), int(point["seed"])


def measure_fig1(point: dict[str, Any], ctx: Context) -> list[dict[str, Any]]:
    """Perfect breach (PVP_100%) in scenarios (i)-(iii), plus (i) located by cells."""
    dataset, k, seed = _k_point(point)
    rows = []
    for sc, schemes in SCENARIOS.items():
        m = attack_metrics(ctx, dataset, schemes, {"k": k}, seed)
        row = {"panel": PANEL[dataset], "scenario": SCENARIO_LABEL[sc], **m}
        if sc == "ii":
            row["centroid_locator_pct"] = centroid_locator_accuracy(ctx, dataset, k, seed)
        rows.append(row)
    for sc, label in (("i", "cells"), ("hierarchy", "hierarchy-cells")):
        m = attack_metrics(ctx, dataset, SCENARIOS[sc], {"k": k}, seed, by_cells=True)
        rows.append({"panel": PANEL[dataset], "scenario": SCENARIO_LABEL[label], **m})
    if k == 5:
        rows.append({"panel": PANEL[dataset], "scenario": "paper, k = 5 (about)",
                     "pvp100": PAPER_FIG1[dataset]})  # fmt: skip
    return rows


def measure_fig2(point: dict[str, Any], ctx: Context) -> list[dict[str, Any]]:
    """Partial breach PVP_C for every confidence level, scenario (i)."""
    dataset, k, seed = _k_point(point)
    rows = []
    for sc, how in CUT_RULES:
        m = attack_metrics(ctx, dataset, SCENARIOS[sc], {"k": k}, seed)
        panel = f"{PANEL[dataset]}, {how}"
        rows += [
            {"panel": panel, "confidence": f"C = {pct}%", "pvp": m[f"pvp{pct}"]}
            for pct, _ in LEVELS
        ]
        if k == 5:
            ref = "more than" if dataset == "adult" else "about"
            rows.append({"panel": panel, "confidence": f"paper, C = 25%, k = 5 ({ref})",
                         "pvp": PAPER_FIG2[dataset]})  # fmt: skip
    return rows


def measure_subset_size(point: dict[str, Any], ctx: Context) -> list[dict[str, Any]]:
    """Perfect and partial breach (scenario (i), k = 5) at one subset size, for strict and
    relaxed Mondrian and Mondrian with hierarchy cuts, with the mean class size the targets sit
    in."""
    dataset, size, seed = str(point["dataset"]), int(point["size"]), int(point["seed"])
    rows = []
    for sc, how in CUT_RULES:
        m = attack_metrics(ctx, dataset, SCENARIOS[sc], {"k": 5}, seed, size=size)
        rows.append(
            {
                "panel": PANEL[dataset],
                "cuts": how,
                "pvp100": m["pvp100"],
                "pvp25": m["pvp25"],
                "partition_size_1": m["partition_size_1"],
                "partition_size_2": m["partition_size_2"],
            }
        )
    return rows


def measure_sa_domain(point: dict[str, Any], ctx: Context) -> list[dict[str, Any]]:
    """The domain-size hypothesis on the Census stand-in: the same partitions (k-anonymity
    never reads the SA) attacked through occupation (46 values) and through occupation x
    citizenship (223 values in the sample, like IPUMS's 247), under the three cut rules."""
    k, seed = int(point["k"]), int(point["seed"])
    rows = []
    for sa in ("occupation", FINE_SA):
        table = table_of(ctx, "census", sa)
        values = int(np.unique(table.sa).size)
        for sc, how in CUT_RULES:
            m = attack_metrics(ctx, "census", SCENARIOS[sc], {"k": k}, seed, sa=sa)
            rows.append(
                {
                    "series": f"{sa} ({values} values), {how}",
                    "sa": sa,
                    "sa_values": values,
                    "sa_entropy_bits": sa_entropy(table),
                    "cuts": how,
                    "pvp100": m["pvp100"],
                    "pvp25": m["pvp25"],
                }
            )
    return rows


def measure_fig3(point: dict[str, Any], ctx: Context) -> list[dict[str, Any]]:
    """Presumed anonymity k, average partition size and average effective anonymity of the
    overlap population per subset, scenario (i)."""
    dataset, k, seed = _k_point(point)
    m = attack_metrics(ctx, dataset, SCENARIOS["i"], {"k": k}, seed)
    pairs = [
        ("presumed anonymity (k)", float(k)),
        ("partition size, subset 1", m["partition_size_1"]),
        ("partition size, subset 2", m["partition_size_2"]),
        ("effective anonymity, subset 1", m["ea_prior_1"]),
        ("effective anonymity, subset 2", m["ea_prior_2"]),
    ]
    return [{"panel": PANEL[dataset], "quantity": q, "value": v} for q, v in pairs]


def measure_fig4(point: dict[str, Any], ctx: Context) -> list[dict[str, Any]]:
    """Average effective prior anonymity per subset vs average effective posterior anonymity (their
    difference is the average drop, per release:
    ``docs/theory/composition.md#err-average-drop``)."""
    dataset, k, seed = _k_point(point)
    m = attack_metrics(ctx, dataset, SCENARIOS["i"], {"k": k}, seed)
    pairs = [
        ("prior, subset 1", m["ea_prior_1"], m["drop_1"]),
        ("prior, subset 2", m["ea_prior_2"], m["drop_2"]),
        ("posterior (after the attack)", m["ea_post"], float("nan")),
    ]
    return [
        {
            "panel": PANEL[dataset],
            "quantity": q,
            "value": v,
            "drop": drop,
            "drop_per_person": m["drop_per_person"],
        }
        for q, v, drop in pairs
    ]


def _diverse_params(point: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    model = str(point["model"])
    if model == "k-anonymity":
        return "mondrian", {"k": int(point["param"])}
    if model == "entropy-l":
        return "entropy-l", {"k": K_DIVERSE, "l": float(point["param"])}
    if model == "t-closeness":
        return "t-closeness", {"k": K_DIVERSE, "t": float(point["param"])}
    raise ParameterError(f"unknown model {model!r}")


_MODEL_PANEL = {"entropy-l": "entropy ℓ-diversity", "t-closeness": "t-closeness"}


def measure_fig5(point: dict[str, Any], ctx: Context) -> list[dict[str, Any]]:
    """Partial breach PVP_C under entropy ℓ-diversity / t-closeness (k = 10), scenario (i)."""
    dataset, seed = str(point["dataset"]), int(point["seed"])
    scheme, params = _diverse_params(point)
    m = attack_metrics(ctx, dataset, (scheme, scheme), params, seed)
    letter = {
        ("adult", "entropy-l"): "(a)",
        ("adult", "t-closeness"): "(b)",
        ("census", "entropy-l"): "(c)",
        ("census", "t-closeness"): "(d)",
    }[(dataset, str(point["model"]))]
    name = "Adult" if dataset == "adult" else "Census stand-in"
    panel = f"{letter} {name}, {_MODEL_PANEL[str(point['model'])]}"
    return [
        {
            "panel": panel,
            "confidence": f"C = {pct}%",
            "pvp": m[f"pvp{pct}"],
            "partition_size": (m["partition_size_1"] + m["partition_size_2"]) / 2,
        }
        for pct, _ in LEVELS
    ]


def measure_fig6(point: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Average partition size of the overlap population (mean of the two subsets) under
    k-anonymity (k = 10), entropy ℓ-diversity and t-closeness (k = 10)."""
    dataset, seed = str(point["dataset"]), int(point["seed"])
    scheme, params = _diverse_params(point)
    m = attack_metrics(ctx, dataset, (scheme, scheme), params, seed)
    model = str(point["model"])
    setting = {
        "k-anonymity": f"k={point['param']}",
        "entropy-l": f"ℓ={point['param']:g}",
        "t-closeness": f"t={point['param']:g}",
    }[model]
    return {
        "panel": PANEL[dataset],
        "setting": setting,
        "partition_size": (m["partition_size_1"] + m["partition_size_2"]) / 2,
        "partition_size_1": m["partition_size_1"],
        "partition_size_2": m["partition_size_2"],
        "pvp100": m["pvp100"],
        "pvp25": m["pvp25"],
    }


def measure_fig7(point: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Average drop in effective anonymity on the Census stand-in for SAs of different
    entropy (scenario (i)); the drop is the mean over the two subsets of (average prior
    anonymity of the subset - average posterior anonymity)."""
    sa, k, seed = str(point["sa"]), int(point["k"]), int(point["seed"])
    table = table_of(ctx, "census", sa)
    m = attack_metrics(ctx, "census", SCENARIOS["i"], {"k": k}, seed, sa=sa)
    h = sa_entropy(table)
    name = sa.removesuffix(WITHOUT_COUNTRY)
    label = f"{name} ({int(np.count_nonzero(np.bincount(table.sa)))} values, H = {h:.2f} bits)"
    return {
        "panel": FIG7_PANELS[six_qis(sa)],
        "series": label,
        "domain_size": int(np.count_nonzero(np.bincount(table.sa))),
        "entropy_bits": h,
        "entropy_nats": h * math.log(2),
        "drop": (m["drop_1"] + m["drop_2"]) / 2,
        "drop_per_person": m["drop_per_person"],
        "ea_prior_1": m["ea_prior_1"],
        "ea_post": m["ea_post"],
        "pvp100": m["pvp100"],
    }


def measure_fig8(point: dict[str, Any], ctx: Context) -> list[dict[str, Any]]:
    """Census stand-in, n = 2, 3, 4 nested releases (4 subsets built once, first n used,
    ``docs/theory/composition.md#subsets``): (a) PVP_100%, (b) average drop w.r.t. subset 1 (which
    every n shares, so the drop can only grow with n)."""
    k, seed = int(point["k"]), int(point["seed"])
    rows = []
    for n_rel in (2, 3, 4):
        m = attack_metrics(ctx, "census", ("mondrian",) * n_rel, {"k": k}, seed, n_chunks=4)
        common = {"releases": f"n = {n_rel} releases", "n_rel": n_rel}
        rows.append(
            {
                **common,
                "metric": "(a) perfect breach, % of overlap population",
                "value": m["pvp100"],
            }
        )
        rows.append(
            {
                **common,
                "metric": "(b) average drop in effective anonymity",
                "value": m["drop_1"],
                "drop_per_person": m["drop_per_person"],
            }
        )
    return rows


# -- the experiments ------------------------------------------------------------------------------
K_POINTS = [{"dataset": d, "k": k} for d in DATASETS for k in K_GRID]
DIVERSE_POINTS = [
    {"dataset": d, "model": model, "param": p}
    for d in DATASETS
    for model, grid in (("entropy-l", L_GRID), ("t-closeness", T_GRID))
    for p in grid
]
K_LABEL = "k (k1 = k2)"

EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        name="composition-fig1",
        version=4,
        paper=PAPER,
        figure="Fig. 1",
        title="perfect breach by the intersection attack; Adult and the Census stand-in",
        grid=K_POINTS,
        measure=measure_fig1,
        plot=Plot(
            x="k",
            y="pvp100",
            xlabel=K_LABEL,
            ylabel="perfect breach (% of overlap population)",
            series="scenario",
            panels="panel",
        ),
        claim="About 12% of the overlap population suffers a perfect breach on Adult at "
        "k1 = k2 = 5, about 60% on IPUMS; the share falls as k grows. Scenarios (i) Mondrian "
        "on both subsets, (ii) microaggregation on both, (iii) Mondrian + microaggregation. "
        "The nearest-centroid locator finds about 70% of individuals in microaggregated data.",
        seeds=SEEDS,
        notes=DATA_NOTE + " MDAV publishes each cluster's cells; centroid_locator_pct is the "
        "nearest-centroid locator's accuracy on the MDAV release of subset 1. Extra series: "
        "targets located by Mondrian's published cells instead of the oracle; Mondrian with "
        "categorical QIs cut into hierarchy children, by the oracle and by its cells; relaxed "
        "Mondrian (ties at the median split between the halves, LeFevre et al.); the paper's "
        "level at k = 5.",
    ),
    Experiment(
        name="composition-fig2",
        version=3,
        paper=PAPER,
        figure="Fig. 2",
        title="partial breach at several confidence levels (scenario (i)); "
        "Adult and the Census stand-in",
        grid=K_POINTS,
        measure=measure_fig2,
        plot=Plot(
            x="k",
            y="pvp",
            xlabel=K_LABEL,
            ylabel="% of overlap population with confidence ≥ C",
            series="confidence",
            panels="panel",
        ),
        claim="The breach grows sharply as the confidence level is relaxed: at k = 5 and "
        "C = 25%, about 95% of IPUMS's overlap population and more than 60% of Adult's.",
        seeds=SEEDS,
        notes=DATA_NOTE + " C = 100/50/33/25/20% means |S_i| <= 1/2/3/4/5 values. Panels "
        "for strict, relaxed and hierarchy-cut Mondrian; the paper's level at C = 25 %, k = 5.",
    ),
    Experiment(
        name="composition-fig1-size",
        version=2,
        share="composition-size",  # other subset sizes: nothing in common with Figs 1-8
        paper=PAPER,
        figure="Fig. 1 (sensitivity)",
        title="perfect breach vs subset size, k = 5, three Mondrian cut rules; "
        "Adult and the Census stand-in",
        grid=[{"dataset": d, "size": n} for d in DATASETS for n in SIZE_GRID[d]],
        measure=measure_subset_size,
        plot=Plot(
            x="size",
            y="pvp100",
            xlabel="rows per subset (5000 shared); the last point is the even split",
            ylabel="perfect breach (% of overlap population)",
            series="cuts",
            panels="panel",
        ),
        claim="The paper does not give the subsets' sizes; its Fig. 1 levels "
        "(Adult about 12 %, IPUMS about 60 % at k = 5) are compared with ours at several.",
        seeds=SEEDS,
        notes=DATA_NOTE + " Each subset: the 5000 shared rows plus size - 5000 rows of its own. "
        "Mondrian halves exactly, so a class's size depends on the subset size divided by a "
        "power of two; relaxed cuts also split rows with equal QIs.",
    ),
    Experiment(
        name="composition-sa-domain",
        version=2,
        paper=PAPER,
        figure="§3.5 (domain size)",
        title="Census stand-in: breach with a 46-value and a 223-value SA",
        grid=[{"k": k} for k in K_GRID],
        measure=measure_sa_domain,
        plot=Plot(
            x="k",
            y="pvp100",
            xlabel=K_LABEL,
            ylabel="perfect breach (% of overlap population)",
            series="series",
        ),
        claim="Attacks are more severe on IPUMS, plausibly because of its larger sensitive "
        "domain (247 occupations).",
        seeds=SEEDS,
        notes=DATA_NOTE + " Same partitions for both SAs (k-anonymity never reads the SA); "
        "occupation_citizenship = the detailed occupation crossed with citizenship.",
    ),
    Experiment(
        name="composition-fig3",
        paper=PAPER,
        figure="Fig. 3",
        title="presumed anonymity, partition size and effective anonymity (scenario (i)); "
        "Adult and the Census stand-in",
        grid=K_POINTS,
        measure=measure_fig3,
        plot=Plot(
            x="k",
            y="value",
            xlabel=K_LABEL,
            ylabel="average over the overlap population",
            series="quantity",
            panels="panel",
        ),
        claim="Effective anonymity (distinct SA values in one's class) is much smaller than "
        "the partition size, and partitions are much larger than k (IPUMS, k = 5: average "
        "partition size about 40), blamed on hierarchy-based generalization.",
        seeds=SEEDS,
        notes=DATA_NOTE + " Partition size is individual-weighted (as in the paper's metrics).",
    ),
    Experiment(
        name="composition-fig4",
        paper=PAPER,
        figure="Fig. 4",
        title="effective prior vs posterior anonymity (scenario (i)); "
        "Adult and the Census stand-in",
        grid=K_POINTS,
        measure=measure_fig4,
        plot=Plot(
            x="k",
            y="value",
            xlabel=K_LABEL,
            ylabel="average effective anonymity (distinct SA values)",
            series="quantity",
            panels="panel",
        ),
        claim="The average effective posterior anonymity is much smaller than the average "
        "effective prior anonymity of both subsets (a large drop).",
        seeds=SEEDS,
        notes=DATA_NOTE + " drop = average prior of the subset - average posterior "
        "(per release; the paper leaves it open); drop_per_person = mean of min_j EA_ij - |S_i|.",
    ),
    Experiment(
        name="composition-fig5",
        paper=PAPER,
        figure="Fig. 5",
        title="partial breach under entropy ℓ-diversity and t-closeness (k = 10); "
        "Adult and the Census stand-in",
        grid=DIVERSE_POINTS,
        measure=measure_fig5,
        plot=Plot(
            x="param",
            y="pvp",
            xlabel="ℓ (panels a, c) or t (panels b, d); k = 10",
            ylabel="% of overlap population with confidence ≥ C",
            series="confidence",
            panels="panel",
        ),
        claim="ℓ-diversity and t-closeness do better than k-anonymity but still leave a "
        "considerable partial breach: the intersection of two diverse sets need not be "
        "diverse (no numbers given).",
        seeds=SEEDS,
        notes=DATA_NOTE + " Mondrian with the constraint on both halves of every cut (after "
        "LeFevre et al., ICDE 2006), entropy ℓ-diversity H >= log ℓ, t-closeness by EMD with "
        "equal ground distance to the subset's distribution; ℓ and t grids are ours (the paper "
        "omits them).",
    ),
    Experiment(
        name="composition-fig6",
        paper=PAPER,
        figure="Fig. 6",
        title="average partition size: k-anonymity vs ℓ-diversity vs t-closeness (k = 10); "
        "Adult and the Census stand-in",
        grid=[{"dataset": d, "model": "k-anonymity", "param": K_DIVERSE} for d in DATASETS]
        + DIVERSE_POINTS,
        measure=measure_fig6,
        plot=Plot(
            x="setting",
            y="partition_size",
            xlabel="privacy model (k = 10 throughout)",
            ylabel="average partition size (overlap population)",
            kind="bar",
            logy=True,
            panels="panel",
        ),
        claim="IPUMS, k = 10: k-anonymity about 45, ℓ = 5 about 450, t = 0.4 about 1300; "
        "Adult similar (heavy information loss).",
        seeds=SEEDS,
        notes=DATA_NOTE,
    ),
    Experiment(
        name="composition-fig7",
        version=2,
        paper=PAPER,
        figure="Fig. 7",
        title="drop in effective anonymity by SA (Census stand-in)",
        grid=[
            {"sa": s, "k": k}
            for s in (
                *CENSUS_SAS,
                COUNTRY_SA,
                *(sa + WITHOUT_COUNTRY for sa in FIG7_SAME_QIS),
            )
            for k in K_GRID
        ],
        measure=measure_fig7,
        plot=Plot(
            x="k",
            y="drop",
            xlabel=K_LABEL,
            ylabel="average drop in effective anonymity",
            series="series",
            panels="panel",
            sharey=True,
        ),
        claim="The drop grows with the entropy of the SA, not its domain size: IPUMS "
        "Occupation (247 values, H 4.30) < Industry (145, H 4.35) < Income (471, H 5.56).",
        seeds=SEEDS,
        notes=DATA_NOTE + " IPUMS's Industry and Income are not in the stand-in: its non-QI "
        "attributes of different entropy replace them (occupation 46 codes, occupation_major "
        "14, hispanic_origin 10, citizenship 5, income 2 classes), same seven QIs, same "
        "partitions (k-anonymity Mondrian never reads the SA). Their entropy and domain size "
        "have the same order, so country as SA (43 values, low entropy; QIs without country) "
        "is added to separate the two; occupation and occupation_major are measured again on "
        "country's six QIs (the same partitions as the country series), so that the "
        "comparison with country holds the partitions fixed. Drop = mean over the two subsets "
        "of (average prior - average posterior).",
    ),
    Experiment(
        name="composition-fig8",
        paper=PAPER,
        figure="Fig. 8",
        title="effect of the number of releases (Census stand-in, overlap 5000)",
        grid=[{"k": k} for k in K_GRID],
        measure=measure_fig8,
        plot=Plot(
            x="k",
            y="value",
            xlabel="k (same k for every release)",
            ylabel="(a) % perfectly breached / (b) average drop",
            series="releases",
            panels="metric",
        ),
        claim="Both the perfect-breach share and the average drop grow with the number of "
        "releases n = 2, 3, 4; the perfect breach's increase is significant for small k and "
        "not for large k, where extra releases give only limited information.",
        seeds=SEEDS,
        notes=DATA_NOTE + " Four subsets (5000 shared + an even split of the rest each) are "
        "built once per seed and the first n are used, so the releases are nested. "
        "The drop is w.r.t. subset 1, which every n shares.",
    ),
)

__all__ = [
    "ADULT_QI",
    "CENSUS_SAS",
    "K_GRID",
    "LEVELS",
    "WITHOUT_COUNTRY",
    "adult_schema",
    "attack_metrics",
    "census_frame",
    "census_schema",
    "constrained_mondrian",
    "release_of",
    "sa_entropy",
    "subsets_of",
    "table_of",
]
