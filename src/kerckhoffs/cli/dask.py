"""``kerckhoffs anonymize --engine dask`` and ``kerckhoffs check --engine dask``: the same
commands on Dask workers (:mod:`kerckhoffs.engines`), for tables that outgrow one machine's
memory. The CLI parses and prints; the engines decide."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from kerckhoffs.cli.output import out, print_results, progress_bar
from kerckhoffs.data.schema import Schema
from kerckhoffs.errors import InputError

ENGINES = ("memory", "dask")

# the Dask options of anonymize and check
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


def check_engine(engine: str) -> None:
    if engine not in ENGINES:
        raise InputError(f"--engine {engine!r}: choose {' or '.join(ENGINES)}")


def memory_engine_only(scheduler: str | None, workers: int | None, memory: str | None) -> None:
    """One line for a Dask option given without ``--engine dask``."""
    for flag, given in (("--scheduler", scheduler), ("--workers", workers),
                        ("--worker-memory", memory)):  # fmt: skip
        if given is not None:
            raise InputError(f"{flag}: only with --engine dask")


def refuse(flag: str, given: object) -> None:
    """One line for an option the Dask engine does not take."""
    if given:
        raise InputError(f"{flag}: not available with --engine dask")


def anonymize_dask(
    data: Path,
    schema_path: Path,
    algorithm: str,
    models_text: list[str],
    out_dir: Path,
    options_text: list[str],
    overwrite: bool,
    scheduler: str | None,
    workers: int | None,
    worker_memory: str | None,
    protect: list[Path],
) -> None:
    """Mondrian or Mondrian+ on Dask, or paper 003's m-privacy anonymizers with one site per
    provider (:mod:`kerckhoffs.engines.dask_providers`), checked on the written parts before
    ``release.json`` is sealed (:func:`kerckhoffs.engines.dask_release.write_dask_release`).
    ``protect``: the schema and its files, which ``--out`` may not touch (the input files are
    added here)."""
    from kerckhoffs.cli.options import parse_options
    from kerckhoffs.engines.dask_cluster import connect, parquet_files
    from kerckhoffs.engines.dask_run import ALGORITHMS, check_request, run_dask
    from kerckhoffs.engines.dask_table import encode_dask, parquet_parts
    from kerckhoffs.models import parse_model
    from kerckhoffs.models.scope import with_scope

    if algorithm not in ALGORITHMS:
        raise InputError(f"--algorithm {algorithm}: the Dask engine runs {', '.join(ALGORITHMS)}")
    models = [parse_model(m) for m in models_text]
    options = parse_options(options_text)
    check_request(algorithm, models, options)  # before a cluster is started
    files = parquet_files(data)
    sch = Schema.from_toml(schema_path)
    parquet_parts(files, sch)  # the files' footers: bad input refused before a cluster starts
    protect = [*files, *protect]
    with connect(scheduler, workers=workers, memory=worker_memory) as client:
        out.print(f"reading {len(files)} Parquet file(s) on {_workers(client)} worker(s)")
        dt = encode_dask(files, sch, client)
        for note in dt.notes:
            out.print(f"note: {note}")
        with progress_bar(transient=True) as progress:
            task = progress.add_task(f"{algorithm}, level 0", total=None)

            def level(depth: int, open_groups: int) -> None:
                progress.update(
                    task, description=f"{algorithm}, level {depth}: {open_groups:,} open group(s)"
                )

            # checked once, from the written files (write_dask_release), not twice
            release = run_dask(dt, algorithm, models, options, progress=level, verify=False)
        out.print(f"{dt.n:,} rows in {release.n_groups:,} groups ({'; '.join(release.notes)})")
        results = release.write(out_dir, overwrite=overwrite, protect=protect)
    print_results(with_scope(results, models, dt))
    out.print(f"wrote {out_dir}")


def check_dask_cli(
    data: Path,
    schema_path: Path | None,
    models_text: list[str],
    scheduler: str | None,
    workers: int | None,
    worker_memory: str | None,
) -> bool:
    """Check a table as it stands on Dask (each distinct QI vector a group), or a release
    directory from its files; True when every model holds."""
    from kerckhoffs.engines.dask_check import check_dask
    from kerckhoffs.engines.dask_cluster import connect, parquet_files
    from kerckhoffs.engines.dask_table import encode_dask, parquet_parts
    from kerckhoffs.models import parse_model
    from kerckhoffs.models.scope import with_scope

    if (Path(data) / "release.json").is_file():
        return _check_release(data, schema_path, models_text, scheduler, workers, worker_memory)
    if schema_path is None:
        raise InputError("checking data files needs --schema SCHEMA.toml")
    models = [parse_model(m) for m in models_text]
    files = parquet_files(data)
    sch = Schema.from_toml(schema_path)
    parquet_parts(files, sch)  # the files' footers: bad input refused before a cluster starts
    with connect(scheduler, workers=workers, memory=worker_memory) as client:
        dt = encode_dask(files, sch, client)
        result = check_dask(dt, models)
    for note in dt.notes:
        out.print(f"note: {note}")
    out.print(
        f"{data} as it stands (each distinct QI combination is a group): {dt.n:,} rows, "
        f"{result.n_groups:,} groups, QIs {', '.join(dt.qi_names)}; SA {dt.sa_name}"
    )
    print_results(with_scope(result.results, models, dt))
    return all(r.satisfied for r in result.results)


def _check_release(
    folder: Path,
    schema_path: Path | None,
    models_text: list[str],
    scheduler: str | None,
    workers: int | None,
    worker_memory: str | None,
) -> bool:
    """A release in parts checked on the workers (:func:`~kerckhoffs.engines.dask_release.
    check_dask_release`)."""
    from kerckhoffs.engines.dask_cluster import connect
    from kerckhoffs.engines.dask_release import check_dask_release
    from kerckhoffs.models import parse_model

    if schema_path is not None:
        raise InputError("--schema: a release says what its columns are; leave it out")
    models = [parse_model(m) for m in models_text]
    with connect(scheduler, workers=workers, memory=worker_memory) as client:
        found = check_dask_release(folder, models or None, client)
    for note in found.notes:
        out.print(f"note: {note}")
    out.print(
        f"release {folder} ({found.algorithm}, generalization, checked on Dask): "
        f"{found.rows:,} rows, {found.groups:,} groups"
    )
    print_results(found.results)
    return all(r.satisfied for r in found.results)


def _workers(client: Any) -> int:
    return len(client.scheduler_info().get("workers", {}))
