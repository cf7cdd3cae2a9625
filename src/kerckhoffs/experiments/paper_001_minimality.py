"""Paper 001 (Wong, Fu, Wang, Pei, "Anonymization-based attacks in privacy-preserving data
publishing", TODS 2009), section 7: its experiments as E1-E4
(``docs/theory/minimality.md#experiments``).

Setting (paper 001 section 7 and Table XXII): UCI Adult without the rows holding unknown values,
**45,222 rows**; the quasi-identifiers are the first ``d`` attributes of the paper's Table XXII
(age, workclass, marital-status, occupation, race, sex, native-country, salary: the order of
``examples/adult/schema.toml``; the QID-order error below), the sensitive attribute is education and
its sensitive set the education below high school (Preschool, 1st-4th, 5th-6th, 7th-8th: **1,566
tuples**, checked on every E1 point, :func:`adult_headline`). The hierarchies are the project's
reconstructions (the paper's are not printed: ``docs/theory/minimality.md#err-hierarchies``).

- **E1** (Fig. 7, paper section 7.1): the minimality attack
  (:func:`~kerckhoffs.attacks.minimality.minimality_attack`,
  ``docs/theory/minimality.md#attack-driver``, whole-class mode: the local-thresholds error below)
  on the minimal local recoding the paper attacks (``local-recoding`` with ``alpha = 1/m``,
  ``k = 1``: simplified l-diversity with ``l = m``). Problematic tuples = sensitive tuples whose
  class has credibility ``> 1/m`` (the problematic-tuples error below), as a share of all sensitive
  tuples (Fig. 7a, 7c), and their average credibility (Fig. 7b, 7d); against ``m`` at QID size 8
  (``minimality-e1-m``) and against the QID size at ``m = 2`` (``minimality-e1-qid``).
- **E2** (Fig. 8 at ``m = 2``, Fig. 9 at ``m = 10``; section 7.2.1): MASK ("m-conf", single
  generalized table) against (alpha, k) local recoding ("(alpha,k)-A", ``alpha = 1/m`` and the same
  ``k``) for ``k`` in {2, 10, 20} and QID size 1..8: (a) execution time, (b) average relative error
  of 10,000 COUNT queries (``qd = |QID|``, ``s = 0.05``), (c) QID information loss ``Dist``
  (Definition 7, weights ``1/|QID|``), (d) distortion of the sensitive attribute. MASK's step 1 is
  the same local recoding with the alpha constraint off (``KAnonymity(k)``, the k-anonymizer error
  below): it is run once per (QID size, ``k``), timed, and its partition handed to ``mask``
  (``partition=``); MASK's time is that step-1 time plus the time of ``mask`` on it (steps 2-4), and
  the share of step 1 is reported (paper: over 98 %).
- **E3** (Fig. 10, section 7.2.2): two tables (bucketization, paper section 6.2: original QIs +
  group id, group id + published SA), relative error against ``m`` for each ``k`` (QID size 8).
  Only relative error is measured there: the QID loss of two tables is 0 and the distortion is
  E2's (``docs/theory/minimality.md#experiments``).
- **E4** (Fig. 11): two tables, relative error against the query dimensionality ``qd``
  (``minimality-e4-fig11ab``) and the selectivity ``s`` (``minimality-e4-fig11cd``), each at
  ``m = 2`` and ``m = 10``.

Everything expensive is shared through :meth:`Context.cached` (one sub-table per QID size,
one release per (algorithm, QID size, k, m), one workload per (QID size, qd, s, seed), one
error per (release, workload)), so Fig. 8, 10 and 11 reuse each other's releases and errors.

Our choices (the paper omits its axis values, ``docs/theory/minimality.md#experiments`` proposes
``m`` in {2, 4, 6, 8, 10}, QID size and ``qd`` 1..8, ``s`` in {0.01, 0.03, 0.05, 0.07, 0.1}): ``m``
in {2, 4, 6, 8, 10}; QID size 1..8 for E1 but {1, 2, 4, 6, 8} for E2 and ``qd`` in {1, 2, 4, 6, 8},
``s`` in {0.01, 0.03, 0.05, 0.1} for E4, because 10,000 queries per point on every proposed value
would take twice this module's time budget (6 minutes); one seed (the paper averages 100 runs;
MASK's draws and the workload are seeded). Where our MASK refuses to publish (``k < m``, or step 2a:
fewer than ``(m - 1) |V|`` satisfying groups, which on Adult happens at ``m = 10`` for every ``k``)
the point is recorded with no value and the reason in ``status``.

The paper's errors and ambiguities resolved here (our register:
``docs/theory/minimality.md#errors``):

- Local thresholds (``docs/theory/minimality.md#err-local-thresholds``; paper 001 section 4.2.2):
  thresholds on the generalized parts alone contradict the paper's own examples; the attack
  thresholds on the whole class ("whole-class mode").
- Split class (``docs/theory/minimality.md#err-split-class``; section 4.2.2, last paragraph): a
  class split over several generalized ECs has no method; such ECs get the no-exclusion credibility
  (a lower bound).
- Problematic tuples (``docs/theory/minimality.md#err-problematic``; section 7.1): "problematic
  tuples" are the sensitive tuples whose class has credibility above ``1/m``, counted among all
  sensitive tuples.
- The k-anonymizer (``docs/theory/minimality.md#err-mask-kanonymizer``; MASK step 1, section 7.2):
  the k-anonymizer of the experiments is only implied; the local-recoding (alpha, k) algorithm with
  the alpha constraint off.
- QID order (``docs/theory/minimality.md#err-qid-order``; section 7): which attributes form a QID of
  size ``d < 8``; the first ``d`` of Table XXII.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from kerckhoffs.algorithms.registry import get as get_algorithm
from kerckhoffs.attacks.minimality import minimality_attack
from kerckhoffs.data.schema import Role
from kerckhoffs.data.table import Table
from kerckhoffs.errors import InputError, ParameterError
from kerckhoffs.experiments.base import Context, Experiment, Plot, Row
from kerckhoffs.metrics import Workload, qid_information_loss, query_error, sa_distortion
from kerckhoffs.models import AlphaKAnonymity, KAnonymity, MConfidentiality
from kerckhoffs.release import Release, Scheme

__all__ = [
    "ADULT_ROWS",
    "ADULT_SENSITIVE",
    "EXPERIMENTS",
    "adult_headline",
    "measure_e1",
    "measure_e2",
    "measure_two_tables",
    "qid_table",
]

PAPER = "001"
ADULT_ROWS = 45_222
"""Rows of Adult without unknown values (paper 001 section 7)."""
ADULT_SENSITIVE = 1_566
"""Tuples with education below high school (paper 001 section 7.1)."""
PAPER_QID = (
    "age",
    "workclass",
    "marital-status",
    "occupation",
    "race",
    "sex",
    "native-country",
    "salary",
)
"""Table XXII's QI attributes, in order (a QID of size ``d`` is the first ``d``: the paper does
not say which, ``docs/theory/minimality.md#err-qid-order``)."""
N_QUERIES = 10_000
SELECTIVITY = 0.05
KS = (2, 10, 20)
M_GRID = (2, 4, 6, 8, 10)
E1_QID_GRID = tuple(range(1, 9))
QID_GRID = (1, 2, 4, 6, 8)  # E2: every size would cost twice the time budget
QD_GRID = (1, 2, 4, 6, 8)
S_GRID = (0.01, 0.03, 0.05, 0.10)
MCONF, ALPHAK = "m-conf", "(α,k)-A"  # the paper's names (section 7.2)


