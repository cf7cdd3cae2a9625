"""Running experiments: every point once (cached), then a CSV and a PNG per experiment.

The reproduction harness's runner. Finished points are appended to ``<out>/.cache/<name>.jsonl`` as
soon as they are measured, so an interrupted ``kerckhoffs reproduce --all`` resumes where it stopped
and a re-run only measures points it has not seen (a point's key is its parameters, its seed and the
experiment's ``version``). The CSV holds one row per measured row, with the point's parameters and
seed; the plot shows the median over seeds.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs.data.io import atomic_file
from kerckhoffs.experiments.base import Context, Experiment, Row

CACHE = ".cache"
"""The folder of an output folder that holds what a run keeps for the next one (cached
points, the schedule's timings); never committed."""


def cache_dir(out_dir: str | Path) -> Path:
    """``out_dir/.cache``, created with a ``.gitignore`` that ignores everything in it, so a
    fresh output folder inside a git checkout does not show its cache in ``git status``."""
    path = Path(out_dir) / CACHE
    path.mkdir(parents=True, exist_ok=True)
    ignore = path / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# kerckhoffs reproduce: cached points and timings, never committed\n*\n")
    return path


MARKERS = ("o", "s", "^", "D", "v", "x", "P", "*")
DASHES = ("-", "--", ":", "-.")


def point_key(exp: Experiment, point: Row, seed: int) -> str:
    """The cache key of one measurement."""
    return json.dumps(
        {"experiment": exp.name, "version": exp.version, "point": point, "seed": seed},
        sort_keys=True,
        default=str,
    )


def points(exp: Experiment) -> list[tuple[Row, int]]:
    """Every (point, seed) of the experiment, in grid order."""
    return [(dict(p), s) for p in exp.grid for s in exp.seeds]


def _read_cache(path: Path) -> dict[str, list[Row]]:
    done: dict[str, list[Row]] = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:  # a line cut by an interruption: measure it again
                continue
            done[rec["key"]] = rec["rows"]
    return done


def run_experiment(
    exp: Experiment,
    out_dir: str | Path,
    *,
    context: Context,
    force: bool = False,
    progress: Callable[[int, int], None] | None = None,
    plot: bool = True,
    record: bool = False,
) -> pd.DataFrame:
    """Measure every point of ``exp`` not yet cached under ``out_dir``, then write
    ``out_dir/<name>.csv`` and ``out_dir/<name>.png``. ``force`` ignores the cache.
    ``progress(done, total)`` is called after each point. Returns the result rows, with
    ``attrs["measured"]`` the number of points measured (the others came from the cache),
    ``attrs["unchanged"]`` True when the CSV already in ``out_dir`` is exactly what would be
    written, and ``attrs["kept"]`` True when it is, or differs only in the experiment's
    :attr:`~Experiment.varies` cells: then neither file is rewritten (a re-run does not
    change committed results through seconds or noise). With ``record`` both are False and
    both files are rewritten; a missing PNG is drawn in any case."""
    out = Path(out_dir)
    cache_path = cache_dir(out) / f"{exp.name}.jsonl"
    if force and cache_path.exists():
        cache_path.unlink()
    done = _read_cache(cache_path)
    todo = points(exp)
    rows: list[Row] = []
    measured_points = 0
    for i, (point, seed) in enumerate(todo):
        key = point_key(exp, point, seed)
        if key not in done:
            measured_points += 1
            t0 = time.perf_counter()
            got = exp.measure(point | {"seed": seed}, context)
            measured = [got] if isinstance(got, dict) else list(got)
            measured = [_plain_row(r) for r in measured]
            with cache_path.open("a") as fh:
                rec = {"key": key, "rows": measured, "seconds": time.perf_counter() - t0}
                fh.write(json.dumps(rec, default=str) + "\n")
            done[key] = measured
        for r in done[key]:
            rows.append({**point, "seed": seed, **r})
        if progress is not None:
            progress(i + 1, len(todo))
    df = pd.DataFrame(rows)
    df.attrs["measured"] = measured_points
    csv = out / f"{exp.name}.csv"
    png = out / f"{exp.name}.png"
    text = df.to_csv(index=False)
    try:
        before = csv.read_text(encoding="utf-8") if csv.is_file() else None
    except (OSError, UnicodeDecodeError):  # not a CSV we can read: rewrite it
        before = None
    df.attrs["unchanged"] = not record and before == text
    df.attrs["kept"] = (
        not record
        and before is not None
        and (df.attrs["unchanged"] or same_but_varies(exp, before, text))
    )
    if not df.attrs["kept"]:
        with atomic_file(csv) as tmp:
            Path(tmp).write_text(text, encoding="utf-8")
    if plot and (not df.attrs["kept"] or not png.is_file()):  # a lost PNG is drawn again
        with atomic_file(png) as tmp:
            plot_experiment(exp, df, tmp)
    return df


def varying_cells(exp: Experiment, table: pd.DataFrame) -> np.ndarray:
    """Which cells of a result table (as written) may differ between two runs: the columns
    :attr:`Experiment.varies` names, and for an entry ``"value[runtime]"`` the column
    ``value`` on the rows whose ``measure`` contains ``runtime`` (results in long form)."""
    mask = np.zeros(table.shape, dtype=bool)
    cols = list(table.columns)
    for entry in exp.varies:
        name, _, rest = entry.partition("[")
        if name not in cols:
            continue
        rows = np.ones(len(table), dtype=bool)
        if rest:
            text = rest.rstrip("]")
            if "measure" not in cols:
                continue
            rows = table["measure"].astype(str).str.contains(text, regex=False).to_numpy()
        mask[rows, cols.index(name)] = True
    return mask


def same_but_varies(exp: Experiment, before: str, text: str) -> bool:
    """Whether the CSV text ``before`` (the file already written) holds the same results as
    ``text`` (what would be written now), except in the varying cells (:func:`varying_cells`)
    and in the last bits of a float."""
    import io

    def cells(source: str) -> pd.DataFrame:
        return pd.read_csv(io.StringIO(source), dtype=str, keep_default_na=False)

    try:
        old = cells(before)
    except ValueError:  # not a CSV we can read: rewrite it
        return False
    new = cells(text)
    if list(old.columns) != list(new.columns) or old.shape != new.shape:
        return False
    fixed = ~varying_cells(exp, new)
    a, b = old.to_numpy()[fixed], new.to_numpy()[fixed]
    return all(_same_number(x, y) for x, y in zip(a[a != b], b[a != b], strict=True))


def _same_number(a: str, b: str) -> bool:
    """Two written cells that are the same number up to the last bits of a float (a sum taken
    in another order: 0.004850146036503383 against ...382), not a different result."""
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    return math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-300)


