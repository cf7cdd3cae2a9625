"""The ``kerckhoffs`` command line.

Every problem with the input (missing file, wrong delimiter, a value missing from a
hierarchy, impossible parameters) is one line on stderr starting with ``error:`` and exit
code 2, with no output file left behind. ``check`` exits 1 when a model is violated, so it can
gate a pipeline.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kerckhoffs import __version__
from kerckhoffs.cli_options import parse_options
from kerckhoffs.cli_output import (
    MODEL_HELP,
    counted,
    err,
    one_line,
    out,
    print_results,
    print_singletons,
    reflow_help,
    value,
    working,
)
from kerckhoffs.cli_output import table as rich_table
from kerckhoffs.data.output import check_writable_file, output_directory
from kerckhoffs.data.schema import Schema
from kerckhoffs.errors import ArgumentError, InputError, KerckhoffsError, NothingReleased

# numpy, pandas and the library are imported by the commands that use them, so that
# `kerckhoffs --help` (and a mistyped command) does not load them (issue 15, item 4)
if TYPE_CHECKING:
    from kerckhoffs.models import ModelResult
    from kerckhoffs.release import Release

app = typer.Typer(
    name="kerckhoffs",
    help="Privacy-preserving data publishing that stays private when the adversary knows "
    "the algorithm.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
datasets_app = typer.Typer(
    help="Prepare the demo and benchmark datasets as clean CSV files.", no_args_is_help=True
)
app.add_typer(datasets_app, name="datasets")


def _version(value: bool) -> None:
    if value:
        out.print(f"kerckhoffs {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    """Privacy-preserving data publishing that stays private when the adversary knows the
    algorithm."""


# -- check -------------------------------------------------------------------------------------


# the Dask options of anonymize and check (kerckhoffs.cli_dask)
EngineOption = Annotated[
    str,
    typer.Option(
        "--engine",
        help="memory (default) | dask: run on Dask workers (DATA: Parquet file, folder or "
        "glob; needs pip install 'kerckhoffs[dask]').",
    ),
]
SchedulerOption = Annotated[
    str | None,
    typer.Option(
        "--scheduler",
        help="With --engine dask: a Dask scheduler's address (tcp://HOST:8786); default: "
        "a local cluster of this machine's CPUs.",
    ),
]
WorkersOption = Annotated[
    int | None,
    typer.Option("--workers", help="With --engine dask and no --scheduler: worker processes."),
]
WorkerMemoryOption = Annotated[
    str | None,
    typer.Option(
        "--worker-memory", help="With --engine dask and no --scheduler: memory per worker (3GB)."
    ),
]


@app.command()
def check(
    data: Annotated[Path, typer.Argument(help="Data file (CSV/Parquet) or a release directory.")],
    model: Annotated[list[str], typer.Option("--model", "-m", help=MODEL_HELP)],
    schema: Annotated[
        Path | None, typer.Option("--schema", "-s", help="Schema TOML (required for data files).")
    ] = None,
    sep: Annotated[str | None, typer.Option(help="CSV delimiter (default: detected).")] = None,
    worst: Annotated[int, typer.Option(help="How many of the worst groups to list.")] = 5,
    published: Annotated[
        bool,
        typer.Option(
            "--published",
            help="DATA is a generalized table published by another tool: rows with the same "
            "QI cells (or the same 'group' column) form a group; cells are not looked up in "
            "hierarchies.",
        ),
    ] = False,
    no_verify: Annotated[
        bool,
        typer.Option(
            "--no-verify",
            help="Check a release directory whose files were edited on purpose: skip the "
            "SHA-256 verification against release.json and check the files as they are (the "
            "CSV when both formats exist).",
        ),
    ] = False,
    providers: Annotated[
        Path | None,
        typer.Option(
            "--providers",
            help="For m-privacy on a release directory: the data provider of each published "
            "row, as `anonymize --provider-rows` wrote it for this release (another release's "
            "file is refused).",
        ),
    ] = None,
    engine: EngineOption = "memory",
    scheduler: SchedulerOption = None,
    workers: WorkersOption = None,
    worker_memory: WorkerMemoryOption = None,
) -> None:
    """Check privacy models on a table as it stands or on a published release.

    A data file is checked as published unchanged: rows with the same QI values form a group.
    Prints each model's achieved value and the worst groups; exits 1 if a model is violated.
    """
    from kerckhoffs.cli_dask import check_engine, memory_engine_only

    check_engine(engine)
    if engine == "dask":
        from kerckhoffs.cli_dask import check_dask_cli, refuse

        flags: list[tuple[str, object]] = [
            ("--published", published),
            ("--no-verify", no_verify),
            ("--providers", providers),
            ("--sep", sep),
        ]
        for flag, given in flags:
            refuse(flag, given)
        if not check_dask_cli(data, schema, model, scheduler, workers, worker_memory):
            raise typer.Exit(1)
        return
    memory_engine_only(scheduler, workers, worker_memory)
    from kerckhoffs import api
    from kerckhoffs.data.provider_rows import read_provider_rows, release_integrity
    from kerckhoffs.data.table import Table
    from kerckhoffs.models import parse_model
    from kerckhoffs.release import Partition, Provenance, Release, Scheme

    models = [parse_model(m) for m in model]
    if providers is not None and not data.is_dir():
        raise InputError(
            f"--providers {providers}: only for a release directory (a data file gives its "
            "providers in a column of role 'provider')"
        )
    if data.is_dir():
        release = Release.from_published(
            data, Schema.from_toml(schema) if schema else None, verify=not no_verify
        )
        if providers is not None:
            bound_to = release_integrity(release.published_metadata, data)
            labels = read_provider_rows(providers, release.table.n, release=bound_to)
            release = release.with_providers(labels)
        for note in release.notes:
            err.print(f"note: {note}", soft_wrap=True)
        what = f"release {data} ({release.provenance.algorithm}, {release.scheme.value})"
    elif published:
        if schema is None:
            raise InputError("checking a published table needs --schema SCHEMA.toml")
        release = Release.from_published(data, Schema.from_toml(schema), sep=sep)
        what = f"published table {data}"
    else:
        if schema is None:
            raise InputError("checking a data file needs --schema SCHEMA.toml")
        table = Table.from_csv(data, Schema.from_toml(schema), sep=sep)
        for note in table.notes:
            out.print(f"note: {note}")
        release = Release(table, Partition.by_qi(table), provenance=Provenance("none"))
        what = f"{data} as it stands (each distinct QI combination is a group)"
    results = api.check(release, models=models).results
    out.print(
        (
            f"{what}: {counted(release.table.n, 'cell')} of noisy counts, "
            if release.scheme == Scheme.DP
            else f"{what}: {counted(release.table.n, 'row')}, "
            f"{counted(release.partition.n_groups, 'group')}, "
        )
        + f"QIs {', '.join(release.table.qi_names)}; SA {release.table.sa_name}"
    )
    print_results(results)
    print_singletons(release, as_it_stands=not data.is_dir() and not published)
    for r in results:
        if not r.satisfied and worst > 0 and release.scheme != Scheme.DP:
            _print_worst(release, r, worst)
    if not all(r.satisfied for r in results):
        raise typer.Exit(1)


def _print_worst(release: Release, r: ModelResult, n: int) -> None:
    """One line per worst group: its QI cells, size, measure and most frequent SA values."""
    import numpy as np

    from kerckhoffs.models.base import format_number

    table = release.table
    hist = release.histogram()
    ids = r.worst_groups(n)
    lo, hi = release.group_bounds()
    out.print(f"worst groups for {r.model} (measure = the model's per-group value):")
    for g in ids:
        cells = ", ".join(
            f"{value(col.name)}={value(col.generalize(lo[g : g + 1, j], hi[g : g + 1, j])[0])}"
            for j, col in enumerate(table.qi_columns)
        )
        counts = hist.counts[g]
        top = np.argsort(-counts, kind="stable")[:3]
        sa = ", ".join(
            f"{value(table.sa_column.labels[s])}×{counts[s]}" for s in top if counts[s] > 0
        )
        out.print(
            f"  group {g}: {int(hist.sizes[g])} row(s), measure {format_number(r.group_values[g])}"
            f" | {cells} | {value(table.sa_name)}: {sa}",
            soft_wrap=True,
        )


# -- anonymize --------------------------------------------------------------------------------
@app.command()
def anonymize(
    data: Annotated[Path, typer.Argument(help="Data file (CSV/Parquet).")],
    schema: Annotated[Path, typer.Option("--schema", "-s", help="Schema TOML.")],
    algorithm: Annotated[
        str, typer.Option("--algorithm", "-a", help="Algorithm name (see `kerckhoffs algorithms`).")
    ],
    model: Annotated[list[str], typer.Option("--model", "-m", help=MODEL_HELP)],
    out_dir: Annotated[Path, typer.Option("--out", "-o", help="Release directory to write.")],
    seed: Annotated[
        int | None,
        typer.Option(
            help="For tests and experiments only: seed the random choices of a randomized "
            "algorithm (default: fresh randomness from the operating system on every run). "
            "Anyone who learns the seed can undo the randomness, so it is never written into "
            "the release; keep it secret.",
        ),
    ] = None,
    scheme: Annotated[
        str | None,
        typer.Option(help="generalization | bucketization (where the algorithm offers both)."),
    ] = None,
    option: Annotated[
        list[str] | None,
        typer.Option("--option", "-O", help="Algorithm option KEY=VALUE; repeat for several."),
    ] = None,
    sep: Annotated[str | None, typer.Option(help="CSV delimiter (default: detected).")] = None,
    fmt: Annotated[
        list[str] | None, typer.Option("--format", help="csv and/or parquet (default: both).")
    ] = None,
    include_other: Annotated[
        bool, typer.Option("--include-other", help="Publish columns of role 'other' too.")
    ] = False,
    overwrite: Annotated[bool, typer.Option(help="Replace --out if it exists.")] = False,
    provider_rows: Annotated[
        Path | None,
        typer.Option(
            "--provider-rows",
            help="Also write, outside the release, which data provider each published row "
            "came from (CSV row,provider; for `check DIR --model m-privacy=M --providers "
            "FILE`). Keep it private: the release never holds it.",
        ),
    ] = None,
    ledger: Annotated[
        Path | None,
        typer.Option(
            "--ledger",
            help="A DP release only: record it (epsilon, delta, who is in it: the identifier "
            "column) in this privacy ledger, created if missing in an existing folder (see "
            "`kerckhoffs budget`). "
            "Keep it private: it names people.",
        ),
    ] = None,
    budget: Annotated[
        str | None,
        typer.Option(
            "--budget",
            help="With --ledger: a per-person budget EPSILON or EPSILON,DELTA (basic "
            "composition across the ledger); see --over-budget for who would exceed it.",
        ),
    ] = None,
    over_budget: Annotated[
        str | None,
        typer.Option(
            "--over-budget",
            help="With --budget: leave-out (default: people this release would take over "
            "budget are left out of its computation and charged nothing; nothing printed or "
            "published says who or how many) | refuse (refuse the whole release, which tells "
            "whoever sees the refusal that such a person is in the data).",
        ),
    ] = None,
    ledger_neighbours: Annotated[
        str | None,
        typer.Option(
            "--ledger-neighbours",
            help="With --ledger: the neighbour notion of a new ledger's budget, substitution "
            "(default) or add-remove; an existing ledger keeps its own.",
        ),
    ] = None,
    ledger_id: Annotated[
        str | None,
        typer.Option(
            "--ledger-id",
            help="With --ledger: the identifier column naming the people (default: the "
            "schema's only column of role identifier).",
        ),
    ] = None,
    engine: EngineOption = "memory",
    scheduler: SchedulerOption = None,
    workers: WorkersOption = None,
    worker_memory: WorkerMemoryOption = None,
) -> None:
    """Anonymize a table and write the release (only if every --model passes).

    The models are checked again, independently of the algorithm, on the files about to be
    written; if one fails nothing is written (fail closed). With --ledger a DP release is
    charged to the ledger before it is published; with --budget the people it would take over
    budget are left out of its computation (or, with --over-budget refuse, it is refused).
    """
    from kerckhoffs.cli_dask import check_engine, memory_engine_only

    check_engine(engine)
    if engine == "dask":
        from kerckhoffs.cli_dask import anonymize_dask, refuse

        flags: list[tuple[str, object]] = [
            ("--seed", seed is not None),
            ("--scheme", scheme),
            ("--format", fmt and fmt != ["parquet"]),
            ("--sep", sep),
            ("--include-other", include_other),
            ("--provider-rows", provider_rows),
            ("--ledger", ledger),
            ("--budget", budget),
            ("--over-budget", over_budget),
            ("--ledger-neighbours", ledger_neighbours),
        ]
        for flag, given in flags:
            refuse(flag, given)
        protect = [schema, *schema_files(Schema.from_toml(schema))]
        anonymize_dask(
            data, schema, algorithm, model, out_dir, option or [], overwrite, scheduler,
            workers, worker_memory, protect,
        )  # fmt: skip
        return
    memory_engine_only(scheduler, workers, worker_memory)
    import numpy as np

    from kerckhoffs import api
    from kerckhoffs.algorithms import get
    from kerckhoffs.data.io import atomic_file
    from kerckhoffs.data.provider_rows import folder_integrity, write_provider_rows
    from kerckhoffs.data.table import Table
    from kerckhoffs.models import parse_model
    from kerckhoffs.randomness import check_seed
    from kerckhoffs.release import Scheme

    publication = None
    new_ledger = False

    info = get(algorithm)
    models = [parse_model(m) for m in model]
    options = parse_options(option or [])
    info.check_options(options)
    if seed is not None:
        check_seed(seed)
        if not info.seedable:
            raise InputError(
                f"--seed: {info.name} cannot be seeded (OpenDP draws its noise from a secure "
                "generator)"
            )
    if scheme is not None and scheme not in [s.value for s in info.schemes]:
        allowed = ", ".join(s.value for s in info.schemes)
        raise InputError(f"{info.name} publishes by {allowed}, not {scheme!r}")
    bad_fmt = sorted(set(fmt or ()) - {"csv", "parquet"})
    if bad_fmt:
        raise InputError(f"--format {bad_fmt[0]!r}: choose csv and/or parquet")
    sch = Schema.from_toml(schema)
    protect = [data, schema, *schema_files(sch)]
    if provider_rows is not None:
        if Scheme.DP in info.schemes or scheme == Scheme.DP.value:
            raise InputError(
                f"--provider-rows {provider_rows}: {info.name} publishes a DP count table, "
                "which has no rows to list"
            )
        _check_provider_rows_file(provider_rows, out_dir, sch, overwrite, protect)
    _check_ledger_flags(ledger, budget, ledger_id, over_budget, ledger_neighbours)
    with contextlib.ExitStack() as stack:
        txn = None
        if ledger is not None:  # locked, then read: nobody records between our read and write
            from kerckhoffs.dp.publish import ledger_transaction

            txn = stack.enter_context(
                ledger_transaction(
                    ledger, sch, out_dir=out_dir, budget=budget,
                    over_budget=over_budget or "leave-out", person=ledger_id,
                    neighbours=ledger_neighbours, protect=protect,
                )
            )  # fmt: skip
            new_ledger = not ledger.exists()
        stack.enter_context(
            output_directory(out_dir, kind="release", overwrite=overwrite, protect=protect)
        )
        with working(f"reading {data}"):
            table = Table.from_csv(data, sch, sep=sep, keep_other=include_other)
        for note in table.notes:
            out.print(f"note: {note}")
        if include_other:
            names = list(table.other.columns) if table.other is not None else []
            out.print(
                "note: --include-other publishes "
                + (", ".join(names) if names else "no column (the data has none of role other)")
                + " unchanged, row by row: no model protects these columns"
            )
        if seed is not None:
            if info.randomized:
                err.print(
                    f"warning: --seed makes {info.name}'s random choices reproducible; anyone "
                    "who learns the seed can re-run it and undo them. Keep it secret (it is not "
                    "written into the release).",
                    soft_wrap=True,
                )
            else:
                err.print(
                    f"note: {info.name} is deterministic; --seed has no effect", soft_wrap=True
                )
        if txn is not None:  # the library's transaction: compute, stage, charge, publish
            with working(f"running {info.name}, writing {out_dir} and charging {ledger}"):
                t0 = time.perf_counter()
                publication = txn.publish(
                    table, data, algorithm, models, out_dir, options=options,
                    formats=tuple(fmt or ("csv", "parquet")), overwrite=overwrite, sep=sep,
                    protect=protect, include_other=include_other,
                )  # fmt: skip
                elapsed = time.perf_counter() - t0
            release, results = publication.release, publication.results
        else:
            with working(f"running {info.name} on {table.n:,} rows"):
                t0 = time.perf_counter()
                # the independent check runs once, in write(), on the files about to be written
                release = api.anonymize_table(
                    table, algorithm, models, seed=seed, scheme=scheme, options=options,
                    verify=False,
                )  # fmt: skip
                elapsed = time.perf_counter() - t0
            with working(f"checking and writing {out_dir}"):
                results = release.write(
                    out_dir,
                    formats=tuple(fmt or ("csv", "parquet")),
                    include_other=include_other,
                    overwrite=overwrite,
                )
        if provider_rows is not None:
            with atomic_file(provider_rows, private=True) as tmp:
                write_provider_rows(tmp, release.published_providers(), folder_integrity(out_dir))
    sizes = release.partition.sizes
    noise = getattr(release, "noise", None)
    if release.scheme == Scheme.DP and noise is not None:
        # only what release.json publishes: never the number of rows (private under
        # add-remove neighbours) nor the time taken (it grows with it)
        how = (
            f"randomized response, each answer kept with probability {1 - float(noise.scale):.4g}"
            if noise.mechanism.value == "randomized-response"
            else f"{noise.mechanism.value} noise, scale {noise.scale:g}, sensitivity "
            f"{noise.sensitivity}"
        )
        out.print(
            f"{info.name}: {counted(release.table.n, 'cell')} of noisy counts ({how}; DP under "
            f"{noise.neighbours.value} neighbours)",
        )
    else:
        out.print(
            f"{info.name}: {counted(table.n, 'row')} -> "
            f"{counted(release.partition.n_groups, 'group')} "
            f"(size min {sizes.min()}, median {int(np.median(sizes))}, max {sizes.max()}, "
            f"mean {sizes.mean():.1f}) in {elapsed:.2f} s"
            + (
                f"; {int(release.perturbed.sum()):,} SA values perturbed"
                if release.perturbed.any()
                else ""
            )
        )
    print_results(results)
    print_singletons(release)
    out.print(f"wrote {release.scheme.value} release to {out_dir} (independent check passed)")
    if provider_rows is not None:
        out.print(
            f"wrote the provider of each published row to {provider_rows} (keep it private)",
        )
    if publication is not None:
        entry = publication.entry
        if new_ledger:
            err.print(f"note: {ledger} did not exist; a new ledger starts there")
        # no count of people: who was charged, and who was left out, is in the ledger only
        out.print(
            f"recorded epsilon={entry.epsilon:g}, delta={entry.delta:g} ({entry.neighbours} "
            f"neighbours) in ledger {ledger} before publishing (keep it private; `kerckhoffs "
            f"budget {ledger}` shows it)",
        )


def _check_ledger_flags(
    ledger: Path | None,
    budget: str | None,
    ledger_id: str | None,
    over_budget: str | None,
    ledger_neighbours: str | None,
) -> None:
    """Refuse, before any work, a ledger option without --ledger, --over-budget without
    --budget or with a value that cannot be (the other checks:
    :func:`kerckhoffs.dp.publish.ledger_transaction`)."""
    if ledger is None:
        given = [
            flag
            for flag, value in (
                ("--budget", budget),
                ("--ledger-id", ledger_id),
                ("--over-budget", over_budget),
                ("--ledger-neighbours", ledger_neighbours),
            )
            if value is not None
        ]
        if given:
            raise InputError(f"{given[0]} needs --ledger LEDGER (the file that keeps the accounts)")
        return
    if over_budget is not None:
        from kerckhoffs.dp.publish import parse_over_budget

        try:
            parse_over_budget(over_budget)
        except KerckhoffsError:
            raise InputError(f"--over-budget {over_budget}: choose leave-out or refuse") from None
        if budget is None:
            raise InputError("--over-budget needs --budget (the budget people may go over)")


def _check_provider_rows_file(
    target: Path, out_dir: Path, schema: Schema, overwrite: bool, protect: list[Path]
) -> None:
    """Refuse, before any work, a --provider-rows file that cannot be written, could be
    published (inside the release directory or another release's folder), is a folder the
    release is written into, or has nothing to say (no provider column)."""
    if schema.provider is None:
        raise InputError(f"--provider-rows {target}: the schema has no column of role 'provider'")
    from kerckhoffs.data.output import check_private_file
    from kerckhoffs.data.provider_rows import is_provider_rows_file

    check_private_file(target, flag="--provider-rows", out_dir=out_dir, protect=protect)

    check_writable_file(target, overwrite=overwrite, protect=protect, flag="--provider-rows")
    if target.is_file() and not is_provider_rows_file(target):
        raise InputError(
            f"--provider-rows {target} exists and is not a providers file kerckhoffs wrote "
            "(header row,provider): refusing to replace it"
        )


def schema_files(schema: Schema) -> list[Path]:
    """The hierarchy files a schema reads (inputs no output may replace)."""
    files = []
    for c in schema.columns:
        if isinstance(c.hierarchy, str | Path):
            h = Path(c.hierarchy)
            files.append(h if h.is_absolute() or schema.base_dir is None else schema.base_dir / h)
    return files


@app.command()
def algorithms() -> None:
    """List the anonymization algorithms, the models each enforces and how each publishes."""
    from kerckhoffs.algorithms import REGISTRY  # importing the package registers them all
    from kerckhoffs.models.parse import SYNTAX

    t = rich_table("name", "enforces", "publishes", "summary")
    for name in sorted(REGISTRY):
        a = REGISTRY[name]
        t.add_row(
            name + (" *" if a.randomized else ""),
            ", ".join(SYNTAX.get(m, m) for m in a.models),
            ", ".join(s.value for s in a.schemes),
            a.summary,
        )
    out.print(t)
    out.print("* randomized: draws fresh secret randomness on every run (--seed only for tests)")


# -- datasets ----------------------------------------------------------------------------------
@datasets_app.command("prepare")
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
    out.print(f"wrote {len(df):,} rows × {df.shape[1]} columns to {out_file}")


def _register_commands() -> None:
    from kerckhoffs import (
        cli_attack,
        cli_audit_algorithm,
        cli_budget,
        cli_demo,
        cli_disclosure,
        cli_reproduce,
    )

    cli_demo.register(app)  # first: the help lists it after algorithms, as before
    cli_attack.register(app)
    cli_audit_algorithm.register(app)
    cli_reproduce.register(app)
    cli_disclosure.register(app)
    cli_budget.register(app)


_register_commands()


@functools.cache
def _command() -> Callable[..., object]:
    """The click command typer builds from :data:`app`, built once per process: building it
    evaluates every command's annotations (about 23 ms), which ``app(...)`` would redo on each
    :func:`run` of a process that runs many (the tests run about 400). Each command's help
    is reflowed (:func:`~kerckhoffs.cli_output.reflow_help`): the docstrings' line breaks
    would otherwise stay in the help, ragged at any width but theirs."""
    command = typer.main.get_command(app)
    _reflow(command)
    return command


def _reflow(command: object) -> None:
    """Reflow the help of ``command`` and of its subcommands, in place."""
    help_text = getattr(command, "help", None)
    if isinstance(help_text, str):
        command.help = reflow_help(help_text)  # type: ignore[attr-defined]
    for sub in (getattr(command, "commands", None) or {}).values():
        _reflow(sub)


def run(args: Sequence[str]) -> int:
    """Run ``kerckhoffs ARGS`` and return the exit code: 0 done, 1 a privacy verdict
    (a violated model, an unsafe release), 2 bad input or usage, 3 an internal error or too
    little memory.

    Whatever goes wrong ends in one line on stderr starting with ``error:``, never a
    traceback (``KERCKHOFFS_TRACEBACK=1`` shows it for internal errors, to report them).
    """
    try:
        rv = _command()(args=list(args), prog_name="kerckhoffs", standalone_mode=False)
    except ArgumentError as exc:  # name the parameter as typed: --sa-values, --option
        return _fail(f"--{exc.parameter.replace('_', '-')} {exc.value}: {exc.reason}")
    except NothingReleased as exc:  # a verdict (paper 002's φ), not bad input
        return _fail(exc.cli_message, NothingReleased.exit_code)
    except KerckhoffsError as exc:
        return _fail(exc.cli_message)
    except typer.TyperException as exc:  # usage: a missing or unknown option, a bad value
        message = exc.format_message()
        if not message:  # no arguments at all: the help was shown
            return 0
        ctx = getattr(exc, "ctx", None)
        where = f" (see: {ctx.command_path} --help)" if ctx is not None else ""
        return _fail(message + where, getattr(exc, "exit_code", 2) or 2)
    except typer.Abort:
        return _fail("aborted", 1)
    except KeyboardInterrupt:
        return 130
    except OSError as exc:  # the disk filled, a file vanished, a permission was lost
        where = f"{exc.filename}: " if exc.filename else ""
        return _fail(f"{where}{exc.strerror or exc}")
    except MemoryError:  # the machine, not the input nor the code: say so, not "a bug"
        return _out_of_memory()
    except RuntimeError as exc:
        if "can't start new thread" in str(exc):  # no memory left for a thread's stack
            return _out_of_memory()
        return _internal_error(exc)
    except Exception as exc:  # a bug: say so in one line
        return _internal_error(exc)
    return rv if isinstance(rv, int) else 0


def _out_of_memory() -> int:
    return _fail(
        "out of memory: this machine could not hold the computation; run it where more "
        "memory is free, or on a smaller input",
        3,
    )


def _internal_error(exc: Exception) -> int:
    """A bug: say so in one line (the traceback with ``KERCKHOFFS_TRACEBACK=1``)."""
    if os.environ.get("KERCKHOFFS_TRACEBACK"):
        traceback.print_exc()
    return _fail(
        f"internal error ({type(exc).__name__}: {exc}); this is a bug in kerckhoffs, "
        "please report it (KERCKHOFFS_TRACEBACK=1 shows the traceback)",
        3,
    )


def _fail(message: str, code: int = 2) -> int:
    print(f"error: {one_line(message)}", file=sys.stderr)
    return code


def main() -> None:
    """Console entry point."""
    sys.exit(run(sys.argv[1:]))


if __name__ == "__main__":
    main()