# -- data ---------------------------------------------------------------------------------------
def adult_headline(table: Table) -> tuple[int, int]:
    """Check the issue's headline numbers on the Adult table: 45,222 rows and 1,566 sensitive
    tuples (education below high school). Returns them; a mismatch is an
    :class:`~kerckhoffs.errors.InputError` (the data or the schema is not the paper's)."""
    rows = int(table.n)
    sensitive = int(table.sensitive[table.sa].sum())
    if rows != ADULT_ROWS or sensitive != ADULT_SENSITIVE:
        raise InputError(
            f"Adult gives {rows:,} rows and {sensitive:,} sensitive tuples; paper 001 has "
            f"{ADULT_ROWS:,} and {ADULT_SENSITIVE:,} (check the data and the schema)"
        )
    if table.qi_names != list(PAPER_QID):
        raise InputError(f"Adult's QIs are {table.qi_names}, paper 001 Table XXII has {PAPER_QID}")
    return rows, sensitive


def qid_table(table: Table, d: int) -> Table:
    """The table restricted to its first ``d`` quasi-identifiers (the others become "other"
    columns of the schema; rows, SA and sensitive set unchanged)."""
    if not 1 <= d <= table.d:
        raise ParameterError(f"QID size must be in 1..{table.d}, got {d}")
    if d == table.d:
        return table
    schema = table.schema
    for col in schema.quasi[d:]:
        schema = schema.with_column(dataclasses.replace(col, role=Role.OTHER))
    return dataclasses.replace(
        table,
        schema=schema,
        qi=np.asfortranarray(table.qi[:, :d]),
        qi_columns=table.qi_columns[:d],
    )


