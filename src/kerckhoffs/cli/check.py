"""``kerckhoffs check``: privacy models on a table as it stands or on a published release.

What is checked is built by the library (:func:`kerckhoffs.pipelines.check.as_release`) and
checked by it (:func:`kerckhoffs.check`); this module parses the options and prints.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kerckhoffs.cli import output
from kerckhoffs.cli.check_light import headline, print_risk
from kerckhoffs.cli.dask import EngineOption, SchedulerOption, WorkerMemoryOption, WorkersOption
from kerckhoffs.cli.output import (
    MODEL_HELP,
    counted,
    err,
    print_results,
    print_singletons,
    value,
)
from kerckhoffs.data.schema import Schema
from kerckhoffs.errors import InputError

if TYPE_CHECKING:
    from kerckhoffs.models import ModelResult
    from kerckhoffs.release import Release


PopulationOpt = Annotated[
    Path | None,
    typer.Option(
        "--population",
        help="A CSV of a population holding every released person among others (their "
        "original QI values): adds the journalist re-identification risk. Needs --schema.",
    ),
]
RiskThresholdOpt = Annotated[
    float,
    typer.Option(
        "--risk-threshold",
        help="A record is at risk when its re-identification risk is above this.",
        min=0.0,
        max=1.0,
    ),
]


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
    population: PopulationOpt = None,
    risk_threshold: RiskThresholdOpt = 0.2,
    engine: EngineOption = "memory",
    scheduler: SchedulerOption = None,
    workers: WorkersOption = None,
    worker_memory: WorkerMemoryOption = None,
) -> None:
    """Check privacy models on a table as it stands or on a published release.

    A data file is checked as published unchanged: rows with the same QI values form a group.
    Prints each model's achieved value and the worst groups; exits 1 if a model is violated.
    """
    from kerckhoffs.cli.dask import check_engine, memory_engine_only

    check_engine(engine)
    if engine == "dask":
        from kerckhoffs.cli.dask import check_dask_cli, refuse

        flags: list[tuple[str, object]] = [
            ("--published", published),
            ("--no-verify", no_verify),
            ("--providers", providers),
            ("--sep", sep),
            ("--population", population),
        ]
        for flag, given in flags:
            refuse(flag, given)
        if not check_dask_cli(data, schema, model, scheduler, workers, worker_memory):
            raise typer.Exit(1)
        return
    memory_engine_only(scheduler, workers, worker_memory)
    from kerckhoffs.models import parse_model
    from kerckhoffs.pipelines.check import as_release
    from kerckhoffs.pipelines.check import check as check_models
    from kerckhoffs.release import Scheme

    models = [parse_model(m) for m in model]
    if providers is not None and not data.is_dir():
        raise InputError(
            f"--providers {providers}: only for a release directory (a data file gives its "
            "providers in a column of role 'provider')"
        )
    if not data.is_dir() and schema is None:
        what = "a published table" if published else "a data file"
        raise InputError(f"checking {what} needs --schema SCHEMA.toml")
    if population is not None and schema is None:
        raise InputError(
            f"--population {population}: needs --schema (its kinds and hierarchies say which "
            "population values each published cell covers)"
        )
    sch = Schema.from_toml(schema) if schema else None
    release = as_release(
        data, schema=sch, providers=providers, published=published, verify=not no_verify, sep=sep
    )
    what = _what(data, release, published)
    results = check_models(release, models=models).results
    if release.scheme == Scheme.DP:
        output.out.print(
            f"{what}: {counted(release.table.n, 'cell')} of noisy counts, "
            f"QIs {', '.join(release.table.qi_names)}; SA {release.table.sa_name}"
        )
    else:
        table, n_groups = release.table, release.partition.n_groups
        output.out.print(headline(what, table.n, n_groups, table.qi_names, table.sa_name))
    if release.scheme == Scheme.DP and (noise := getattr(release, "noise", None)) is not None:
        from kerckhoffs.dp.accuracy import accuracy_line

        output.out.print(accuracy_line(noise.estimator, noise.accuracy))
    print_results(results)
    if release.scheme not in (Scheme.DP, Scheme.SYNTHETIC):
        _print_risk(release, population, risk_threshold, sch)
    elif population is not None:
        err.print("note: --population: re-identification risk is not defined on a DP release")
    print_singletons(release, as_it_stands=not data.is_dir() and not published)
    for r in results:
        if not r.satisfied and worst > 0 and release.scheme != Scheme.DP:
            _print_worst(release, r, worst)
    if not all(r.satisfied for r in results):
        raise typer.Exit(1)


def _what(data: Path, release: Release, published: bool) -> str:
    """What is checked, for the headline (its notes printed first)."""
    if data.is_dir():
        for note in release.notes:
            err.print(f"note: {note}", soft_wrap=True)
        return f"release {data} ({release.provenance.algorithm}, {release.scheme.value})"
    if published:
        return f"published table {data}"
    for note in release.table.notes:
        output.out.print(f"note: {note}")
    return f"{data} as it stands (each distinct QI combination is a group)"


def _print_risk(
    release: Release, population: Path | None, threshold: float, schema: Schema | None
) -> None:
    """The prosecutor, marketer and (with a population) journalist risks, as
    :func:`kerckhoffs.metrics.reidentification.reidentification_risk` computes them."""
    from kerckhoffs.attacks.knowledge import Knowledge
    from kerckhoffs.metrics.reidentification import reidentification_risk

    people = None
    if population is not None:
        people = Knowledge.from_path(population).population
    print_risk(reidentification_risk(release, people, threshold=threshold, schema=schema))


def _print_worst(release: Release, r: ModelResult, n: int) -> None:
    """One line per worst group: its QI cells, size, measure and most frequent SA values."""
    import numpy as np

    from kerckhoffs.models.base import format_number

    table = release.table
    hist = release.histogram()
    ids = r.worst_groups(n)
    lo, hi = release.group_bounds()
    output.out.print(f"worst groups for {r.model} (measure = the model's per-group value):")
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
        output.out.print(
            f"  group {g}: {int(hist.sizes[g])} row(s), measure {format_number(r.group_values[g])}"
            f" | {cells} | {value(table.sa_name)}: {sa}",
            soft_wrap=True,
        )


def register(app: typer.Typer) -> None:
    app.command()(check)
