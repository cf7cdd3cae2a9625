"""The ``reproduce`` command: regenerate the papers' experiments (:mod:`kerckhoffs.experiments`).

``kerckhoffs reproduce --list`` names the experiments, ``kerckhoffs reproduce asap-fig10a``
runs one, ``kerckhoffs reproduce --all`` runs every one, with a progress bar on a terminal
and one line per finished experiment in a pipe or a file. Finished points are cached under
``--out`` (``.cache/``, which git is told to ignore), so an interrupted run resumes;
``--force`` measures again. Each experiment writes ``<out>/<name>.csv`` and
``<out>/<name>.png``, unless the CSV there already holds the same results (seconds and
unseedable noise aside; ``--record`` rewrites it). The default ``--out`` is a working folder
(``kerckhoffs-reproduction/`` in the current directory), so a run never rewrites the results
committed under ``reproduction/``; ``--out reproduction`` refreshes those on purpose.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kerckhoffs.cli.output import fit_words, out, progress_bar, table
from kerckhoffs.errors import ArgumentError, InputError

if TYPE_CHECKING:
    from kerckhoffs.experiments import Context, Experiment
    from kerckhoffs.experiments.parallel import Finished

if TYPE_CHECKING:
    from rich.progress import TaskID

DEFAULT_DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


def _data_dir(given: Path | None) -> Path:
    for cand in [given] if given is not None else [Path("../shared/data"), DEFAULT_DATA]:
        if cand is not None and (cand / "adult").is_dir():
            return cand
    where = given if given is not None else Path("../shared/data")
    raise InputError(
        f"the real data was not found at {where} (expected adult/ and census/ inside; "
        "give --data DIR)"
    )


def _writable_folder(folder: Path) -> None:
    """Create ``folder`` (and its parents) now, so a place that cannot be written fails
    before hours of measurement, not after."""
    probe = folder
    while not probe.exists() and not probe.is_symlink():
        probe = probe.parent
    if not probe.is_dir():
        raise InputError(f"--out {folder}: {probe} is not a directory")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise InputError(f"--out {folder}: cannot write there ({exc.strerror})") from None


def reproduce(
    names: Annotated[
        list[str] | None, typer.Argument(help="Experiments to run (see --list).")
    ] = None,
    run_all: Annotated[bool, typer.Option("--all", help="Run every experiment.")] = False,
    list_only: Annotated[bool, typer.Option("--list", help="List the experiments.")] = False,
    out_dir: Annotated[
        Path,
        typer.Option(
            "--out",
            "-o",
            help="Where the CSVs, plots and cache go (--out reproduction refreshes the "
            "committed results).",
        ),
    ] = Path("kerckhoffs-reproduction"),
    data: Annotated[
        Path | None,
        typer.Option("--data", help="The shared data directory (adult/, census/)."),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Ignore cached points and measure again.")
    ] = False,
    replot: Annotated[
        bool,
        typer.Option(
            "--replot", help="Only redraw the PNGs from the CSVs already in --out; measure nothing."
        ),
    ] = False,
    record: Annotated[
        bool,
        typer.Option(
            "--record",
            help="Rewrite every CSV and PNG, and OUT/timings.csv, even when only seconds or "
            "noise changed (by default such results are left as they are).",
        ),
    ] = False,
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs",
            "-j",
            help="Experiments run at once, each in a process of its own (0: one per CPU).",
        ),
    ] = 0,
) -> None:
    """Regenerate the experiments of papers 000, 001, 002, 003 and 004 on the real data.

    One CSV and one PNG per figure or table, cached so an interrupted run resumes. A result
    that differs from the CSV already in --out only in seconds measured or in noise that
    cannot be seeded is left as it is (so refreshing the committed results does not rewrite
    them on every run); --record rewrites it. Without a terminal, one line per finished
    experiment shows the progress.
    """
    from kerckhoffs.experiments import Context, all_experiments, get_experiment
    from kerckhoffs.experiments.runner import cache_dir
    from kerckhoffs.machine import available_cpus

    if list_only:
        t = table("name", "paper", "figure", "points", "title")
        for e in all_experiments():
            t.add_row(e.name, e.paper, e.figure, str(len(e.grid) * len(e.seeds)), e.title)
        out.print(fit_words(t, out.width))
        return
    if run_all:
        chosen = all_experiments()
    elif names:
        chosen = [get_experiment(n) for n in names]
    else:
        raise InputError("name the experiments to run, or give --all (see --list)")
    if replot:
        _replot(chosen, out_dir)
        return
    if jobs < 0:
        raise ArgumentError("jobs", str(jobs), "must be 0 (one per CPU) or more")
    data_dir = _data_dir(data)
    _writable_folder(out_dir)
    t0 = time.perf_counter()
    workers = min(jobs or available_cpus(), len(bundles_of(chosen)))
    report = _Report(len(chosen), out_dir)
    took: dict[str, float] = {}  # seconds per finished experiment, filled as they finish
    try:
        if workers > 1:
            _run_parallel(chosen, out_dir, data_dir, workers, force, record, report, took)
        else:
            _run_serial(chosen, out_dir, Context(data_dir), force, record, report, took)
    except BaseException:
        write_timings(cache_dir(out_dir), took)  # what finished still schedules the next run
        raise
    # the cache always (the next run reads it first); the committed OUT/timings.csv on --record
    for where in [cache_dir(out_dir)] + ([out_dir] if record else []):
        if not write_timings(where, took):
            out.print(
                f"note: {where / TIMINGS} is not a timings file kerckhoffs wrote; left as it "
                "is (the next run schedules by points)"
            )
    out.print(report.closing(time.perf_counter() - t0), soft_wrap=True)


class _Report:
    """The line printed per finished experiment: on a terminal above the progress bars, and
    in a pipe or a file (where rich draws no bar) flushed at once, numbered and never
    wrapped, so that a long run shows its progress; and the run's closing line."""

    def __init__(self, total: int, out_dir: Path) -> None:
        self.total = total
        self.out_dir = out_dir
        self.done = 0
        self.unchanged = 0
        self.varied = 0  # kept although seconds or noise differed

    def line(self, f: Finished, points: int) -> str:
        """``[2/58] asap-fig9  3.2 s  kept (only seconds or noise differed); 4 points
        measured``: what became of the files, and where the points came from."""
        if f.unchanged:
            what = "unchanged"
        elif f.kept:
            what = "kept (only seconds or noise differed)"
        else:
            what = f"written ({f.rows} rows -> {self.out_dir / (f.name + '.csv')}, .png)"
        if f.measured == 0:
            how = f"all {_points(points)} cached"
        elif f.measured == points:
            how = f"{_points(points)} measured"
        else:
            how = f"{f.measured} of {_points(points)} measured, the others cached"
        return f"[{self.done}/{self.total}] {f.name}  {f.seconds:.1f} s  {what}; {how}"

    def __call__(self, console: Any, f: Finished, points: int) -> None:
        self.done += 1
        self.unchanged += f.unchanged
        self.varied += f.kept and not f.unchanged
        console.print(self.line(f, points), soft_wrap=True, markup=False, highlight=False)
        console.file.flush()

    def closing(self, seconds: float) -> str:
        """``58 experiment(s) in 1400 s: 30 written, 16 unchanged, 12 kept (only seconds or
        noise differed; --record rewrites them)``."""
        written = self.done - self.unchanged - self.varied
        parts = [f"{written} written"]
        if self.unchanged:
            parts.append(f"{self.unchanged} unchanged")
        if self.varied:
            parts.append(
                f"{self.varied} kept (only seconds or noise differed; --record rewrites them)"
            )
        return f"{self.done} experiment(s) in {seconds:.0f} s: {', '.join(parts)}"