def _table(ctx: Context, dataset: str, d: int) -> Table:
    def make() -> Table:
        full = ctx.dataset(dataset)
        if dataset == "adult":
            adult_headline(full)
        return qid_table(full, d)

    return ctx.cached(f"001:table:{dataset}:{d}", make)


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


# -- releases (cached, timed once) ---------------------------------------------------------------
def _alpha_k(ctx: Context, dataset: str, d: int, m: int, k: int) -> tuple[Release, float]:
    """(alpha, k) local recoding with ``alpha = 1/m`` ("(alpha,k)-A"; with ``k = 1`` the minimal
    l-diversity anonymizer E1 attacks) and its run time."""

    def make() -> tuple[Release, float]:
        table = _table(ctx, dataset, d)
        alg = get_algorithm("local-recoding")
        return _timed(lambda: alg.run(table, [AlphaKAnonymity(1.0 / m, k)], seed=0))

    return ctx.cached(f"001:alphak:{dataset}:{d}:{m}:{k}", make)


def _k_anonymous(ctx: Context, dataset: str, d: int, k: int) -> tuple[Release, float]:
    """MASK's step 1: the same local recoding with the alpha constraint off (the paper only implies
    its k-anonymizer: ``docs/theory/minimality.md#err-mask-kanonymizer``)."""

    def make() -> tuple[Release, float]:
        table = _table(ctx, dataset, d)
        alg = get_algorithm("local-recoding")
        return _timed(lambda: alg.run(table, [KAnonymity(k)], seed=0))

    return ctx.cached(f"001:kanon:{dataset}:{d}:{k}", make)


@dataclasses.dataclass(frozen=True)
class _MaskRun:
    release: Release | None
    seconds: float | None  # step 1 + steps 2-4
    step1_seconds: float
    status: str  # "ok" or why MASK refused


def _mask(ctx: Context, dataset: str, d: int, k: int, m: int, seed: int) -> _MaskRun:
    """MASK (registered ``mask``) on the cached step-1 partition; a refusal is recorded."""

    def make() -> _MaskRun:
        table = _table(ctx, dataset, d)
        base, step1 = _k_anonymous(ctx, dataset, d, k)
        alg = get_algorithm("mask")
        models = [KAnonymity(k), MConfidentiality(m)]
        try:
            rel, rest = _timed(lambda: alg.run(table, models, seed=seed, partition=base.partition))
        except ParameterError as exc:
            return _MaskRun(None, None, step1, f"refused: {exc}")
        return _MaskRun(rel, step1 + rest, step1, "ok")

    return ctx.cached(f"001:mask:{dataset}:{d}:{k}:{m}:{seed}", make)