def _plain_row(row: Row) -> Row:
    out: Row = {}
    for k, v in row.items():
        if hasattr(v, "item") and callable(v.item):
            v = v.item()
        out[k] = v
    return out


PANEL_W, PANEL_H = 5.5, 4.0
"""Inches per panel: a grid of at most two columns keeps every figure at most 2.75:1, so it
stays readable when a page scales it down (a strip of four panels was 5.5:1)."""


LEGEND_INSIDE = 3
"""Legends of at most this many entries sit inside the axes; longer ones go below them."""


def panel_grid(n: int) -> tuple[int, int]:
    """Rows and columns for ``n`` panels: one or two side by side, more in two columns."""
    cols = min(n, 2)
    return -(-n // cols), cols


def plot_experiment(exp: Experiment, df: pd.DataFrame, path: Path) -> None:
    """Draw the experiment's plot (median over seeds, :func:`build_figure`) into ``path``
    (PNG)."""
    build_figure(exp, df).savefig(path, format="png", dpi=DPI)


DPI = 110
"""Resolution of the committed PNGs."""


def build_figure(exp: Experiment, df: pd.DataFrame) -> Any:
    """The experiment's figure (a :class:`matplotlib.figure.Figure`, median over seeds), laid
    out and with its title wrapped to the image's width (:func:`fit_title`), not yet saved.
    Made without pyplot, so nothing needs closing and no global figure list grows."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:  # pragma: no cover - matplotlib ships with the test and bench extras
        raise ImportError(
            "plots need matplotlib: pip install 'kerckhoffs[bench]' (or '.[bench]' from a checkout)"
        ) from None

    spec = exp.plot
    ys = [spec.y] if isinstance(spec.y, str) else list(spec.y)
    cells = [  # (spec, panel value): the plot's panels, then each extra spec's
        (one, panel)
        for one in (spec, *spec.extra)
        for panel in (list(dict.fromkeys(df[one.panels])) if one.panels and len(df) else [None])
    ]
    panels = [panel for _, panel in cells]
    rows, cols = panel_grid(len(panels))
    fig = Figure(figsize=(PANEL_W * cols, PANEL_H * rows))
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, cols, squeeze=False, sharey=spec.sharey)
    for ax in axes.flat[len(panels) :]:
        ax.remove()
    shared: dict[str, Any] = {}  # label -> handle, every panel's series in order
    long = False
    styles = _styles(df, [spec, *spec.extra], ys)
    for ax, (one, panel) in zip(axes.flat, cells, strict=False):
        sub = df if panel is None else df[df[one.panels] == panel]
        one_ys = ys if one is spec else [one.y] if isinstance(one.y, str) else list(one.y)
        _draw(ax, sub, one, one_ys, styles)
        _straight_lines(ax, sub, one)
        ax.set_xlabel(one.xlabel)
        if one.ylabel_per_panel and panel is not None:
            ax.set_ylabel(str(panel))
        else:
            ax.set_ylabel(one.ylabel)
            if panel is not None:
                ax.set_title(f"{one.panels} = {panel}", fontsize=9)
        if one.logy or any(text in str(panel) for text in one.logy_panels):
            ax.set_yscale("log")
        elif one.symlog > 0:
            ax.set_yscale("symlog", linthresh=one.symlog)
        if one.logx:
            ax.set_xscale("log")
        handles, labels = ax.get_legend_handles_labels()
        for h, lab in zip(handles, labels, strict=True):
            shared.setdefault(lab, h)
        long = long or len(handles) > LEGEND_INSIDE or spec.legend_below
        ax.grid(alpha=0.3)
    if long:  # one legend below every panel: a long legend inside would hide lines
        ncol = 2 if cols > 1 or len(shared) > 6 else 1
        lines = -(-len(shared) // ncol)
        extra = 0.25 * lines + 0.2  # inches for the legend
        height = PANEL_H * rows + extra
        fig.set_size_inches(PANEL_W * cols, height)
        fig.legend(
            list(shared.values()), list(shared), fontsize=8, ncol=ncol,
            loc="lower center", bbox_to_anchor=(0.5, 0.0), frameon=False,
        )  # fmt: skip
        rect = (0.0, extra / height, 1.0, 1.0)
    else:
        for ax in axes.flat[: len(panels)]:
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=8, framealpha=0.6)  # data under a short legend stays visible
        rect = (0.0, 0.0, 1.0, 1.0)
    place_title(fig, exp, cols)
    fig.tight_layout(rect=rect)  # after the title's last wrap: room for all its lines
    return fig


TITLE_SIZE = 10
"""Font size (points) of a figure's title."""


def figure_title(exp: Experiment, cols: int) -> str:
    """The figure's title, wrapped to the width of ``cols`` panels: a first guess at about
    0.62 em per character of DejaVu Sans, which :func:`fit_title` corrects by measuring."""
    import textwrap

    per_line = int(PANEL_W * cols * 72 / (TITLE_SIZE * 0.62))
    return textwrap.fill(f"{exp.figure} (paper {exp.paper}): {exp.title}", per_line)


def place_title(fig: Any, exp: Experiment, cols: int) -> Any:
    """Put the experiment's title over ``fig`` (``cols`` panels wide), wrapped so that it
    fits the figure's width (:func:`fit_title`); the title's text object."""
    title = fig.suptitle(figure_title(exp, cols), fontsize=TITLE_SIZE)
    fit_title(fig, title)
    return title


def fit_title(fig: Any, title: Any, margin: float = 0.02) -> None:
    """Rewrap ``title`` (a centred text of ``fig``) with fewer characters a line until it
    lies inside the figure with ``margin`` (a share of the width) on each side: a title
    wider than its image was cut on both sides (the m-privacy Fig. 8 and DP X1 titles). The
    width is measured by the renderer, so wide letters cannot defeat a character count."""
    import textwrap

    words = " ".join(title.get_text().split())
    renderer = fig.canvas.get_renderer()
    limit = fig.bbox.width * (1 - 2 * margin)
    per_line = max(len(line) for line in title.get_text().splitlines())
    while per_line > 10 and title.get_window_extent(renderer).width > limit:
        per_line = int(per_line * 0.95)
        title.set_text(textwrap.fill(words, per_line))


def _straight_lines(ax: Any, df: pd.DataFrame, spec: Any) -> None:
    """A panel's reference lines (``spec.lines``) and least-squares line (``spec.fit``)."""
    if df.empty or not (spec.fit or spec.lines) or not isinstance(spec.y, str):
        return
    xs = pd.to_numeric(df[spec.x], errors="coerce").to_numpy(dtype=float)
    ys = pd.to_numeric(df[spec.y], errors="coerce").to_numpy(dtype=float)
    ok = np.isfinite(xs) & np.isfinite(ys)
    if not ok.any():
        return
    xs, ys = xs[ok], ys[ok]
    grid = np.linspace(xs.min(), xs.max(), 50)
    for label, slope, intercept in spec.lines:
        ax.plot(grid, slope * grid + intercept, color="0.45", linestyle=":", label=label)
    if spec.fit and np.unique(xs).size > 1:
        slope, intercept = np.polyfit(xs, ys, 1)
        ss_tot = float(((ys - ys.mean()) ** 2).sum())
        resid = float(((ys - (slope * xs + intercept)) ** 2).sum())
        r2 = 1.0 - resid / ss_tot if ss_tot > 0 else float("nan")
        ax.plot(
            grid,
            slope * grid + intercept,
            color="black",
            linestyle="--",
            linewidth=1,
            label=f"least squares: {slope:.3f}x + {intercept:.2f} (R² = {r2:.2f})",
        )


def _styles(df: pd.DataFrame, specs: list[Any], ys: list[str]) -> dict[str | None, int]:
    """One style index per line label over the whole figure (the main plot's labels first,
    then those only an extra panel draws), so that a label keeps its colour, marker and
    dashes in every panel and the shared legend names each style once (panels with
    different series used to restart the styles, one style for several labels)."""
    labels = []
    for one in specs:
        one_ys = ys if one is specs[0] else [one.y] if isinstance(one.y, str) else list(one.y)
        names = dict(one.labels)
        series = list(dict.fromkeys(df[one.series])) if one.series and len(df) else [None]
        labels += [_label(names.get(s, s), y, one_ys) for s in series for y in one_ys]
    return {lab: i for i, lab in enumerate(dict.fromkeys(labels))}


def _draw(
    ax: Any, df: pd.DataFrame, spec: Any, ys: list[str], styles: dict[str | None, int]
) -> None:
    if df.empty:
        return
    import matplotlib

    colors = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
    series = list(dict.fromkeys(df[spec.series])) if spec.series else [None]
    lines = [(s, y) for s in series for y in ys]
    if spec.kind == "bar":
        xs = list(dict.fromkeys(df[spec.x]))
        width = 0.8 / max(len(lines), 1)
        for i, (s, y) in enumerate(lines):
            sub = df if s is None else df[df[spec.series] == s]
            med = sub.groupby(spec.x, sort=False)[y].median()
            pos = [xs.index(x) + (i - (len(lines) - 1) / 2) * width for x in med.index]
            ax.bar(pos, med.to_numpy(), width, label=_label(s, y, ys))
        ax.set_xticks(range(len(xs)), [str(x) for x in xs], rotation=20, fontsize=8)
        return
    values = []
    for s, y in lines:
        sub = df if s is None else df[df[spec.series] == s]
        med = pd.to_numeric(sub.groupby(spec.x, sort=True)[y].median(), errors="coerce")
        label = _label(dict(spec.labels).get(s, s), y, ys)
        i = styles[label]
        if med.isna().all():  # every point refused or not measured: say so in the legend
            label = f"{label or y}: refused, no value"
        values.append(med.dropna().to_numpy())
        # distinct markers and dashes, so series with equal values stay visible on each other
        ax.plot(
            med.index,
            med.to_numpy(),
            marker=MARKERS[i % len(MARKERS)],
            linestyle="none" if spec.kind == "points" else DASHES[i % len(DASHES)],
            markersize=7 - (i % 3),
            color=colors[i % len(colors)],
            label=label,
        )
    flat = np.concatenate(values) if values else np.array([])
    if (
        flat.size and not np.any(flat) and not spec.logy
    ):  # all zero: show 0 low on a unit axis, not mid-way
        ax.set_ylim(-0.05, 1.0)
    xs = pd.to_numeric(df[spec.x], errors="coerce")
    if xs.notna().all() and (xs == xs.round()).all():  # k, l, m, qi, qd: integer ticks only
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def _label(series: Any, y: str, ys: list[str]) -> str | None:
    parts = [str(series)] if series is not None else []
    if len(ys) > 1:
        parts.append(y)
    return " / ".join(parts) or None
