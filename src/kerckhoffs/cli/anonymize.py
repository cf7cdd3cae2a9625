"""``kerckhoffs anonymize``: anonymize a table and write the release, fail closed.

This module is the command's typer signature (its options and help) and the Dask engine's
branch; what it does on the in-memory engine is :func:`kerckhoffs.cli.anonymize_run.in_memory`,
which :mod:`kerckhoffs.cli.anonymize_light` also calls for the command's plain form.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kerckhoffs.cli.anonymize_run import Arguments, in_memory, schema_files
from kerckhoffs.cli.dask import EngineOption, SchedulerOption, WorkerMemoryOption, WorkersOption
from kerckhoffs.cli.output import MODEL_HELP
from kerckhoffs.data.schema import Schema

# the options of anonymize that need more than a line to explain
SeedOption = Annotated[
    int | None,
    typer.Option(
        help="For tests and experiments only: seed the random choices of a randomized "
        "algorithm (default: fresh randomness from the operating system on every run). "
        "Anyone who learns the seed can undo the randomness, so it is never written into "
        "the release; keep it secret.",
    ),
]
ProviderRowsOption = Annotated[
    Path | None,
    typer.Option(
        "--provider-rows",
        help="Also write, outside the release, which data provider each published row "
        "came from (CSV row,provider; for `check DIR --model m-privacy=M --providers "
        "FILE`). Keep it private: the release never holds it.",
    ),
]
LedgerOption = Annotated[
    Path | None,
    typer.Option(
        "--ledger",
        help="A DP release only: record it (epsilon, delta, who is in it: the identifier "
        "column) in this privacy ledger, created if missing in an existing folder (see "
        "`kerckhoffs budget`). "
        "Keep it private: it names people.",
    ),
]
BudgetOption = Annotated[
    str | None,
    typer.Option(
        "--budget",
        help="With --ledger: a per-person budget EPSILON or EPSILON,DELTA (basic "
        "composition across the ledger); see --over-budget for who would exceed it.",
    ),
]
OverBudgetOption = Annotated[
    str | None,
    typer.Option(
        "--over-budget",
        help="With --budget: leave-out (default: people this release would take over "
        "budget are left out of its computation and charged nothing; nothing printed or "
        "published says who or how many) | refuse (refuse the whole release, which tells "
        "whoever sees the refusal that such a person is in the data).",
    ),
]
LedgerNeighboursOption = Annotated[
    str | None,
    typer.Option(
        "--ledger-neighbours",
        help="With --ledger: the neighbour notion of a new ledger's budget, substitution "
        "(default) or add-remove; an existing ledger keeps its own.",
    ),
]
LedgerIdOption = Annotated[
    str | None,
    typer.Option(
        "--ledger-id",
        help="With --ledger: the identifier column naming the people (default: the "
        "schema's only column of role identifier).",
    ),
]


def anonymize(
    data: Annotated[Path, typer.Argument(help="Data file (CSV/Parquet).")],
    schema: Annotated[Path, typer.Option("--schema", "-s", help="Schema TOML.")],
    algorithm: Annotated[
        str, typer.Option("--algorithm", "-a", help="Algorithm name (see `kerckhoffs algorithms`).")
    ],
    model: Annotated[list[str], typer.Option("--model", "-m", help=MODEL_HELP)],
    out_dir: Annotated[Path, typer.Option("--out", "-o", help="Release directory to write.")],
    seed: SeedOption = None,
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
    provider_rows: ProviderRowsOption = None,
    ledger: LedgerOption = None,
    budget: BudgetOption = None,
    over_budget: OverBudgetOption = None,
    ledger_neighbours: LedgerNeighboursOption = None,
    ledger_id: LedgerIdOption = None,
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
    from kerckhoffs.cli.dask import check_engine, memory_engine_only

    check_engine(engine)
    if engine == "dask":
        _on_dask(
            data, schema, algorithm, model, out_dir, option or [], overwrite, scheduler,
            workers, worker_memory,
            [
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
            ],
        )  # fmt: skip
        return
    memory_engine_only(scheduler, workers, worker_memory)
    in_memory(
        Arguments(
            data, schema, algorithm, model, out_dir, seed, scheme, option, sep, fmt,
            include_other, overwrite, provider_rows, ledger, budget, over_budget,
            ledger_neighbours, ledger_id,
        )
    )  # fmt: skip


def _on_dask(
    data: Path,
    schema: Path,
    algorithm: str,
    model: list[str],
    out_dir: Path,
    option: list[str],
    overwrite: bool,
    scheduler: str | None,
    workers: int | None,
    worker_memory: str | None,
    flags: list[tuple[str, object]],
) -> None:
    """``--engine dask``: refuse the flags it does not take, then run on the workers."""
    from kerckhoffs.cli.dask import anonymize_dask, refuse

    for flag, given in flags:
        refuse(flag, given)
    protect = [schema, *schema_files(Schema.from_toml(schema))]
    anonymize_dask(
        data, schema, algorithm, model, out_dir, option, overwrite, scheduler, workers,
        worker_memory, protect,
    )  # fmt: skip


def register(app: typer.Typer) -> None:
    app.command()(anonymize)