def _two_tables(release: Release) -> Release:
    """The same groups and published SA as two tables (paper 001 section 6.2: QIs + group id,
    group id + SA): a bucketized release."""
    return Release(
        release.table,
        release.partition,
        Scheme.BUCKETIZATION,
        release.sa_published,
        release.provenance,
    )


def _workload(ctx: Context, dataset: str, d: int, qd: int, s: float, seed: int, n: int) -> Workload:
    def make() -> Workload:
        return Workload.draw(_table(ctx, dataset, d), n, qd=qd, selectivity=s, seed=seed)

    return ctx.cached(f"001:workload:{dataset}:{d}:{qd}:{s}:{seed}:{n}", make)


def _error(ctx: Context, key: str, release: Release, workload: Workload) -> tuple[float, float]:
    """Mean and median relative error (the paper plots the mean; the median is kept because
    the mean is dominated by a few queries with tiny true counts)."""

    def make() -> tuple[float, float]:
        qe = query_error(release, workload)
        return qe.mean, qe.median

    return ctx.cached(f"001:error:{key}", make)


# -- E1: the minimality attack (Fig. 7) ----------------------------------------------------------
E1_PROPORTION = "proportion of problematic tuples"
E1_CREDIBILITY = "average credibility of problematic tuples"


def measure_e1(point: Row, ctx: Context) -> list[Row]:
    """One E1 point ``{dataset, qid, m}``: the minimality attack on the minimal
    ``alpha = 1/m, k = 1`` local recoding; rows in long form (``measure``, ``series``,
    ``value``: the proportion and the average credibility of the problematic tuples, and
    ``1/m`` for reference) with the counts behind them."""
    dataset, d, m = point.get("dataset", "adult"), int(point["qid"]), int(point["m"])
    table = _table(ctx, dataset, d)
    release, alg_s = _alpha_k(ctx, dataset, d, m, 1)
    result, attack_s = _timed(lambda: minimality_attack(release, m=m))
    det = result.details
    sens_rows = table.sensitive[table.sa]
    sensitive = int(sens_rows.sum())
    if det["sensitive_tuples"] != sensitive:  # the attack's truth must be the table's
        raise AssertionError(f"attack counted {det['sensitive_tuples']} sensitive tuples")
    flags = result.tuples["flag"].to_numpy()  # one row per individual = per table row
    common = {
        "rows": table.n,
        "sensitive_tuples": sensitive,
        "problematic_tuples": det["problematic_tuples"],
        "tuples_of_breached_classes": det["tuples_of_breached_classes"],
        "groups": det["groups"],
        "generalized_groups": det["generalized_groups"],
        "ambiguous_groups": det["ambiguous_groups"],
        "sensitive_in_ambiguous": int((sens_rows & (flags == "ambiguous_split")).sum()),
        "no_inference_groups": det["no_inference_groups"],
        "anonymize_seconds": round(alg_s, 4),
        "attack_seconds": round(attack_s, 4),
    }
    return [
        {
            "measure": E1_PROPORTION,
            "series": "minimality attack",
            "value": det["problematic_proportion"],
            **common,
        },
        {
            "measure": E1_CREDIBILITY,
            "series": "minimality attack",
            "value": det["average_credibility"],
            **common,
        },
        {"measure": E1_CREDIBILITY, "series": "1/m (the bound)", "value": 1.0 / m, **common},
    ]


# -- E2: single generalized table (Fig. 8, 9) ----------------------------------------------------
E2_TIME = "(a) execution time (s)"
E2_ERROR = "(b) average relative error"
E2_LOSS = "(c) information loss of QID"
E2_DISTORTION = "(d) distortion of the sensitive attribute"


