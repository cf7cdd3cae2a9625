"""The experiment harness (kerckhoffs.experiments): one tiny experiment end to end, cached points,
CSV and PNG written, the registry and the `reproduce` command."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from kerckhoffs.cli import main
from kerckhoffs.errors import ParameterError
from kerckhoffs.experiments import (
    Context,
    Experiment,
    Plot,
    all_experiments,
    get_experiment,
    run_experiment,
)
from kerckhoffs.experiments.runner import point_key

pytest.importorskip("matplotlib")


def tiny(calls: list[dict]) -> Experiment:
    def measure(point: dict, ctx: Context) -> list[dict]:
        from kerckhoffs.algorithms import get
        from kerckhoffs.metrics import Workload, query_error
        from kerckhoffs.models import LDiversity

        calls.append(point)
        table = ctx.dataset("demo")
        work = ctx.cached("w", lambda: Workload.draw(table, n_queries=200, seed=point["seed"]))
        rows = []
        for name in ("mondrian", "anatomy"):
            rel = get(name).run(table, [LDiversity(point["l"])], seed=point["seed"])
            rows.append(
                {
                    "algorithm": name,
                    "groups": rel.partition.n_groups,
                    "error": query_error(rel, work).mean,
                }
            )
        return rows

    return Experiment(
        name="tiny",
        paper="000",
        figure="Fig. T",
        title="query error vs l on the demo data",
        grid=[{"l": 2}, {"l": 3}],
        measure=measure,
        plot=Plot(x="l", y="error", xlabel="l", ylabel="relative error", series="algorithm"),
        claim="error grows with l",
    )


def test_tiny_experiment_end_to_end_and_cached(tmp_path: Path) -> None:
    calls: list[dict] = []
    exp = tiny(calls)
    ctx = Context(tmp_path / "no-real-data-needed")
    df = run_experiment(exp, tmp_path / "out", context=ctx)
    assert len(calls) == 2 and len(df) == 4
    assert set(df.columns) >= {"l", "seed", "algorithm", "groups", "error"}
    on_disk = pd.read_csv(tmp_path / "out" / "tiny.csv")
    assert on_disk.shape == df.shape
    png = (tmp_path / "out" / "tiny.png").read_bytes()
    assert png.startswith(b"\x89PNG")
    # a second run measures nothing: every point is cached
    again = run_experiment(exp, tmp_path / "out", context=Context(tmp_path))
    assert len(calls) == 2
    pd.testing.assert_frame_equal(again, df)
    # a new grid point is measured alone; --force measures everything again
    bigger = Experiment(**{**exp.__dict__, "grid": [{"l": 2}, {"l": 3}, {"l": 4}]})
    run_experiment(bigger, tmp_path / "out", context=ctx)
    assert [c["l"] for c in calls] == [2, 3, 4]
    run_experiment(bigger, tmp_path / "out", context=ctx, force=True)
    assert len(calls) == 6


def test_version_bump_invalidates_cache() -> None:
    exp = tiny([])
    newer = Experiment(**{**exp.__dict__, "version": 2})
    assert point_key(exp, {"l": 2}, 0) != point_key(newer, {"l": 2}, 0)


def test_interrupted_cache_line_is_measured_again(tmp_path: Path) -> None:
    calls: list[dict] = []
    exp = tiny(calls)
    run_experiment(exp, tmp_path, context=Context(tmp_path), plot=False)
    cache = tmp_path / ".cache" / "tiny.jsonl"
    lines = cache.read_text().splitlines()
    cache.write_text(lines[0] + "\n" + lines[1][: len(lines[1]) // 2])  # cut mid-line
    run_experiment(exp, tmp_path, context=Context(tmp_path), plot=False)
    assert len(calls) == 3


def test_registry_lists_the_papers_experiments() -> None:
    exps = all_experiments()
    assert len({e.name for e in exps}) == len(exps)
    for e in exps:
        assert e.grid and e.claim and e.paper in {"000", "001", "002", "003", "004"}
    with pytest.raises(ParameterError, match="unknown experiment"):
        get_experiment("no-such-figure")


def test_reproduce_list_and_errors(monkeypatch: pytest.MonkeyPatch, capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    def run(*args: str) -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "argv", ["kerckhoffs", *args])
        with pytest.raises(SystemExit) as exc:
            main()
        cap = capsys.readouterr()
        return int(exc.value.code or 0), cap.out, cap.err

    code, out, _ = run("reproduce", "--list")
    assert code == 0
    for e in all_experiments():
        assert e.name[:10] in out
    code, _, err = run("reproduce")
    assert code == 2 and "--all" in err
    code, _, err = run("reproduce", "nope", "--data", str(tmp_path))
    assert code == 2 and "unknown experiment" in err


def test_every_experiment_has_committed_results_and_a_reproduction_row() -> None:
    root = Path(__file__).resolve().parents[1]
    text = (root / "REPRODUCTION.md").read_text()
    for e in all_experiments():
        assert (root / "reproduction" / f"{e.name}.csv").is_file(), e.name
        assert (root / "reproduction" / f"{e.name}.png").is_file(), e.name
        assert f"reproduction/{e.name}.png" in text, e.name


def _quick(name: str) -> Experiment:
    """A registered-looking experiment for worker processes (module level: it is pickled)."""

    def measure(point: dict, ctx: Context) -> dict:
        return {
            "value": point["x"] * 10 + point["seed"] + (100 if name == "quick-b" else 0),
            "built_by": ctx.cached("quick:shared", lambda: name),  # who filled the context
        }

    return Experiment(
        name=name, paper="000", figure="Fig. Q", title="quick", grid=[{"x": 1}, {"x": 2}],
        measure=measure, plot=Plot(x="x", y="value", xlabel="x", ylabel="value"),
        claim="none", seeds=(0, 1),
    )  # fmt: skip


def test_parallel_runs_write_what_serial_runs_write(tmp_path: Path) -> None:
    from kerckhoffs.experiments.parallel import run_many

    seen: list[tuple[str, int]] = []
    ended: list[str] = []
    done = run_many(
        [["quick-a", "quick-c"], ["quick-b"]], tmp_path / "par", tmp_path, jobs=2,
        on_point=lambda n, d: seen.append((n, d)), on_done=lambda f: ended.append(f.name),
        resolve=_quick,
    )  # fmt: skip
    names = ("quick-a", "quick-b", "quick-c")
    assert sorted((f.name, f.rows, f.measured) for f in done) == [(n, 4, 4) for n in names]
    assert sorted(seen) == [(n, d) for n in names for d in (1, 2, 3, 4)]
    assert sorted(ended) == list(names)
    assert ended.index("quick-a") < ended.index("quick-c")  # a bundle runs in order
    built_by = {n: set(pd.read_csv(tmp_path / "par" / f"{n}.csv")["built_by"]) for n in names}
    assert built_by == {"quick-a": {"quick-a"}, "quick-b": {"quick-b"}, "quick-c": {"quick-a"}}
    for name in names:
        serial = run_experiment(_quick(name), tmp_path / "ser", context=Context(tmp_path))
        assert (
            serial["value"].tolist()
            == pd.read_csv(tmp_path / "par" / f"{name}.csv")["value"].tolist()
        )
    # each worker kept its own cache file: a second run measures nothing, appends nothing
    again = run_many([["quick-a"]], tmp_path / "par", tmp_path, jobs=1, resolve=_quick)[0]
    assert (again.rows, again.measured, again.kept) == (4, 0, True)
    assert (tmp_path / "par" / ".cache" / "quick-a.jsonl").read_text().count("\n") == 4


def test_no_figure_is_a_strip_wider_than_three_to_one() -> None:
    """Layout rule (reproduction figures stay readable when scaled down): at most two panels
    side by side, and every committed PNG at most 3:1 wide (read from its IHDR header)."""
    import struct

    from kerckhoffs.experiments.runner import PANEL_H, PANEL_W, panel_grid

    assert [panel_grid(n) for n in (1, 2, 3, 4, 5)] == [(1, 1), (1, 2), (2, 2), (2, 2), (3, 2)]
    for n in range(1, 9):
        rows, cols = panel_grid(n)
        assert rows * cols >= n and PANEL_W * cols <= 3 * PANEL_H * rows
    pngs = sorted((Path(__file__).resolve().parents[1] / "reproduction").glob("*.png"))
    assert len(pngs) >= 50
    for png in pngs:
        head = png.read_bytes()[:24]
        width, height = struct.unpack(">II", head[16:24])
        assert width <= 3 * height, f"{png.name}: {width}x{height}"


def test_reproduce_bundles_share_a_module() -> None:
    # --all in parallel: one task per paper module, so Fig. 10a-d's common point (l = 4,
    # qi = 7, qd = 3, sel = 5 %) is anonymized and measured once, not once per figure
    from kerckhoffs.cli.reproduce import bundles_of

    chosen = all_experiments()
    bundles = bundles_of(chosen)
    assert sorted(n for b in bundles for n in b) == sorted(e.name for e in chosen)
    census = next(b for b in bundles if "asap-fig10a" in b)
    assert {"asap-fig10b", "asap-fig10c", "asap-fig10d", "asap-fig9"} <= set(census)
    assert "composition-fig1" not in census
    assert ["composition-fig1-size"] in bundles  # its own share: other subset sizes
    # the costliest bundle first: by a previous run's seconds when they cover every experiment
    seconds = {e.name: 1.0 for e in chosen} | {"dp-x4-budget": 1000.0}
    assert "dp-x4-budget" in bundles_of(chosen, seconds)[0]
    assert bundles_of(chosen, {"dp-x4-budget": 1000.0}) == bundles  # partial: by points


def test_timings_are_recorded_and_merged(tmp_path: Path) -> None:
    from kerckhoffs.cli.reproduce import read_timings, write_timings

    write_timings(tmp_path, {"a": 1.25, "b": 2.0})
    write_timings(tmp_path, {"b": 3.0})
    got = read_timings(tmp_path)
    assert (got["a"], got["b"]) == (1.2, 3.0)  # one decimal kept
    # the last runs' seconds (OUT/.cache/) win over --record's (OUT/) name by name, and the
    # committed reproduction/timings.csv fills in the experiments neither has run
    write_timings(tmp_path / ".cache", {"b": 5.0})
    got = read_timings(tmp_path)
    assert (got["a"], got["b"]) == (1.2, 5.0) and "asap-fig9" in got
    (tmp_path / "timings.csv").write_text("not,ours\n1,2\n")
    assert "not" not in read_timings(tmp_path)  # a foreign file is not read as timings
    assert not write_timings(tmp_path, {"a": 1.0})  # nor replaced: kerckhoffs did not write it
    assert (tmp_path / "timings.csv").read_text() == "not,ours\n1,2\n"


def _timed(scale: int, clock: list[int]) -> Experiment:
    """An experiment with a column of seconds and a runtime row in long form: both differ on
    every measurement (``clock`` ticks), the rest is ``scale`` times the point."""

    def measure(point: dict, ctx: Context) -> list[dict]:
        clock[0] += 1
        return [
            {"measure": "error", "value": point["x"] * scale, "seconds": clock[0] / 7},
            {"measure": "runtime (s)", "value": clock[0] / 3, "seconds": clock[0] / 7},
        ]

    return Experiment(
        name="timed", paper="000", figure="Fig. T", title="timed", grid=[{"x": 1}, {"x": 2}],
        measure=measure, plot=Plot(x="x", y="value", xlabel="x", ylabel="value"),
        claim="none", varies=("seconds", "value[runtime]"),
    )  # fmt: skip


def test_varying_cells_are_the_named_columns_and_the_named_measures_rows() -> None:
    from kerckhoffs.experiments.runner import varying_cells

    table = pd.DataFrame(
        {"measure": ["error", "runtime (s)", "error"], "value": [1, 2, 3], "seconds": [4, 5, 6]}
    )
    got = varying_cells(_timed(1, [0]), table)
    assert got.tolist() == [[False, False, True], [False, True, True], [False, False, True]]


def test_a_rerun_that_differs_only_in_varying_cells_leaves_csv_and_png_alone(
    tmp_path: Path,
) -> None:
    """Measured again (``force``), the seconds and the runtime rows differ, nothing else: the
    written CSV and PNG stay byte for byte; ``record`` rewrites them; a change anywhere else
    is written."""
    clock = [0]
    ctx = Context(tmp_path)
    out = tmp_path / "out"
    first = run_experiment(_timed(10, clock), out, context=ctx)
    assert first.attrs["kept"] is False
    csv, png = (out / "timed.csv").read_bytes(), (out / "timed.png").read_bytes()
    again = run_experiment(_timed(10, clock), out, context=ctx, force=True)
    assert clock[0] == 4 and again.attrs["kept"] is True
    assert (out / "timed.csv").read_bytes() == csv and (out / "timed.png").read_bytes() == png
    assert again["seconds"].tolist() != first["seconds"].tolist()
    recorded = run_experiment(_timed(10, clock), out, context=ctx, force=True, record=True)
    assert recorded.attrs["kept"] is False
    assert (out / "timed.csv").read_bytes() != csv
    assert pd.read_csv(out / "timed.csv")["seconds"].tolist() == recorded["seconds"].tolist()
    # a float equal but for its last bits (a sum in another order) is the same result
    written = pd.read_csv(out / "timed.csv")
    written.loc[0, "value"] = written.loc[0, "value"] * (1 + 1e-15)
    written.to_csv(out / "timed.csv", index=False)
    nudged = (out / "timed.csv").read_bytes()
    assert run_experiment(_timed(10, clock), out, context=ctx, force=True).attrs["kept"] is True
    assert (out / "timed.csv").read_bytes() == nudged
    changed = run_experiment(_timed(11, clock), out, context=ctx, force=True)
    assert changed.attrs["kept"] is False
    assert pd.read_csv(out / "timed.csv")["value"].tolist()[0] == 11


def _reproduce_piped(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> tuple[Callable[..., str], Path, dict[str, Callable[[], Experiment]]]:
    """``reproduce timed quick-a`` run in-process with its output captured (no terminal),
    the two experiments in two bundles (so that ``--jobs 2`` takes the parallel path)."""
    import kerckhoffs.experiments as experiments

    clock = [0]
    made: dict[str, Callable[[], Experiment]] = {
        "timed": lambda: Experiment(**{**_timed(10, clock).__dict__, "share": "t"}),
        "quick-a": lambda: Experiment(**{**_quick("quick-a").__dict__, "share": "q"}),
    }
    monkeypatch.setattr(experiments, "get_experiment", lambda name: made[name]())
    (tmp_path / "data" / "adult").mkdir(parents=True)
    out = tmp_path / "out"

    def run(*extra: str, ok: bool = True) -> str:
        argv = ["reproduce", "timed", "quick-a", "--data", str(tmp_path / "data"),
                "--out", str(out), *extra]  # fmt: skip
        monkeypatch.setattr(sys, "argv", ["kerckhoffs", *argv])
        with pytest.raises(SystemExit) as exc:
            main()
        assert (int(exc.value.code or 0) == 0) == ok
        return capsys.readouterr().out

    return run, out, made


def _line(output: str, start: str) -> str:
    """The one line of ``output`` that starts with ``start`` (whole: never wrapped)."""
    found = [line for line in output.splitlines() if line.startswith(start)]
    assert len(found) == 1, output
    return found[0]


def test_an_unchanged_result_is_told_apart_and_a_lost_png_is_drawn_again(tmp_path: Path) -> None:
    """A re-run that gives exactly the written CSV says so (``unchanged``), and keeps the
    files; a PNG deleted meanwhile is drawn again, the CSV still left alone."""
    ctx = Context(tmp_path)
    first = run_experiment(_quick("quick-a"), tmp_path, context=ctx)
    assert (first.attrs["unchanged"], first.attrs["kept"], first.attrs["measured"]) == (
        False, False, 4,
    )  # fmt: skip
    csv = (tmp_path / "quick-a.csv").read_bytes()
    (tmp_path / "quick-a.png").unlink()
    again = run_experiment(_quick("quick-a"), tmp_path, context=ctx, force=True)
    assert (again.attrs["unchanged"], again.attrs["kept"], again.attrs["measured"]) == (
        True, True, 4,
    )  # fmt: skip
    assert (tmp_path / "quick-a.png").read_bytes().startswith(b"\x89PNG")
    assert (tmp_path / "quick-a.csv").read_bytes() == csv
    recorded = run_experiment(_quick("quick-a"), tmp_path, context=ctx, record=True)
    assert (recorded.attrs["kept"], recorded.attrs["measured"]) == (False, 0)


def test_piped_reproduce_prints_a_line_per_experiment_and_keeps_timings_in_the_cache(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Without a terminal there is no progress bar: one numbered, unwrapped line per finished
    experiment says whether its files were written or kept and how many points were
    measured; a forced re-run keeps what only its seconds changed, and the closing line
    counts them; the schedule's seconds go to OUT/.cache/ unless --record."""
    run, out, _ = _reproduce_piped(monkeypatch, capsys, tmp_path)
    first = run("--jobs", "1")
    timed = _line(first, "[1/2] timed  ")
    assert " s  written (4 rows -> " in timed and timed.endswith("; 2 points measured")
    assert _line(first, "[2/2] quick-a  ").endswith("; 4 points measured")
    assert " s: 2 written" in _line(first, "2 experiment(s) in ") and "kept" not in first
    assert (out / ".cache" / "timings.csv").is_file() and not (out / "timings.csv").exists()
    second = run("--jobs", "1", "--force")
    assert "  kept (only seconds or noise differed); 2 points measured" in _line(
        second, "[1/2] timed  "
    )
    assert "  unchanged; 4 points measured" in _line(second, "[2/2] quick-a  ")
    closing = _line(second, "2 experiment(s) in ")
    assert closing.endswith(" s: 0 written, 1 unchanged, 1 kept (only seconds or noise "
                            "differed; --record rewrites them)")  # fmt: skip
    third = run("--jobs", "1")
    assert _line(third, "[2/2] quick-a  ").endswith("  unchanged; all 4 points cached")
    recorded = run("--jobs", "1", "--force", "--record")
    assert " s: 2 written" in _line(recorded, "2 experiment(s) in ")
    assert (out / "timings.csv").read_text() == (out / ".cache" / "timings.csv").read_text()


