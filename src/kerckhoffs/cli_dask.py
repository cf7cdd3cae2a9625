"""``kerckhoffs anonymize --engine dask`` and ``kerckhoffs check --engine dask``: the same
commands on Dask workers (:mod:`kerckhoffs.engines`), for tables that outgrow one machine's
memory. The CLI parses and prints; the engines decide."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kerckhoffs.cli_output import out, print_results, progress_bar
from kerckhoffs.data.schema import Schema
from kerckhoffs.errors import InputError

DASK_ALGORITHMS = ("mondrian", "mondrian+", "provider-aware", "mondrian-mprivacy")
ENGINES = ("memory", "dask")


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
    from kerckhoffs.cli_options import parse_options
    from kerckhoffs.engines.dask_cluster import connect, parquet_files
    from kerckhoffs.engines.dask_mondrian import mondrian_dask
    from kerckhoffs.engines.dask_release import write_dask_release
    from kerckhoffs.engines.dask_table import encode_dask
    from kerckhoffs.models import combine_m_privacy, parse_model
    from kerckhoffs.release import Provenance

    if algorithm not in DASK_ALGORITHMS:
        raise InputError(
            f"--algorithm {algorithm}: the Dask engine runs {', '.join(DASK_ALGORITHMS)}"
        )
    models = [parse_model(m) for m in models_text]
    options = parse_options(options_text)
    by_providers = algorithm not in ("mondrian", "mondrian+")
    if by_providers:
        from kerckhoffs.algorithms import get

        get(algorithm).check_options(options)
        models = combine_m_privacy(models)
    else:
        unknown = sorted(set(options) - {"median", "cuts"})
        if unknown:
            raise InputError(f"-O {unknown[0]}: {algorithm} on Dask takes median and cuts")
    median, cuts = str(options.get("median", "lower")), str(options.get("cuts", "strict"))
    files = parquet_files(data)
    sch = Schema.from_toml(schema_path)
    protect = [*files, *protect]
    with connect(scheduler, workers=workers, memory=worker_memory) as client:
        import dask.dataframe as dd

        out.print(f"reading {len(files)} Parquet file(s) on {_workers(client)} worker(s)")
        dt = encode_dask(dd.read_parquet([str(f) for f in files]), sch, client)
        for note in dt.notes:
            out.print(f"note: {note}")
        if by_providers:
            groups = _by_providers(dt, models, algorithm, options)
        else:
            with progress_bar(transient=True) as progress:
                task = progress.add_task("Mondrian, level 0", total=None)

                def level(depth: int, open_groups: int) -> None:
                    progress.update(
                        task, description=f"Mondrian, level {depth}: {open_groups:,} open group(s)"
                    )

                groups = mondrian_dask(
                    dt, models, plus=algorithm == "mondrian+", median=median, cuts=cuts,
                    progress=level,
                )  # fmt: skip
            out.print(
                f"{dt.n:,} rows in {groups.n_groups:,} groups "
                f"({groups.levels} levels on the partitions)"
            )
        results = write_dask_release(
            dt, groups, models, out_dir, Provenance(algorithm, groups.params),
            overwrite=overwrite, protect=protect,
        )  # fmt: skip
    print_results(results)
    out.print(f"wrote {out_dir}")


def _by_providers(dt: Any, models: list[Any], algorithm: str, options: dict[str, Any]) -> Any:
    """Paper 003's coordinator over one site per provider; prints what crossed."""
    from kerckhoffs.engines.dask_providers import mprivacy_dask

    with progress_bar(transient=True) as progress:
        progress.add_task(f"{algorithm}: the coordinator asks the providers", total=None)
        groups, providers = mprivacy_dask(dt, models, algorithm, **options)
    counted = [r for r in providers.replies if r.kind != "generalize_and_submit"]
    queries = len(counted) // max(providers.n_providers, 1)
    out.print(
        f"{dt.n:,} rows in {groups.n_groups:,} groups ({groups.levels} levels); "
        f"{providers.n_providers} providers on {len(set(providers.workers))} worker(s) answered "
        f"{queries:,} count queries ({sum(r.bytes for r in counted) / 1e3:,.1f} KB of counts, "
        "no record), then submitted their generalized records"
    )
    return groups


def check_dask_cli(
    data: Path,
    schema_path: Path | None,
    models_text: list[str],
    scheduler: str | None,
    workers: int | None,
    worker_memory: str | None,
) -> bool:
    """Check a table as it stands on Dask (each distinct QI vector a group); True when every
    model holds."""
    from kerckhoffs.engines.dask_check import check_dask
    from kerckhoffs.engines.dask_cluster import connect, parquet_files
    from kerckhoffs.engines.dask_table import encode_dask
    from kerckhoffs.models import parse_model

    if (Path(data) / "release.json").is_file():
        raise InputError(
            f"{data} is a release: check it without --engine dask (its parts are read in memory)"
        )
    if schema_path is None:
        raise InputError("checking data files needs --schema SCHEMA.toml")
    models = [parse_model(m) for m in models_text]
    files = parquet_files(data)
    sch = Schema.from_toml(schema_path)
    with connect(scheduler, workers=workers, memory=worker_memory) as client:
        import dask.dataframe as dd

        dt = encode_dask(dd.read_parquet([str(f) for f in files]), sch, client)
        result = check_dask(dt, models)
    out.print(
        f"{data} as it stands (each distinct QI combination is a group): {dt.n:,} rows, "
        f"{result.n_groups:,} groups, QIs {', '.join(dt.qi_names)}; SA {dt.sa_name}"
    )
    print_results(result.results)
    return all(r.satisfied for r in result.results)


def _workers(client: Any) -> int:
    return len(client.scheduler_info().get("workers", {}))