def measure_e2(point: Row, ctx: Context) -> list[Row]:
    """One E2 point ``{dataset, qid, k, m}``: m-conf (MASK, one generalized table) and
    (alpha,k)-A, four measures each, in long form (``measure``, ``series``, ``value``)."""
    dataset, d = point.get("dataset", "adult"), int(point["qid"])
    k, m, seed = int(point["k"]), int(point["m"]), int(point.get("seed", 0))
    n = int(point.get("queries", N_QUERIES))
    wl = _workload(ctx, dataset, d, d, SELECTIVITY, seed, n)
    rows: list[Row] = []
    ak, ak_s = _alpha_k(ctx, dataset, d, m, k)
    ak_err = _error(ctx, f"alphak:{dataset}:{d}:{m}:{k}:gen:{d}:{SELECTIVITY}:{seed}:{n}", ak, wl)
    ak_vals = (ak_s, ak_err[0], qid_information_loss(ak), sa_distortion(ak))
    mk = _mask(ctx, dataset, d, k, m, seed)
    if mk.release is not None:
        key = f"mask:{dataset}:{d}:{m}:{k}:{seed}:gen:{d}:{SELECTIVITY}:{seed}:{n}"
        mk_err = _error(ctx, key, mk.release, wl)
        mk_vals: tuple[float | None, ...] = (
            mk.seconds,
            mk_err[0],
            qid_information_loss(mk.release),
            sa_distortion(mk.release),
        )
        groups = mk.release.partition.n_groups
        mk_median: float | None = mk_err[1]
    else:
        mk_vals = (None, None, None, None)
        groups = None
        mk_median = None
    measures = (E2_TIME, E2_ERROR, E2_LOSS, E2_DISTORTION)
    for alg, vals, median, status, n_groups in (
        (MCONF, mk_vals, mk_median, mk.status, groups),
        (ALPHAK, ak_vals, ak_err[1], "ok", ak.partition.n_groups),
    ):
        for meas, val in zip(measures, vals, strict=True):
            rows.append(
                {
                    "measure": meas,
                    "algorithm": alg,
                    "series": f"{alg} k={k}",
                    "value": val,
                    "median_error": median if meas == E2_ERROR else None,
                    "groups": n_groups,
                    "mask_step1_share": (
                        mk.step1_seconds / mk.seconds if alg == MCONF and mk.seconds else None
                    ),
                    "status": status,
                }
            )
    return rows


# -- E3, E4: two tables (Fig. 10, 11) ------------------------------------------------------------
def measure_two_tables(point: Row, ctx: Context) -> list[Row]:
    """One two-table point ``{dataset, qid, k, m}`` plus optional ``qd`` (default ``|QID|``)
    and ``s`` (default 0.05): the average relative error of m-conf and (alpha,k)-A published
    as two tables (bucketization), on the same workload."""
    dataset, d = point.get("dataset", "adult"), int(point["qid"])
    k, m, seed = int(point["k"]), int(point["m"]), int(point.get("seed", 0))
    qd = int(point.get("qd", d))
    s = float(point.get("s", SELECTIVITY))
    n = int(point.get("queries", N_QUERIES))
    wl = _workload(ctx, dataset, d, qd, s, seed, n)
    suffix = f"bucket:{qd}:{s}:{seed}:{n}"
    ak, _ = _alpha_k(ctx, dataset, d, m, k)
    ak_err = _error(ctx, f"alphak:{dataset}:{d}:{m}:{k}:{suffix}", _two_tables(ak), wl)
    mk = _mask(ctx, dataset, d, k, m, seed)
    mk_err: tuple[float | None, float | None] = (None, None)
    if mk.release is not None:
        key = f"mask:{dataset}:{d}:{m}:{k}:{seed}:{suffix}"
        mk_err = _error(ctx, key, _two_tables(mk.release), wl)
    return [
        {
            "algorithm": alg,
            "series": f"{alg} k={k}",
            "value": err[0],
            "median_error": err[1],
            "status": status,
        }
        for alg, err, status in ((MCONF, mk_err, mk.status), (ALPHAK, ak_err, "ok"))
    ]


