"""The setting of paper 004's composition experiments (Ganta, Kasiviswanathan, Smith, KDD
2008, section 5), shared by the figures of :mod:`.paper_004_composition` and the DP
experiments of :mod:`.paper_004_dp`: Adult and the Census stand-in for IPUMS with their QIs
and SAs, encoded once per run (cached in the run's
:class:`~kerckhoffs.experiments.base.Context`), the anonymization schemes of the figures
(Mondrian under their extra constraints among them) and the attack's figure numbers at the
confidence :data:`LEVELS`. The choices made where the paper is silent are listed in
:mod:`.paper_004_composition`'s docstring.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs.algorithms.registry import get as get_algorithm
from kerckhoffs.data.schema import Schema
from kerckhoffs.data.table import Table
from kerckhoffs.errors import ParameterError
from kerckhoffs.experiments.base import Context
from kerckhoffs.models import EntropyLDiversity, KAnonymity, TCloseness
from kerckhoffs.release import Release

CENSUS_ROWS = 70_187
"""IPUMS's size in the paper (Table 3): the Census stand-in is sampled down to it."""
CENSUS_SAMPLE_SEED = 2008
ADULT_QI = ("age", "workclass", "education", "marital-status", "race", "sex", "native-country")
COUNTRY_SA = "country"
"""The extra Figure 7 SA: large domain, low entropy; its QIs are the other six."""
WITHOUT_COUNTRY = "@without-country"
"""Suffix of a Census SA name whose table leaves country out of the QIs, as the country SA's
does: ``occupation_major@without-country`` has the six QIs and so the same k-anonymous
partitions as the country series, which makes the Figure 7 comparison a like-for-like one."""
MISSING_AS_VALUE = {"hispanic_origin", "country"}
FINE_SA = "occupation_citizenship"
"""A Census SA with a domain like IPUMS's occupation (247 values): the detailed occupation
crossed with citizenship (225 values in the whole stand-in, 223 in the 70,187-row sample the
experiments use), for the domain-size hypothesis."""


# -- data -----------------------------------------------------------------------------------------
def adult_schema(examples: Path) -> Schema:
    """Paper 004's Adult schema (Table 2): the project's Adult hierarchies with occupation as
    the SA and education as a QI (papers 000/001 use the opposite); salary left out."""
    base = examples / "adult"
    raw = tomllib.loads((base / "schema.toml").read_text(encoding="utf-8"))["columns"]
    cols: dict[str, Any] = {c: dict(raw[c]) for c in ADULT_QI if c in raw}
    cols["education"] = {
        "role": "quasi",
        "kind": "categorical",
        "hierarchy": "hierarchies/education.csv",
    }
    cols["occupation"] = {"role": "sensitive", "kind": "categorical"}
    return Schema.from_dict({"missing": "error", "columns": cols}, base_dir=base)


LEVELS = ((100, 1.0), (50, 1 / 2), (33, 1 / 3), (25, 1 / 4), (20, 1 / 5))
"""Confidence levels (percent label, value): |S_i| <= 1, 2, 3, 4, 5."""


def six_qis(sa: str | None) -> bool:
    """Whether the Census table of ``sa`` leaves country out of the QIs (the country SA and
    the :data:`WITHOUT_COUNTRY` variants)."""
    return sa == COUNTRY_SA or (sa or "").endswith(WITHOUT_COUNTRY)


def census_schema(examples: Path, sa: str = "occupation") -> Schema:
    """The Census stand-in's schema with ``sa`` as the sensitive attribute (the QIs stay the
    seven of ``examples/census/schema.toml``, except ``country`` when it is the SA or ``sa``
    ends in :data:`WITHOUT_COUNTRY`)."""
    base = examples / "census"
    raw = tomllib.loads((base / "schema.toml").read_text(encoding="utf-8"))
    cols = {name: dict(opts) for name, opts in raw["columns"].items()}
    six = six_qis(sa)
    sa = sa.removesuffix(WITHOUT_COUNTRY)
    cols.pop("occupation")
    cols.pop(sa, None)
    if six:
        cols.pop(COUNTRY_SA, None)
    cols[sa] = {"role": "sensitive", "kind": "categorical"}
    if sa in MISSING_AS_VALUE:
        cols[sa]["missing"] = "category"
    return Schema.from_dict({"missing": "error", "columns": cols}, base_dir=base)


def census_frame(ctx: Context) -> pd.DataFrame:
    """The Census stand-in (occupation != 0), sampled to :data:`CENSUS_ROWS` rows."""

    def make() -> pd.DataFrame:
        from kerckhoffs.datasets import load_census

        df = load_census(ctx.data_dir / "census")
        rng = np.random.default_rng(CENSUS_SAMPLE_SEED)
        rows = np.sort(rng.choice(len(df), size=min(CENSUS_ROWS, len(df)), replace=False))
        out = df.iloc[rows].reset_index(drop=True)
        out[FINE_SA] = out["occupation"].astype(str) + " | " + out["citizenship"].astype(str)
        return out

    return ctx.cached("p004:census-frame", make)


