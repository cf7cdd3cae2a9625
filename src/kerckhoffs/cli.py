"""The ``kerckhoffs`` command line.

Every problem with the input (missing file, wrong delimiter, a value missing from a
hierarchy, impossible parameters) is one line on stderr starting with ``error:`` and exit
code 2, with no output file left behind. ``check`` exits 1 when a model is violated, so it can
gate a pipeline.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
import traceback
import weakref
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from kerckhoffs import __version__, api
from kerckhoffs.cli_output import MODEL_HELP, err, fit_words, one_line, out
from kerckhoffs.cli_output import table as rich_table
from kerckhoffs.data.io import atomic_file
from kerckhoffs.data.output import check_writable_file, output_directory
from kerckhoffs.data.schema import Schema
from kerckhoffs.data.table import Table
from kerckhoffs.errors import ArgumentError, InputError, KerckhoffsError, PrivacyCheckFailed
from kerckhoffs.models import ModelResult, PrivacyModel, parse_model
from kerckhoffs.models.base import format_number
from kerckhoffs.randomness import check_seed
from kerckhoffs.release import Partition, Provenance, Release, Scheme

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


@contextlib.contextmanager
def _working(description: str) -> Iterator[None]:
    """A spinner with the elapsed time while a step runs (cleared when it ends)."""
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=out,
        transient=True,
    ) as progress:
        progress.add_task(description, total=None)
        yield


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
) -> None:
    """Check privacy models on a table as it stands or on a published release.

    A data file is checked as published unchanged: rows with the same QI values form a group.
    Prints each model's achieved value and the worst groups; exits 1 if a model is violated.
    """
    models = [parse_model(m) for m in model]
    if data.is_dir():
        release = Release.from_published(
            data, Schema.from_toml(schema) if schema else None, verify=not no_verify
        )
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
        f"{what}: {release.table.n:,} rows, {release.partition.n_groups:,} groups, "
        f"QIs {', '.join(release.table.qi_names)}; SA {release.table.sa_name}"
    )
    _print_results(results)
    for r in results:
        if not r.satisfied and worst > 0:
            _print_worst(release, r, worst)
    if not all(r.satisfied for r in results):
        raise typer.Exit(1)


def _print_results(results: list[ModelResult]) -> None:
    t = rich_table("model", "required", "achieved", "violating groups", "verdict")
    for r in results:
        t.add_row(
            r.model,
            r.parameter,
            format_number(r.achieved) + (f" ({r.detail})" if r.detail else ""),
            f"{r.violating:,} of {r.group_ok.size:,}",
            "[green]ok[/]" if r.satisfied else "[red]violated[/]",
        )
    out.print(fit_words(t, out.width))


def _print_worst(release: Release, r: ModelResult, n: int) -> None:
    """One line per worst group: its QI cells, size, measure and most frequent SA values."""
    table = release.table
    hist = release.histogram()
    ids = r.worst_groups(n)
    lo, hi = release.group_bounds()
    out.print(f"worst groups for {r.model} (measure = the model's per-group value):")
    for g in ids:
        cells = ", ".join(
            f"{col.name}={col.generalize(lo[g : g + 1, j], hi[g : g + 1, j])[0]}"
            for j, col in enumerate(table.qi_columns)
        )
        counts = hist.counts[g]
        top = np.argsort(-counts, kind="stable")[:3]
        sa = ", ".join(f"{table.sa_column.labels[s]}×{counts[s]}" for s in top if counts[s] > 0)
        out.print(
            f"  group {g}: {int(hist.sizes[g])} row(s), measure {format_number(r.group_values[g])}"
            f" | {cells} | {table.sa_name}: {sa}",
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
) -> None:
    """Anonymize a table and write the release (only if every --model passes).

    The models are checked again, independently of the algorithm, on the files about to be
    written; if one fails nothing is written (fail closed).
    """
    from kerckhoffs.algorithms import get

    info = get(algorithm)
    models = [parse_model(m) for m in model]
    options = _parse_options(option or [])
    info.check_options(options)
    if seed is not None:
        check_seed(seed)
    if scheme is not None and scheme not in [s.value for s in info.schemes]:
        allowed = ", ".join(s.value for s in info.schemes)
        raise InputError(f"{info.name} publishes by {allowed}, not {scheme!r}")
    bad_fmt = sorted(set(fmt or ()) - {"csv", "parquet"})
    if bad_fmt:
        raise InputError(f"--format {bad_fmt[0]!r}: choose csv and/or parquet")
    sch = Schema.from_toml(schema)
    protect = [data, schema, *schema_files(sch)]
    with output_directory(out_dir, kind="release", overwrite=overwrite, protect=protect):
        with _working(f"reading {data}"):
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
        with _working(f"running {info.name} on {table.n:,} rows"):
            t0 = time.perf_counter()
            # the independent check runs once, in write(), on the files about to be written
            release = api.anonymize_table(
                table, algorithm, models, seed=seed, scheme=scheme, options=options, verify=False
            )
            elapsed = time.perf_counter() - t0
        with _working(f"checking and writing {out_dir}"):
            results = release.write(
                out_dir,
                formats=tuple(fmt or ("csv", "parquet")),
                include_other=include_other,
                overwrite=overwrite,
            )
    sizes = release.partition.sizes
    out.print(
        f"{info.name}: {table.n:,} rows -> {release.partition.n_groups:,} groups "
        f"(size min {sizes.min()}, median {int(np.median(sizes))}, max {sizes.max()}, "
        f"mean {sizes.mean():.1f}) in {elapsed:.2f} s"
        + (
            f"; {int(release.perturbed.sum()):,} SA values perturbed"
            if release.perturbed.any()
            else ""
        )
    )
    _print_results(results)
    out.print(
        f"wrote {release.scheme.value} release to {out_dir} (independent check passed)",
        soft_wrap=True,
    )


def schema_files(schema: Schema) -> list[Path]:
    """The hierarchy files a schema reads (inputs no output may replace)."""
    files = []
    for c in schema.columns:
        if isinstance(c.hierarchy, str | Path):
            h = Path(c.hierarchy)
            files.append(h if h.is_absolute() or schema.base_dir is None else schema.base_dir / h)
    return files


def _parse_options(items: list[str]) -> dict[str, object]:
    """KEY=VALUE pairs with numbers and booleans converted."""
    opts: dict[str, object] = {}
    for item in items:
        key, sep_, raw = item.partition("=")
        if not sep_ or not key:
            raise InputError(f"--option {item!r}: expected KEY=VALUE")
        value: object = raw
        if raw.lower() in {"true", "false"}:
            value = raw.lower() == "true"
        else:
            for conv in (int, float):
                try:
                    value = conv(raw)
                    break
                except ValueError:
                    continue
        opts[key.replace("-", "_")] = value
    return opts


@app.command()
def algorithms() -> None:
    """List the anonymization algorithms, the models each enforces and how each publishes."""
    from kerckhoffs.algorithms import REGISTRY  # importing the package registers them all
    from kerckhoffs.models.parse import SYNTAX

    t = rich_table("name", "enforces", "publishes", "random", "summary")
    for name in sorted(REGISTRY):
        a = REGISTRY[name]
        t.add_row(
            name,
            ", ".join(SYNTAX.get(m, m) for m in a.models),
            ", ".join(s.value for s in a.schemes),
            "yes" if a.randomized else "no",
            a.summary,
        )
    out.print(fit_words(t, out.width))


# -- demo --------------------------------------------------------------------------------------
@app.command()
def demo(
    rows: Annotated[int, typer.Option(help="Rows of generated hospital data.")] = 2000,
    seed: Annotated[int, typer.Option(help="Seed of the generator.")] = 0,
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="Where to write the demo release (default: temp).")
    ] = None,
) -> None:
    """Show what kerckhoffs does, on generated hospital data (no download needed)."""
    from kerckhoffs.datasets import generate_hospital, hospital_schema

    df = generate_hospital(rows, seed)
    schema = hospital_schema()
    table = Table.encode(df, schema)
    out.rule("[bold]kerckhoffs demo[/]: a generated hospital table")
    out.print(
        f"{table.n:,} patients; identifiers dropped: patient_id; quasi-identifiers: "
        f"{', '.join(f'{c.name} ({c.kind.value}, {c.size} values)' for c in table.qi_columns)}; "
        f"sensitive: disease ({table.n_sa} values)"
    )
    out.print(df.head(5).to_string(index=False))
    models: list[PrivacyModel] = [parse_model("k=5"), parse_model("l=3")]

    out.rule("1. the table as it stands")
    raw = Release(table, Partition.by_qi(table), provenance=Provenance("none"))
    _print_results(raw.check(models))

    levels_tried = [
        {"age": 1, "zip": 1},
        {"age": 2, "zip": 2, "nationality": 1},
        {"age": 3, "zip": 3, "nationality": 2},
    ]
    out.rule("2. full-domain generalization at fixed levels, checked before writing")
    with contextlib.ExitStack() as stack:
        if out_dir is None:  # a temporary folder, removed when the demo ends
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="kerckhoffs-demo-"))
            target = Path(tmp) / "release"
        else:
            target = out_dir
            stack.enter_context(output_directory(target, kind="release"))
        _demo_release(table, models, levels_tried, target, keep=out_dir is not None)
    _demo_anonymizers(table, seed)


def _demo_release(
    table: Table,
    models: list[PrivacyModel],
    levels_tried: list[dict[str, int]],
    target: Path,
    keep: bool,
) -> None:
    """Sections 2-3 of the demo: the first fixed-level cut that passes, written and read
    back."""
    written = None
    for levels in levels_tried:
        release = Release(
            table,
            Partition.by_levels(table, levels),
            provenance=Provenance("fixed-levels", {"levels": levels}),
        )
        label = ", ".join(f"{k} level {v}" for k, v in levels.items())
        try:
            release.write(target, models, overwrite=True)
        except PrivacyCheckFailed as exc:
            out.print(f"[yellow]{label}[/]: {release.partition.n_groups} groups — {exc}")
            continue
        out.print(f"[green]{label}[/]: {release.partition.n_groups} groups — passes; written")
        written = release
        break
    if written is None:
        out.print("no level combination passed; nothing written (fail closed)")
        return
    out.print(written.frames()["release"].head(5).to_string(index=False))
    out.print(f"query error of this release: {_query_error_text(written)}")
    out.rule("3. read the release back from its files and check it independently")
    back = Release.from_published(target)
    _print_results(back.check(models))
    files = ", ".join(sorted(p.name for p in target.iterdir()))
    where = (
        f"in {target}"
        if keep
        else "(in a temporary folder, removed at the end; --out DIR keeps them)"
    )
    out.print(f"release files: {files} {where}")


def _demo_anonymizers(table: Table, seed: int) -> None:
    """Section 4 of the demo: the registered classic anonymizers side by side at l = 3."""
    from kerckhoffs.algorithms import REGISTRY
    from kerckhoffs.models import KAnonymity, LDiversity

    names = [n for n in ("mondrian", "anatomy", "hilb") if n in REGISTRY]
    if not names:
        return
    out.rule("4. the classic anonymizers side by side (l = 3, frequency l-diversity)")
    t = rich_table(
        "algorithm", "groups", "mean size", "min-max", "k", "l", "NCP", "query error", "seconds"
    )
    for name in names:
        info = REGISTRY[name]
        t0 = time.perf_counter()
        release = info.run(table, [LDiversity(3)], seed=seed)
        elapsed = time.perf_counter() - t0
        sizes = release.partition.sizes
        k, l_div = release.check([KAnonymity(1), LDiversity(1)])
        t.add_row(
            name + (" *" if release.scheme == Scheme.BUCKETIZATION else ""),
            f"{release.partition.n_groups:,}",
            f"{sizes.mean():.1f}",
            f"{sizes.min()}-{sizes.max()}",
            format_number(k.achieved),
            format_number(l_div.achieved),
            _ncp_text(release),
            _query_error_text(release),
            f"{elapsed:.3f}",
        )
    out.print(fit_words(t, out.width))
    out.print(
        "NCP: normalized certainty penalty of the published QI cells (0 = exact, 1 = all "
        "suppressed). Query error: mean relative error of 2,000 random COUNT queries (3 QI "
        "ranges and an SA range, 5% selectivity; paper 000 section 8.1.3). * publishes by "
        "bucketization: exact QIs, with the QI-SA link hidden in each group's SA table."
    )
    _demo_information_flow(table, seed)


def _demo_information_flow(table: Table, seed: int) -> None:
    """Section 5: an original algorithm fails the information-flow audit, its ++ variant
    passes (paper 000: every SA statistic read must be computable from the release)."""
    from kerckhoffs.algorithms import REGISTRY
    from kerckhoffs.algorithms.sa_reads import SAReadLog
    from kerckhoffs.models import LDiversity

    pairs = [
        (a, b)
        for a, b in (("mondrian", "mondrian++"), ("hilb", "hilb++strict"))
        if a in REGISTRY and b in REGISTRY
    ]
    if not pairs:
        return
    out.rule("5. does the algorithm read SA statistics the release does not show? (l = 3)")
    t = rich_table(
        "algorithm",
        "groups",
        "mean size",
        "NCP",
        "query error",
        "unrecoverable SA reads",
        "verdict",
    )
    for name in [n for pair in pairs for n in pair]:
        log = SAReadLog()
        release = REGISTRY[name].run(table, [LDiversity(3)], seed=seed, sa_log=log)
        bad = log.violations(release.partition.group)
        sets = sum(count for _, count in bad)
        t.add_row(
            name,
            f"{release.partition.n_groups:,}",
            f"{release.partition.sizes.mean():.1f}",
            _ncp_text(release),
            _query_error_text(release),
            f"{sets:,} row sets" if bad else "none",
            "[red]leaks[/]" if bad else "[green]safe[/]",
        )
    out.print(fit_words(t, out.width))
    out.print(
        "An adversary who knows the algorithm can replay a read that the release does not "
        "show and learn from the decision it drove (paper 000, Theorem 5.3). The ++ variants "
        "read only statistics of published groups, then pick groups at random inside them."
    )
    _demo_attacks(table, seed)


def _demo_attacks(table: Table, seed: int) -> None:
    """Section 6: what an adversary who knows the algorithm learns, tuple by tuple (paper 000
    Algorithm 7 on Hilb; the same attack finds nothing on Hilb++ strict)."""
    from kerckhoffs.algorithms import REGISTRY
    from kerckhoffs.attacks.hilb_order import hilb_order_attack
    from kerckhoffs.models import LDiversity

    if "hilb" not in REGISTRY or "hilb++strict" not in REGISTRY:
        return
    out.rule("6. what an adversary who re-runs the algorithm learns (l = 3)")
    for name in ("hilb", "hilb++strict"):
        release = REGISTRY[name].run(table, [LDiversity(3)], seed=seed)
        result = hilb_order_attack(release)
        colour = "green" if result.safe else "red"
        out.print(
            f"{name}: [{colour}]{result.verdict()}[/] (query error {_query_error_text(release)})"
        )
    out.print(
        "Hilb's greedy groups skip a row only when its SA value is already in the group, so "
        "the order of the groups pins values down (paper 000 section 8.3.1). Run the same "
        "check on your own release with `kerckhoffs audit --release DIR`."
    )


_WORKLOADS: weakref.WeakKeyDictionary[Table, Any] = weakref.WeakKeyDictionary()


def _query_error_text(release: Release) -> str:
    """Mean relative error of a fixed random COUNT workload (drawn once per table)."""
    from kerckhoffs.metrics import Workload, query_error

    work = _WORKLOADS.get(release.table)
    if work is None:
        work = _WORKLOADS[release.table] = Workload.draw(release.table, n_queries=2_000, seed=0)
    return f"{query_error(release, work).mean:.3f}"


def _ncp_text(release: Release) -> str:
    from kerckhoffs.metrics import ncp

    if release.scheme == Scheme.BUCKETIZATION:
        return "0"
    return f"{ncp(release):.3f}"


# -- datasets ----------------------------------------------------------------------------------
@datasets_app.command("prepare")
def datasets_prepare(
    name: Annotated[str, typer.Argument(help="adult | adult-training | census | demo")],
    out_file: Annotated[Path, typer.Option("--out", help="CSV file to write.")],
    source: Annotated[
        Path | None, typer.Option("--from", help="Directory or file of the raw data.")
    ] = None,
    rows: Annotated[int, typer.Option(help="demo: rows to generate.")] = 2000,
    seed: Annotated[int, typer.Option(help="demo: generator seed.")] = 0,
    all_rows: Annotated[
        bool, typer.Option("--all-rows", help="census: keep occupation 0 (not in universe) rows.")
    ] = False,
    overwrite: Annotated[bool, typer.Option(help="Replace --out if it exists.")] = False,
) -> None:
    """Write a clean CSV with a header that every other command reads.

    adult: UCI adult.data + adult.test, rows with '?' dropped (45,222 rows). census: the
    Census-Income extract, rows with occupation != 0 (148,318) unless --all-rows.
    """
    from kerckhoffs import datasets as ds

    if name not in {"adult", "adult-training", "census", "demo"}:
        raise InputError(f"unknown dataset {name!r} (adult, adult-training, census, demo)")
    if out_file.suffix.lower() not in {".csv", ""}:
        raise InputError(f"--out {out_file}: datasets are written as .csv")
    inputs: list[Path] = []
    if source is not None:
        inputs = [source] if source.is_file() else [p for p in source.rglob("*") if p.is_file()]
    check_writable_file(out_file, overwrite=overwrite, protect=inputs)
    if name == "demo":
        df = ds.generate_hospital(rows, seed)
    else:
        if source is None:
            raise InputError(f"datasets prepare {name} needs --from DIR")
        if name == "adult":
            df = ds.load_adult(source)
        elif name == "adult-training":
            df = ds.load_adult_training(source)
        else:
            df = ds.load_census(source, in_universe=not all_rows)
    check_writable_file(out_file, overwrite=overwrite, protect=inputs)
    with atomic_file(out_file) as tmp:
        df.to_csv(tmp, index=False)
    out.print(f"wrote {len(df):,} rows × {df.shape[1]} columns to {out_file}")


def _register_commands() -> None:
    from kerckhoffs import cli_attack, cli_audit_algorithm, cli_reproduce

    cli_attack.register(app)
    cli_audit_algorithm.register(app)
    cli_reproduce.register(app)


_register_commands()


def run(args: Sequence[str]) -> int:
    """Run ``kerckhoffs ARGS`` and return the exit code: 0 done, 1 a privacy verdict
    (a violated model, an unsafe release), 2 bad input or usage, 3 an internal error.

    Whatever goes wrong ends in one line on stderr starting with ``error:``, never a
    traceback (``KERCKHOFFS_TRACEBACK=1`` shows it for internal errors, to report them).
    """
    try:
        rv = app(args=list(args), prog_name="kerckhoffs", standalone_mode=False)
    except ArgumentError as exc:  # name the parameter as typed: --sa-values, --option
        return _fail(f"--{exc.parameter.replace('_', '-')} {exc.value}: {exc.reason}")
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
    except Exception as exc:  # a bug: say so in one line
        if os.environ.get("KERCKHOFFS_TRACEBACK"):
            traceback.print_exc()
        return _fail(
            f"internal error ({type(exc).__name__}: {exc}); this is a bug in kerckhoffs, "
            "please report it (KERCKHOFFS_TRACEBACK=1 shows the traceback)",
            3,
        )
    return rv if isinstance(rv, int) else 0


def _fail(message: str, code: int = 2) -> int:
    print(f"error: {one_line(message)}", file=sys.stderr)
    return code


def main() -> None:
    """Console entry point."""
    sys.exit(run(sys.argv[1:]))


if __name__ == "__main__":
    main()