def _points(n: int) -> str:
    return f"{n} point" if n == 1 else f"{n} points"


def _replot(chosen: list[Experiment], out_dir: Path) -> None:
    import pandas as pd

    from kerckhoffs.data.io import atomic_file
    from kerckhoffs.experiments.runner import plot_experiment

    missing = [e.name for e in chosen if not (out_dir / f"{e.name}.csv").is_file()]
    if missing:
        raise InputError(f"--replot: {out_dir / (missing[0] + '.csv')} does not exist")
    for exp in chosen:
        df = pd.read_csv(out_dir / f"{exp.name}.csv")
        with atomic_file(out_dir / f"{exp.name}.png") as tmp:
            plot_experiment(exp, df, tmp)
        out.print(f"{exp.name}: {out_dir / (exp.name + '.png')}")


def _run_serial(
    chosen: list[Experiment],
    out_dir: Path,
    context: Context,
    force: bool,
    record: bool,
    report: _Report,
    took: dict[str, float],
) -> None:
    """One experiment after the other in this process (tables shared between them); the
    seconds each took go into ``took`` as it finishes."""
    from kerckhoffs.experiments import run_experiment
    from kerckhoffs.experiments.parallel import Finished

    total = sum(len(e.grid) * len(e.seeds) for e in chosen)
    with progress_bar() as progress:
        overall = progress.add_task("all points", total=total)
        done_before = 0
        for exp in chosen:
            task = progress.add_task(exp.name, total=len(exp.grid) * len(exp.seeds))
            base = done_before

            def step(done: int, _total: int, task: TaskID = task, base: int = base) -> None:
                progress.update(task, completed=done)
                progress.update(overall, completed=base + done)

            started = time.perf_counter()
            df = run_experiment(
                exp, out_dir, context=context, force=force, progress=step, record=record
            )
            took[exp.name] = time.perf_counter() - started
            progress.update(task, description=f"{exp.name} ({took[exp.name]:.0f} s)")
            done_before += len(exp.grid) * len(exp.seeds)
            done = Finished(exp.name, len(df), took[exp.name], df.attrs["kept"],
                            df.attrs["measured"], df.attrs["unchanged"])  # fmt: skip
            report(progress.console, done, len(exp.grid) * len(exp.seeds))


