"""The tables of paper 003's experiments (Goryczka, Xiong, Fung, "m-Privacy for
Collaborative Data Publishing", 2013/2014, section 5): Adult and the Census stand-in, each
row assigned to one of :data:`N_PROVIDERS` data providers, encoded once per run and cached
in the run's :class:`~kerckhoffs.experiments.base.Context`. The measures and the experiments
are in :mod:`.paper_003_mprivacy`.
"""

from __future__ import annotations

import tomllib

import numpy as np
import pandas as pd

from kerckhoffs.data.datasets import with_providers
from kerckhoffs.data.schema import Schema
from kerckhoffs.data.table import Table
from kerckhoffs.datasets import load_adult, load_census
from kerckhoffs.errors import ParameterError
from kerckhoffs.experiments.base import Context

N_PROVIDERS = 10
"""The data providers every record is spread over (Table II, right column)."""


def adult_frame(ctx: Context) -> pd.DataFrame:
    """The 45,222-row Adult table (paper 003, Section V; ``docs/theory/m-privacy.md#experiments``),
    loaded once per run."""

    def make() -> pd.DataFrame:
        return load_adult(ctx.data_dir / "adult")

    return ctx.cached("p003:adult-frame", make)


def adult_schema(ctx: Context) -> Schema:
    """Paper 003's Adult schema (the paper does not state its Adult QI
    set: ``docs/theory/m-privacy.md#err-adult-qis``): ``examples/adult/schema_mprivacy.toml``."""
    return Schema.from_toml(ctx.examples / "adult" / "schema_mprivacy.toml")


def census_schema(ctx: Context) -> Schema:
    """The Census stand-in's schema (``examples/census/schema.toml``) without hierarchies (as
    paper 003's Adult schema: ordered codes, code-interval cells) and with a provider column."""
    base = ctx.examples / "census"
    raw = tomllib.loads((base / "schema.toml").read_text(encoding="utf-8"))
    cols = {
        name: {k: v for k, v in opts.items() if k != "hierarchy"}
        for name, opts in raw["columns"].items()
    }
    cols["provider"] = {"role": "provider"}
    return Schema.from_dict({"missing": "error", "columns": cols}, base_dir=base)


def _frame(ctx: Context, dataset: str) -> pd.DataFrame:
    if dataset == "adult":
        return adult_frame(ctx)
    if dataset == "census":

        def make() -> pd.DataFrame:
            return load_census(ctx.data_dir / "census")

        return ctx.cached("p003:census-frame", make)
    raise ParameterError(f"paper 003 experiments run on adult or census, not {dataset!r}")


def provider_table(ctx: Context, dataset: str, rows: int, seed: int) -> Table:
    """``rows`` records of ``dataset`` (all of them, or a uniform sample drawn with ``seed``)
    spread over :data:`N_PROVIDERS` providers by Exp(1) weights (the paper does not give the
    exponential split's parameters: ``docs/theory/m-privacy.md#err-provider-sizes``), encoded.
    Cached per (dataset, rows, seed)."""

    def make() -> Table:
        df = _frame(ctx, dataset)
        rng = np.random.default_rng([seed, rows, 3])
        if rows < len(df):
            df = df.iloc[np.sort(rng.choice(len(df), size=rows, replace=False))]
        elif rows > len(df):
            raise ParameterError(f"{dataset} has {len(df)} rows, fewer than {rows}")
        df = with_providers(df.reset_index(drop=True), N_PROVIDERS, "exponential", rng)
        schema = adult_schema(ctx) if dataset == "adult" else census_schema(ctx)
        return Table.encode(df, schema)

    return ctx.cached(f"p003:table:{dataset}:{rows}:{seed}", make)


def adult_encoded(ctx: Context) -> Table:
    """All of Adult under paper 003's schema, without providers (the pool groups are drawn
    from): only its SA codes are read."""

    def make() -> Table:
        path = ctx.examples / "adult" / "schema_mprivacy.toml"
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
        raw["columns"].pop("provider")
        return Table.encode(adult_frame(ctx), Schema.from_dict(raw, base_dir=path.parent))

    return ctx.cached("p003:adult-encoded", make)