def test_an_interrupted_reproduce_still_records_the_seconds_of_what_finished(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The first experiment finishes, the second fails: the run stops with the error, and the
    first one's seconds are in OUT/.cache/timings.csv for the next run's schedule."""
    from kerckhoffs.cli.reproduce import read_timings

    run, out, made = _reproduce_piped(monkeypatch, capsys, tmp_path)

    def boom(point: dict, ctx: Context) -> dict:
        raise RuntimeError("measurement failed")

    made["quick-a"] = lambda: Experiment(**{**_quick("quick-a").__dict__, "measure": boom})
    printed = run("--jobs", "1", ok=False)
    assert _line(printed, "[1/2] timed  ") and "[2/2]" not in printed
    recorded = (out / ".cache" / "timings.csv").read_text().splitlines()
    assert [line.split(",")[0] for line in recorded] == ["name", "timed"]
    assert "timed" in read_timings(out)


def test_piped_parallel_reproduce_prints_the_same_lines(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``--jobs 2`` reports each experiment a worker finished with the same line as a serial
    run. The workers' own code runs here in-process (:func:`parallel._work` and the queue
    drain); only the process pool is left out (the experiments are not importable by name in
    a worker; the pool itself is tested above)."""
    import queue

    from kerckhoffs.experiments import parallel

    run, out, made = _reproduce_piped(monkeypatch, capsys, tmp_path)
    used: list[int] = []

    def pool_free_run_many(bundles: list[list[str]], out_dir: Path, data_dir: Path, *,
                           jobs: int, force: bool, record: bool, on_point: Callable[..., None],
                           on_done: Callable[..., None]) -> list[parallel.Finished]:  # fmt: skip
        used.append(jobs)
        progress: queue.Queue[object] = queue.Queue()
        monkeypatch.setattr(parallel, "_PROGRESS", progress)
        done = []
        for names in bundles:
            done += parallel._work(names, str(out_dir), str(data_dir), force,
                                   lambda n: made[n](), record)  # fmt: skip
        parallel._drain(progress, on_point, on_done)
        return done

    monkeypatch.setattr(parallel, "run_many", pool_free_run_many)
    first = run("--jobs", "2")
    assert used == [2]
    assert {_line(first, f"[{i}/2] ").split()[1] for i in (1, 2)} == {"timed", "quick-a"}
    for line in (_line(first, "[1/2] "), _line(first, "[2/2] ")):
        assert " s  written (4 rows -> " in line and line.endswith(" points measured")
    assert " s: 2 written" in _line(first, "2 experiment(s) in ")
    again = run("--jobs", "2", "--force")
    lines = [_line(again, "[1/2] "), _line(again, "[2/2] ")]
    timed = next(line for line in lines if line.split()[1] == "timed")
    quick = next(line for line in lines if line.split()[1] == "quick-a")
    assert timed.endswith("kept (only seconds or noise differed); 2 points measured")
    assert quick.endswith("unchanged; 4 points measured")
    assert "0 written, 1 unchanged, 1 kept" in _line(again, "2 experiment(s) in ")
    assert (out / ".cache" / "timings.csv").is_file() and not (out / "timings.csv").exists()


def test_a_fresh_output_folder_in_a_git_checkout_hides_its_cache(tmp_path: Path) -> None:
    """The runner's cache folder ignores itself (``.cache/.gitignore``: ``*``), so a run into
    a fresh folder of a checkout adds no cached points or timings to ``git status``; the
    results themselves are ordinary files there."""
    import shutil
    import subprocess

    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")
    subprocess.run([git, "init", "-q", str(tmp_path)], check=True)
    run_experiment(_timed(10, [0]), tmp_path / "fresh", context=Context(tmp_path), plot=False)
    assert (tmp_path / "fresh" / ".cache" / "timed.jsonl").is_file()
    status = subprocess.run(
        [git, "status", "--porcelain", "--untracked-files=all"],
        cwd=tmp_path, capture_output=True, text=True, check=True,
    ).stdout.split("\n")  # fmt: skip
    assert "?? fresh/timed.csv" in status
    assert not [line for line in status if ".cache" in line], status


def _committed(panels_only: bool = False) -> list[tuple[Experiment, pd.DataFrame]]:
    """Every registered experiment with a committed CSV in ``reproduction/``, with that CSV
    (``panels_only``: only its column of panels, all the title's width depends on)."""
    root = Path(__file__).resolve().parents[1] / "reproduction"
    found = []
    for e in all_experiments():
        path = root / f"{e.name}.csv"
        if path.is_file():
            cols = [e.plot.panels] if e.plot.panels else []
            found.append((e, pd.read_csv(path, usecols=cols) if panels_only else pd.read_csv(path)))
    return found


def _outside(box: object, fig: object) -> bool:
    """Whether a window extent leaves the figure (half a pixel of rounding allowed)."""
    w, h = fig.bbox.width, fig.bbox.height  # type: ignore[attr-defined]
    return bool(box.x0 < -0.5 or box.y0 < -0.5 or box.x1 > w + 0.5 or box.y1 > h + 0.5)  # type: ignore[attr-defined]


def test_every_committed_figure_title_fits_inside_its_image() -> None:
    """Each committed experiment's title, placed as :func:`build_figure` places it (same
    text, font, wrapping and figure width, the panels counted from the committed CSV), lies
    inside the image: long titles were cut on both sides (the m-privacy Fig. 8, DP X1). The
    title's extent depends only on the figure's size, not on the data, so an empty figure of
    that size is measured here (drawing all ~60 figures takes ~14 s of CPU: the slow test
    below does that)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from kerckhoffs.experiments.runner import PANEL_H, PANEL_W, panel_grid, place_title

    committed = _committed(panels_only=True)
    assert len(committed) >= 50
    for exp, df in committed:
        n = len(dict.fromkeys(df[exp.plot.panels])) if exp.plot.panels and len(df) else 1
        rows, cols = panel_grid(n)
        fig = Figure(figsize=(PANEL_W * cols, PANEL_H * rows), dpi=40)
        canvas = FigureCanvasAgg(fig)
        title = place_title(fig, exp, cols)
        box = title.get_window_extent(canvas.get_renderer())
        assert not _outside(box, fig), f"{exp.name}: {title.get_text()!r}"


def test_a_title_too_wide_for_a_character_count_is_wrapped_by_its_measured_width() -> None:
    """Wide letters defeat the characters-per-line guess of :func:`figure_title`; the
    measured wrap of :func:`fit_title` still brings the title inside the image."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from kerckhoffs.experiments.runner import (
        PANEL_H,
        PANEL_W,
        figure_title,
        fit_title,
        place_title,
    )

    wide = Experiment(**{**tiny([]).__dict__, "title": " ".join(["WMWMWMWM"] * 30)})
    fig = Figure(figsize=(PANEL_W, PANEL_H), dpi=40)
    renderer = FigureCanvasAgg(fig).get_renderer()
    guessed = fig.suptitle(figure_title(wide, 1), fontsize=10)
    assert _outside(guessed.get_window_extent(renderer), fig)  # the guess alone is cut
    fit_title(fig, guessed)
    assert not _outside(guessed.get_window_extent(renderer), fig)
    assert "WMWMWMWM" in guessed.get_text().splitlines()[-1]  # no word lost
    assert " ".join(guessed.get_text().split()) == " ".join(figure_title(wide, 1).split())
    placed = place_title(fig, wide, 1)
    assert not _outside(placed.get_window_extent(renderer), fig)


@pytest.mark.slow
def test_every_committed_figure_drawn_keeps_titles_axes_and_legends_inside() -> None:
    """Every committed figure drawn from its committed CSV as ``reproduce`` draws it (laid
    out, titles fitted): the title, each panel's title, each panel with its tick labels and
    axis labels, and the legend below the panels lie inside the image."""
    from kerckhoffs.experiments.runner import build_figure

    for exp, df in _committed():
        fig = build_figure(exp, df)
        renderer = fig.canvas.get_renderer()
        assert fig._suptitle is not None
        assert not _outside(fig._suptitle.get_window_extent(renderer), fig), exp.name
        for ax in fig.axes:
            assert not _outside(ax.title.get_window_extent(renderer), fig), exp.name
            assert not _outside(ax.get_tightbbox(renderer), fig), exp.name
        for legend in fig.legends:
            assert not _outside(legend.get_window_extent(renderer), fig), exp.name