def bundles_of(
    chosen: list[Experiment], seconds: dict[str, float] | None = None
) -> list[list[str]]:
    """The experiments grouped by what they share (:attr:`Experiment.share`, by default their
    module), the costliest bundle first: by the seconds a previous run took (``seconds``, when
    it names every experiment) or else by points. Submitted in that order to workers that each
    take the next bundle when free, the bundles are scheduled longest first."""
    groups: dict[str, list[Experiment]] = {}
    for e in chosen:
        groups.setdefault(e.share or getattr(e.measure, "__module__", e.name), []).append(e)
    known = seconds is not None and all(e.name in seconds for e in chosen)

    def cost(g: list[Experiment]) -> float:
        if known:
            assert seconds is not None
            return sum(seconds[e.name] for e in g)
        return float(sum(len(e.grid) * len(e.seeds) for e in g))

    return [[e.name for e in g] for g in sorted(groups.values(), key=cost, reverse=True)]


TIMINGS = "timings.csv"
"""Seconds each experiment took (name, seconds): what the next parallel run schedules by.
Every run writes them under ``OUT/.cache/`` (never committed); ``--record`` writes
``OUT/timings.csv``, and the committed ``reproduction/timings.csv`` serves a fresh working
folder."""


def _parse_timings(path: Path) -> dict[str, float] | None:
    """The seconds a timings file records; None when the file is not one (another file of
    that name, or damaged)."""
    import csv

    with path.open(newline="") as fh:
        try:
            return {r["name"]: float(r["seconds"]) for r in csv.DictReader(fh)}
        except (KeyError, ValueError, UnicodeDecodeError):
            return None


def read_timings(out_dir: Path) -> dict[str, float]:
    """The seconds per experiment the next run schedules by: those of the last runs into
    ``out_dir`` (``OUT/.cache/timings.csv``), else those recorded there with ``--record``
    (``OUT/timings.csv``), else the committed ``reproduction/timings.csv`` when this is a
    source checkout, merged name by name, so that a run of a few experiments does not leave
    the next ``--all`` without seconds for the others; empty when none is found."""
    import contextlib

    from kerckhoffs.experiments.base import examples_dir
    from kerckhoffs.experiments.runner import CACHE

    candidates = [out_dir / CACHE / TIMINGS, out_dir / TIMINGS]
    with contextlib.suppress(InputError):  # an installed package has no reproduction/
        candidates.append(examples_dir().parent / "reproduction" / TIMINGS)
    merged: dict[str, float] = {}
    for path in reversed(candidates):  # the most recent last, so that it wins
        found = _parse_timings(path) if path.is_file() else None
        merged |= found or {}
    return merged


def write_timings(out_dir: Path, seconds: dict[str, float]) -> bool:
    """Record ``seconds`` in ``out_dir/timings.csv``, keeping the entries of experiments not
    run this time. A file of that name that is not a timings file is left as it is (False):
    kerckhoffs replaces only what it wrote."""
    import csv

    from kerckhoffs.data.io import atomic_file

    path = out_dir / TIMINGS
    path.parent.mkdir(parents=True, exist_ok=True)
    before = (_parse_timings(path) if path.is_file() else None) if path.exists() else {}
    if before is None:
        return False
    merged = before | seconds
    with atomic_file(path) as tmp, Path(tmp).open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["name", "seconds"])
        for name in sorted(merged):
            w.writerow([name, f"{merged[name]:.1f}"])
    return True


def _run_parallel(
    chosen: list[Experiment],
    out_dir: Path,
    data_dir: Path,
    workers: int,
    force: bool,
    record: bool,
    report: _Report,
    took: dict[str, float],
) -> None:
    """The experiments in ``workers`` processes, one bundle of experiments sharing a context
    per task (:func:`bundles_of`); the seconds each took go into ``took`` as it finishes (the
    caller records those finished, even if one fails)."""
    from kerckhoffs.experiments.parallel import run_many

    size = {e.name: len(e.grid) * len(e.seeds) for e in chosen}
    bundles = bundles_of(chosen, read_timings(out_dir))
    order = [n for b in bundles for n in b]
    with progress_bar() as progress:
        overall = progress.add_task(f"all points ({workers} processes)", total=sum(size.values()))
        tasks = {n: progress.add_task(n, total=size[n], start=False) for n in order}
        points = dict.fromkeys(order, 0)

        def on_point(name: str, done: int) -> None:
            progress.start_task(tasks[name])
            points[name] = done
            progress.update(tasks[name], completed=done)
            progress.update(overall, completed=sum(points.values()))

        def on_done(f: Finished) -> None:
            took[f.name] = f.seconds
            on_point(f.name, size[f.name])
            progress.update(tasks[f.name], description=f"{f.name} ({f.seconds:.0f} s)")
            report(progress.console, f, size[f.name])

        run_many(bundles, out_dir, data_dir, jobs=workers, force=force, record=record,
                 on_point=on_point, on_done=on_done)  # fmt: skip


def register(app: typer.Typer) -> None:
    """Add the command to the main app."""
    app.command("reproduce")(reproduce)
