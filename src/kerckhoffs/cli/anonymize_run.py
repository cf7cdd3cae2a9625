"""What ``kerckhoffs anonymize`` does on the in-memory engine, without typer: the command's
typer signature (:mod:`kerckhoffs.cli.anonymize`) and its light form
(:mod:`kerckhoffs.cli.anonymize_light`, which starts without building the application) both
call :func:`in_memory` with the same :class:`Arguments`.

The pipelines are the library's: :func:`kerckhoffs.api.plan` checks the request before any
work, :func:`kerckhoffs.api.anonymize_table` runs it and :meth:`Release.write
<kerckhoffs.release.Release.write>` checks and writes; with ``--ledger``,
:func:`kerckhoffs.dp.publish.publish` computes, writes and charges the release as one
transaction. This module refuses flags that do not fit together, and prints.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kerckhoffs.cli import output
from kerckhoffs.cli.options import parse_options
from kerckhoffs.cli.output import counted, err, print_results, print_singletons, working
from kerckhoffs.data.output import check_writable_file, output_directory
from kerckhoffs.data.schema import Schema
from kerckhoffs.errors import InputError, KerckhoffsError

if TYPE_CHECKING:
    from kerckhoffs.api import Plan
    from kerckhoffs.data.table import Table
    from kerckhoffs.models import ModelResult, PrivacyModel
    from kerckhoffs.release import Release


@dataclass(frozen=True)
class Arguments:
    """The arguments of ``anonymize`` on the in-memory engine, as the command line gives
    them (defaults: the command's)."""

    data: Path
    schema: Path
    algorithm: str
    model: list[str]
    out_dir: Path
    seed: int | None = None
    scheme: str | None = None
    option: list[str] | None = None
    sep: str | None = None
    fmt: list[str] | None = None
    include_other: bool = False
    overwrite: bool = False
    provider_rows: Path | None = None
    ledger: Path | None = None
    budget: str | None = None
    over_budget: str | None = None
    ledger_neighbours: str | None = None
    ledger_id: str | None = None


def in_memory(a: Arguments) -> None:
    """``anonymize`` on the in-memory engine: check the request, run, check and write (or
    publish and charge the ledger), print what was published."""
    req = _request(a.data, a.schema, a.algorithm, a.model, a.seed, a.scheme, a.option, a.fmt)
    if a.provider_rows is not None:
        if _publishes_dp(req.plan, a.scheme):
            raise InputError(
                f"--provider-rows {a.provider_rows}: {req.plan.info.name} publishes a DP count "
                "table, which has no rows to list"
            )
        _check_provider_rows_file(a.provider_rows, a.out_dir, req.schema, a.overwrite, req.protect)
    _check_ledger_flags(a.ledger, a.budget, a.ledger_id, a.over_budget, a.ledger_neighbours)
    formats = tuple(a.fmt or ("csv", "parquet"))
    if a.ledger is not None:
        from kerckhoffs.dp.publish import publish

        with working(f"running {req.plan.info.name}, writing {a.out_dir} and charging {a.ledger}"):
            t0 = time.perf_counter()
            publication = publish(
                a.data, a.out_dir, a.ledger, schema=req.schema, algorithm=a.algorithm,
                models=req.models, budget=a.budget, over_budget=a.over_budget or "leave-out",
                person=a.ledger_id, neighbours=a.ledger_neighbours, options=req.options,
                formats=formats, overwrite=a.overwrite, sep=a.sep,
                include_other=a.include_other, protect=req.protect,
                on_table=lambda table: _read_notes(table, req, a.include_other),
            )  # fmt: skip
            elapsed = time.perf_counter() - t0
        release, results = publication.release, publication.results
        rows = release.table.n  # a DP release: its summary never prints the rows
    else:
        release, results, elapsed, rows = _anonymize_and_write(
            req, a.out_dir, a.sep, a.include_other, formats, a.overwrite, a.provider_rows
        )
    _print_outcome(req.plan.info.name, rows, release, results, elapsed, a.out_dir)
    if a.provider_rows is not None:
        output.out.print(
            f"wrote the provider of each published row to {a.provider_rows} (keep it private)",
        )
    if a.ledger is not None:
        entry = publication.entry
        if publication.created:
            err.print(f"note: {a.ledger} did not exist; a new ledger starts there")
        # no count of people: who was charged, and who was left out, is in the ledger only
        output.out.print(
            f"recorded epsilon={entry.epsilon:g}, delta={entry.delta:g} ({entry.neighbours} "
            f"neighbours) in ledger {a.ledger} before publishing (keep it private; `kerckhoffs "
            f"budget {a.ledger}` shows it)",
        )


@dataclass(frozen=True)
class _Request:
    """What ``anonymize`` was asked, checked before any work: the library's :class:`Plan
    <kerckhoffs.api.Plan>`, the models, the options read by their declared types, the
    schema, and the files no output may replace (the data, the schema and its hierarchies)."""

    data: Path
    plan: Plan
    models: list[PrivacyModel]
    options: dict[str, Any]
    schema: Schema
    protect: list[Path]


def _request(
    data: Path,
    schema: Path,
    algorithm: str,
    model: list[str],
    seed: int | None,
    scheme: str | None,
    option: list[str] | None,
    fmt: list[str] | None,
) -> _Request:
    """The request checked in the order the command has always refused things: algorithm,
    models, options, seed, scheme (:func:`kerckhoffs.api.plan`), formats, schema."""
    from kerckhoffs.algorithms.registry import get
    from kerckhoffs.api import plan
    from kerckhoffs.models import parse_model

    info = get(algorithm)
    models = [parse_model(m) for m in model]
    options = parse_options(option or [], info.option_specs)
    checked = plan(algorithm, seed=seed, scheme=scheme, options=options)
    bad_fmt = sorted(set(fmt or ()) - {"csv", "parquet"})
    if bad_fmt:
        raise InputError(f"--format {bad_fmt[0]!r}: choose csv and/or parquet")
    sch = Schema.from_toml(schema)
    return _Request(data, checked, models, options, sch, [data, schema, *schema_files(sch)])


def _publishes_dp(plan: Plan, scheme: str | None) -> bool:
    from kerckhoffs.release import Scheme

    return Scheme.DP in plan.info.schemes or scheme == Scheme.DP.value


def _read(data: Path, req: _Request, sep: str | None, include_other: bool) -> Table:
    """The table, read with a spinner, and its notes printed."""
    from kerckhoffs.data.table import Table

    with working(f"reading {data}"):
        table = Table.from_csv(data, req.schema, sep=sep, keep_other=include_other)
    _read_notes(table, req, include_other)
    return table


def _read_notes(table: Table, req: _Request, include_other: bool) -> None:
    """What the table's reading noted, what --include-other publishes, and what the seed
    means for this algorithm (the library's :class:`~kerckhoffs.api.Plan` says which)."""
    for note in table.notes:
        output.out.print(f"note: {note}")
    if include_other:
        names = list(table.other.columns) if table.other is not None else []
        output.out.print(
            "note: --include-other publishes "
            + (", ".join(names) if names else "no column (the data has none of role other)")
            + " unchanged, row by row: no model protects these columns"
        )
    name = req.plan.info.name
    if req.plan.seed_reproducible:
        err.print(
            f"warning: --seed makes {name}'s random choices reproducible; anyone "
            "who learns the seed can re-run it and undo them. Keep it secret (it is not "
            "written into the release).",
            soft_wrap=True,
        )
    elif req.plan.seed_ignored:
        err.print(f"note: {name} is deterministic; --seed has no effect", soft_wrap=True)


def _anonymize_and_write(
    req: _Request,
    out_dir: Path,
    sep: str | None,
    include_other: bool,
    formats: tuple[str, ...],
    overwrite: bool,
    provider_rows: Path | None,
) -> tuple[Release, list[ModelResult], float, int]:
    """Without a ledger: claim the output, read, run (:func:`kerckhoffs.api.anonymize_table`),
    check and write (:meth:`Release.write <kerckhoffs.release.Release.write>`), and the
    providers file beside it. Returns the release, its results, the seconds it ran and the
    rows of the input table."""
    from kerckhoffs import api
    from kerckhoffs.data.io import atomic_file
    from kerckhoffs.data.provider_rows import folder_integrity, write_provider_rows

    with output_directory(out_dir, kind="release", overwrite=overwrite, protect=req.protect):
        table = _read(req.data, req, sep, include_other)
        plan = req.plan
        with working(f"running {plan.info.name} on {table.n:,} rows"):
            t0 = time.perf_counter()
            # the independent check runs once, in write(), on the files about to be written
            release = api.anonymize_table(
                table, plan.info.name, req.models, seed=plan.seed, scheme=plan.scheme,
                options=req.options, verify=False,
            )  # fmt: skip
            elapsed = time.perf_counter() - t0
        with working(f"checking and writing {out_dir}"):
            results = release.write(
                out_dir, formats=formats, include_other=include_other, overwrite=overwrite
            )
        if provider_rows is not None:
            with atomic_file(provider_rows, private=True) as tmp:
                write_provider_rows(tmp, release.published_providers(), folder_integrity(out_dir))
    return release, results, elapsed, table.n


def _print_outcome(
    name: str,
    rows: int,
    release: Release,
    results: list[ModelResult],
    elapsed: float,
    out_dir: Path,
) -> None:
    """What was published: for a DP release only what release.json publishes (never the
    number of rows, private under add-remove neighbours, nor the time taken, which grows
    with it); for groups their sizes and the time; then the models' results."""
    import numpy as np

    from kerckhoffs.dp.accuracy import accuracy_line
    from kerckhoffs.release import Scheme

    sizes = release.partition.sizes
    noise = getattr(release, "noise", None)
    if release.scheme == Scheme.SYNTHETIC and noise is not None:  # the synthetic rows only
        output.out.print(
            f"{name}: {counted(release.table.n, 'synthetic row')} fitted to "
            f"{len(noise.parts)} noisy marginals (DP under {noise.neighbours.value} neighbours)"
        )
    elif release.scheme == Scheme.DP and noise is not None:
        how = (
            f"randomized response, each answer kept with probability {1 - float(noise.scale):.4g}"
            if noise.mechanism.value == "randomized-response"
            else f"{noise.mechanism.value} noise, scale {noise.scale:g}, sensitivity "
            f"{noise.sensitivity}"
        )
        output.out.print(
            f"{name}: {counted(release.table.n, 'cell')} of noisy counts ({how}; DP under "
            f"{noise.neighbours.value} neighbours)",
        )
        output.out.print(accuracy_line(noise.estimator, noise.accuracy))
        from kerckhoffs.dp.select import selection_line

        chosen = selection_line(noise.parts, noise.epsilon)
        for line in ([chosen] if chosen else []) + list(release.notes):
            output.out.print(line)
    else:
        output.out.print(
            f"{name}: {counted(rows, 'row')} -> "
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
    output.out.print(
        f"wrote {release.scheme.value} release to {out_dir} (independent check passed)"
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
