"""The experiment harness (kerckhoffs.experiments): one tiny experiment end to end, cached points,
CSV and PNG written, the registry and the `reproduce` command."""

from __future__ import annotations

import sys
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
    assert sorted((f.name, f.rows) for f in done) == [(n, 4) for n in names]
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
    assert run_many([["quick-a"]], tmp_path / "par", tmp_path, jobs=1, resolve=_quick)[0].rows == 4
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
    from kerckhoffs.cli_reproduce import bundles_of

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
    from kerckhoffs.cli_reproduce import read_timings, write_timings

    write_timings(tmp_path, {"a": 1.25, "b": 2.0})
    write_timings(tmp_path, {"b": 3.0})
    assert read_timings(tmp_path) == {"a": 1.2, "b": 3.0}  # one decimal kept
    (tmp_path / "timings.csv").write_text("not,ours\n1,2\n")
    assert read_timings(tmp_path) != {"not": 2.0}  # a foreign file is not read as timings
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


def test_piped_reproduce_prints_a_line_per_experiment_and_keeps_timings_in_the_cache(
    monkeypatch: pytest.MonkeyPatch,
    capsys,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    """Without a terminal there is no progress bar: one numbered line per finished experiment
    shows the progress; the second run keeps what only its seconds changed; the schedule's
    seconds go to OUT/.cache/ unless --record."""
    import kerckhoffs.experiments as experiments

    clock = [0]
    made = {"timed": lambda: _timed(10, clock), "quick-a": lambda: _quick("quick-a")}
    monkeypatch.setattr(experiments, "get_experiment", lambda name: made[name]())
    (tmp_path / "data" / "adult").mkdir(parents=True)
    out = tmp_path / "out"

    def run(*extra: str) -> str:
        argv = ["reproduce", "timed", "quick-a", "--data", str(tmp_path / "data"),
                "--out", str(out), "--jobs", "1", *extra]  # fmt: skip
        monkeypatch.setattr(sys, "argv", ["kerckhoffs", *argv])
        with pytest.raises(SystemExit) as exc:
            main()
        assert int(exc.value.code or 0) == 0
        return capsys.readouterr().out

    first = run()
    assert "[1/2] timed (" in first and "[2/2] quick-a (" in first and "left as" not in first
    assert (out / ".cache" / "timings.csv").is_file() and not (out / "timings.csv").exists()
    second = run("--force")
    flat = " ".join(second.split())
    assert "[1/2] timed (" in second and "left as it was (the same results, seconds and" in flat
    assert "2 experiment(s)" in flat and "2 left as they were" in flat
    run("--force", "--record")
    assert (out / "timings.csv").is_file()


def test_every_committed_figure_title_fits_inside_its_image() -> None:
    """A figure's title, as :func:`plot_experiment` draws it for the committed CSV (wrapped to
    the figure's width, at its font size), lies inside the image: long titles were cut on
    both sides (the m-privacy Fig. 8, DP X1). The title's position depends only on the
    figure's width, so an empty figure of that width is measured (no data drawn)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from kerckhoffs.experiments.runner import PANEL_H, PANEL_W, TITLE_SIZE, figure_title, panel_grid

    root = Path(__file__).resolve().parents[1] / "reproduction"
    for exp in all_experiments():
        df = pd.read_csv(root / f"{exp.name}.csv")
        n = len(dict.fromkeys(df[exp.plot.panels])) if exp.plot.panels else 1
        rows, cols = panel_grid(n)
        fig = Figure(figsize=(PANEL_W * cols, PANEL_H * rows))
        canvas = FigureCanvasAgg(fig)
        title = fig.suptitle(figure_title(exp, cols), fontsize=TITLE_SIZE)
        box = title.get_window_extent(canvas.get_renderer())
        assert box.x0 >= 0 and box.x1 <= fig.bbox.width, f"{exp.name}: {title.get_text()!r}"
        assert box.y1 <= fig.bbox.height, exp.name