# -- the experiments -----------------------------------------------------------------------------
_DATA_NOTE = (
    "UCI Adult, 45,222 rows (checked), QIs = the first d attributes of Table XXII in the schema's "
    "order (the paper does not say which), SA education, sensitive set = below high school (1,566 "
    "tuples, checked); hierarchies are the project's reconstructions (the paper's are not "
    "printed). One seed (the paper averages 100 runs)."
)
_E1_NOTE = (
    "Anonymizer: our minimal local recoding (`local-recoding`, alpha = 1/m, k = 1: top-down "
    "specialization with borrowing, not the authors' code). Attack: minimality_attack in "
    "whole-class mode (thresholds on the whole class, as the paper's examples need); problematic "
    "= sensitive tuples whose class has credibility > 1/m (our reading of the paper's loose "
    "definition). A class whose generalized tuples are split over several ECs in a way the counts "
    "do not force (the paper gives no method for them) gets the no-exclusion credibility (a lower "
    "bound: the attack is conservative there); `ambiguous_groups` counts those ECs. "
)
_E2_NOTE = (
    "m-conf = registered `mask` with its step 1 = `local-recoding` with KAnonymity(k) (the "
    "(alpha,k) algorithm with alpha off; the paper only implies its k-anonymizer), run once per "
    "(QID size, k) and handed over as `partition=`; its time = step 1 + steps 2-4. (alpha,k)-A = "
    "`local-recoding` with AlphaKAnonymity(1/m, k). Relative error: 10,000 COUNT queries, qd = "
    "|QID|, s = 0.05, estimated from the published (distorted) SA; the same workload for both "
    "algorithms. MASK refuses k < m and, on Adult at m = 10, step 2a (too few m-diverse groups to "
    "copy frequencies from, for every k and QID size): those points have no value (`status`). "
)


def _e1(name: str, figure: str, x: str, grid: list[Row], xlabel: str, claim: str) -> Experiment:
    return Experiment(
        name=name,
        paper=PAPER,
        figure=figure,
        title="minimality attack on minimal (α=1/m, k=1) local recoding, Adult",
        grid=grid,
        measure=measure_e1,
        plot=Plot(
            x=x,
            y="value",
            xlabel=xlabel,
            ylabel="value",
            ylabel_per_panel=True,
            series="series",
            panels="measure",
        ),
        claim=claim,
        notes=_E1_NOTE + _DATA_NOTE,
        varies=("anonymize_seconds", "attack_seconds"),
    )


def _e2(name: str, figure: str, m: int, claim: str) -> Experiment:
    return Experiment(
        name=name,
        paper=PAPER,
        figure=figure,
        title=f"one generalized table vs QID size (m = {m})",
        grid=[{"dataset": "adult", "qid": d, "k": k, "m": m} for d in QID_GRID for k in KS],
        varies=("value[time]", "mask_step1_share"),
        measure=measure_e2,
        plot=Plot(
            x="qid",
            y="value",
            xlabel="QID size",
            ylabel="value",
            ylabel_per_panel=True,
            series="series",
            panels="measure",
        ),
        claim=claim,
        notes=_E2_NOTE + _DATA_NOTE,
    )


_E2_CLAIM = (
    "Little affected by k (2, 10, 20) on all four measures; (a) time grows with the QID size, "
    "similar for both algorithms (MASK's step 1 > 98 % of its time), smaller for larger k; "
    "(b) relative error and (d) distortion grow with the QID size, larger k gives larger error "
    "but smaller distortion; (c) QID information loss grows with QID size and with k, and "
    "(α,k)-A's is sometimes above m-conf's. No numbers are given (the plots are missing from "
    "the text)."
)