def table_of(ctx: Context, dataset: str, sa: str | None = None) -> Table:
    """The encoded table of ``dataset`` (``adult``, ``census``) with SA ``sa`` (Census only;
    default occupation). Cached in the context."""
    if dataset == "adult":
        if sa not in (None, "occupation"):
            raise ParameterError(f"paper 004's Adult has SA occupation only, not {sa!r}")

        def make_adult() -> Table:
            from kerckhoffs.datasets import load_adult_training

            df = load_adult_training(ctx.data_dir / "adult")
            return Table.encode(df, adult_schema(ctx.examples))

        return ctx.cached("p004:adult", make_adult)
    if dataset == "census":
        sa = sa or "occupation"
        return ctx.cached(
            f"p004:census:{sa}",
            lambda: Table.encode(census_frame(ctx), census_schema(ctx.examples, sa)),
        )
    raise ParameterError(f"paper 004 experiments run on adult or census, not {dataset!r}")


def sa_entropy(table: Table) -> float:
    """Shannon entropy (bits) of the SA over the whole table (paper 004, Section 5,
    ``docs/theory/composition.md#experiment-data``; Definition 4 does not give the entropy's
    unit, we use bits: ``docs/theory/composition.md#err-entropy-units``)."""
    p = np.bincount(table.sa, minlength=table.n_sa) / table.n
    p = p[p > 0]
    return float(-(p * np.log2(p)).sum())


# -- Mondrian with entropy l-diversity / t-closeness constraints ----------------------------------
def constrained_mondrian(
    table: Table,
    k: int,
    *,
    l: float | None = None,  # noqa: E741
    t: float | None = None,
) -> Release:
    """Mondrian under k-anonymity plus, optionally, entropy l-diversity (paper 004 Def. 4) and
    t-closeness (Def. 5), a cut allowed only when both halves satisfy every constraint (paper
    004, Section 5, after LeFevre et al., ICDE 2006: ``docs/theory/composition.md#mondrian``):
    the registered ``mondrian`` with those models."""
    models: list[Any] = [KAnonymity(int(k))]
    if l is not None:
        models.append(EntropyLDiversity(float(l)))
    if t is not None:
        models.append(TCloseness(float(t)))
    return get_algorithm("mondrian").run(table, models, categorical_cuts="median")


def anonymize_scheme(sub: Table, scheme: str, params: dict[str, Any]) -> Release:
    """``sub`` anonymized by one of the figures' schemes (``mondrian``, ``mdav``,
    ``mondrian-relaxed``, ``mondrian-hierarchy``, ``entropy-l``, ``t-closeness``) with
    ``params`` (``k``, and ``l`` or ``t``)."""
    k = int(params["k"])
    if scheme == "mondrian":  # the reproduction's Mondrian: categorical QIs cut at their median
        return get_algorithm(scheme).run(sub, [KAnonymity(k)], categorical_cuts="median")
    if scheme == "mdav":
        return get_algorithm(scheme).run(sub, [KAnonymity(k)], seed=0)
    if scheme == "mondrian-relaxed":  # LeFevre's relaxed partitioning: ties at the median split
        return get_algorithm("mondrian").run(sub, [KAnonymity(k)], cuts="relaxed")
    if scheme == "mondrian-hierarchy":  # LeFevre's categorical split into hierarchy children
        return get_algorithm("mondrian").run(sub, [KAnonymity(k)], categorical_cuts="hierarchy")
    if scheme == "entropy-l":
        return constrained_mondrian(sub, k, l=float(params["l"]))
    if scheme == "t-closeness":
        return constrained_mondrian(sub, k, t=float(params["t"]))
    raise ParameterError(f"unknown scheme {scheme!r}")


def summarize(details: dict[str, Any], n_rel: int) -> dict[str, Any]:
    """The attack's details as flat figure numbers (shares in percent)."""
    out: dict[str, Any] = {
        "targets": details["targets"],
        "vulnerable_pct": 100 * details["vulnerable_share"],
        "ea_post": details["effective_anonymity_after"],
        "drop_per_person": details["anonymity_drop"],
        "presumed_k": min(details["presumed_anonymity"]),
        "presumed_drop": details["presumed_drop"],
        "truth_in_set": details["truth_in_set"],
        "inconsistent": details["inconsistent"],
    }
    for pct, _ in LEVELS:
        out[f"pvp{pct}"] = 100 * details["breach_by_confidence"][f"{pct}%"]
    for j in range(n_rel):
        out[f"ea_prior_{j + 1}"] = details["prior_anonymity"][j]
        out[f"drop_{j + 1}"] = details["drop_per_release"][j]
        out[f"partition_size_{j + 1}"] = details["partition_size"][j]
    return out
