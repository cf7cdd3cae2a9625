"""``kerckhoffs datasets prepare``: the demo and benchmark datasets as clean CSV files.

The loading and cleaning are the library's (:mod:`kerckhoffs.datasets`); this module parses
the options, refuses an output that cannot be written, and prints.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kerckhoffs.cli import output
from kerckhoffs.data.output import check_writable_file
from kerckhoffs.errors import InputError

datasets_app = typer.Typer(
    help="Prepare the demo and benchmark datasets as clean CSV files.", no_args_is_help=True
)


def datasets_prepare(
    name: Annotated[str, typer.Argument(help="adult | adult-training | census | demo")],
    out_file: Annotated[Path, typer.Option("--out", help="CSV file to write.")],
    source: Annotated[
        Path | None, typer.Option("--from", help="Directory or file of the raw data.")
    ] = None,
    rows: Annotated[int, typer.Option(help="demo: rows to generate.")] = 2000,
    seed: Annotated[
        int | None,
        typer.Option(
            help="demo: generator seed (default 0); --providers: assignment seed (default: "
            "fresh randomness)."
        ),
    ] = None,
    all_rows: Annotated[
        bool, typer.Option("--all-rows", help="census: keep occupation 0 (not in universe) rows.")
    ] = False,
    providers: Annotated[
        int | None,
        typer.Option(
            "--providers",
            help="Add a 'provider' column: each record assigned to one of N data providers "
            '(paper 003\'s collaborative setting); declare it with role = "provider".',
        ),
    ] = None,
    provider_split: Annotated[
        str,
        typer.Option(
            "--provider-split",
            help="uniform (equal weights) or exponential (Exp(1) weights); no provider empty.",
        ),
    ] = "uniform",
    overwrite: Annotated[bool, typer.Option(help="Replace --out if it exists.")] = False,
) -> None:
    """Write a clean CSV (or, for a .parquet --out, Parquet: what --engine dask reads) with a
    header that every other command reads.

    adult: UCI adult.data + adult.test, rows with '?' dropped (45,222 rows). census: the
    Census-Income extract, rows with occupation != 0 (148,318) unless --all-rows.
    --providers N adds a provider column (kerckhoffs.datasets.assign_providers).
    """
    import numpy as np

    from kerckhoffs import datasets as ds
    from kerckhoffs.data.io import atomic_file

    if name not in {"adult", "adult-training", "census", "demo"}:
        raise InputError(f"unknown dataset {name!r} (adult, adult-training, census, demo)")
    if out_file.suffix.lower() not in {".csv", ".parquet", ""}:
        raise InputError(f"--out {out_file}: datasets are written as .csv or .parquet")
    inputs: list[Path] = []
    if source is not None:
        inputs = [source] if source.is_file() else [p for p in source.rglob("*") if p.is_file()]
    check_writable_file(out_file, overwrite=overwrite, protect=inputs)
    if providers is not None and provider_split not in ds.PROVIDER_SPLITS:
        raise InputError(
            f"--provider-split {provider_split}: must be {' or '.join(ds.PROVIDER_SPLITS)}"
        )
    if name == "demo":
        df = ds.generate_hospital(rows, 0 if seed is None else seed)
    else:
        if source is None:
            raise InputError(f"datasets prepare {name} needs --from DIR")
        if name == "adult":
            df = ds.load_adult(source)
        elif name == "adult-training":
            df = ds.load_adult_training(source)
        else:
            df = ds.load_census(source, in_universe=not all_rows)
    if providers is not None:
        # same seed, same assignment as kerckhoffs.datasets.assign_providers(df, N, split, S);
        # the demo's rows already drew from its seed, so its providers use a distinct stream
        p_seed = seed if seed is None or name != "demo" else np.random.default_rng([seed, 1])
        df = ds.with_providers(df, providers, provider_split, p_seed)
    check_writable_file(out_file, overwrite=overwrite, protect=inputs)
    with atomic_file(out_file) as tmp:
        if out_file.suffix.lower() == ".parquet":
            df.to_parquet(tmp, index=False)
        else:
            df.to_csv(tmp, index=False)
    output.out.print(f"wrote {len(df):,} rows × {df.shape[1]} columns to {out_file}")


def register(app: typer.Typer) -> None:
    datasets_app.command("prepare")(datasets_prepare)
    app.add_typer(datasets_app, name="datasets")