EXPERIMENTS: tuple[Experiment, ...] = (
    _e1(
        "minimality-e1-m",
        "Fig. 7a, 7b",
        "m",
        [{"dataset": "adult", "qid": 8, "m": m} for m in M_GRID],
        "m (= l)",
        "(a) the proportion of problematic tuples among the 1,566 sensitive tuples increases "
        "with m; (b) their average credibility decreases with m; the attack on QID size 8 takes "
        "about 173 s at m = 2 and 239 s at m = 10 (C/C++, Pentium IV 2.2 GHz). Two breaches "
        "with credibility 1 are shown (section 7.1).",
    ),
    _e1(
        "minimality-e1-qid",
        "Fig. 7c, 7d",
        "qid",
        [{"dataset": "adult", "qid": d, "m": 2} for d in E1_QID_GRID],
        "QID size",
        "(c) the proportion of problematic tuples increases with the QID size; (d) their "
        "average credibility stays nearly constant, about 0.9 (> 1/2), at m = 2.",
    ),
    _e2("minimality-e2-fig8", "Fig. 8a-8d", 2, _E2_CLAIM + " m = 2."),
    _e2("minimality-e2-fig9", "Fig. 9a-9d", 10, _E2_CLAIM + " m = 10."),
    Experiment(
        name="minimality-e3-fig10",
        paper=PAPER,
        figure="Fig. 10",
        title="two tables: relative error vs m and k (QID size 8)",
        grid=[{"dataset": "adult", "qid": 8, "k": k, "m": m} for m in M_GRID for k in KS],
        measure=measure_two_tables,
        plot=Plot(
            x="m",
            y="value",
            xlabel="m",
            ylabel="average relative error",
            series="series",
        ),
        claim="Two tables (bucketization): trends similar to the single-table case; larger k "
        "gives larger relative error. Only relative error is measured (QID loss is 0, "
        "distortion as in Fig. 8/9). No numbers given.",
        notes="Both algorithms' groups published as two tables (QIs + group id, group id + "
        "published SA); 10,000 queries, qd = 8, s = 0.05, one workload per point. "
        + _E2_NOTE
        + _DATA_NOTE,
    ),
    Experiment(
        name="minimality-e4-fig11ab",
        paper=PAPER,
        figure="Fig. 11a, 11b",
        title="two tables: relative error vs query dimensionality (QID size 8)",
        grid=[
            {"dataset": "adult", "qid": 8, "k": k, "m": m, "qd": qd}
            for m in (2, 10)
            for qd in QD_GRID
            for k in KS
        ],
        measure=measure_two_tables,
        plot=Plot(
            x="qd",
            y="value",
            xlabel="query dimensionality qd",
            ylabel="average relative error",
            series="series",
            panels="m",
        ),
        claim="(a) m = 2: the average relative error increases with qd; larger k gives larger "
        "error; (b) m = 10: similar trends. No numbers given.",
        notes="s = 0.05, 10,000 queries per (qd, seed), shared by every algorithm and k. "
        + _E2_NOTE
        + _DATA_NOTE,
    ),
    Experiment(
        name="minimality-e4-fig11cd",
        paper=PAPER,
        figure="Fig. 11c, 11d",
        title="two tables: relative error vs selectivity (QID size 8)",
        grid=[
            {"dataset": "adult", "qid": 8, "k": k, "m": m, "s": s}
            for m in (2, 10)
            for s in S_GRID
            for k in KS
        ],
        measure=measure_two_tables,
        plot=Plot(
            x="s",
            y="value",
            xlabel="selectivity s",
            ylabel="average relative error",
            series="series",
            panels="m",
        ),
        claim="(c) m = 2: the average relative error decreases as s grows; larger k gives "
        "larger error; (d) m = 10: similar trends, and the error is larger at m = 10 than at "
        "m = 2. No numbers given.",
        notes="qd = 8, 10,000 queries per (s, seed), shared by every algorithm and k. "
        + _E2_NOTE
        + _DATA_NOTE,
    ),
)
