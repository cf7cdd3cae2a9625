"""What an experiment is: a declarative spec of one figure or table of a paper.

The reproduction harness's unit. An :class:`Experiment` names its paper figure, its parameter grid
(a list of points, each a dict of parameters such as ``{"algorithm": "mondrian", "l": 4}``), its
seeds, the function that measures one point (returning one or more rows of metrics), how to plot the
rows (axes labelled like the paper's) and the paper's claim, which ``REPRODUCTION.md`` puts beside
our measurement. :func:`kerckhoffs.experiments.runner.run_experiment` runs it, caching every
finished point, and writes a CSV and a PNG.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from kerckhoffs.data.schema import Schema
from kerckhoffs.data.table import Table
from kerckhoffs.datasets import generate_hospital, hospital_schema, load_adult, load_census
from kerckhoffs.errors import InputError, ParameterError

Row = dict[str, Any]
Measure = Callable[[Row, "Context"], Row | list[Row]]


@dataclass(frozen=True)
class Plot:
    """How the result rows become a figure: ``y`` (one column, or several drawn as series)
    against ``x``, one line per value of ``series``; ``kind`` ``line``, ``points`` (markers
    without lines, for an ``x`` measured per seed) or ``bar``; rows with the same (x, series)
    are summarised by their median (over seeds)."""

    x: str
    y: str | Sequence[str]
    xlabel: str
    ylabel: str
    series: str | None = None
    kind: str = "line"
    logy: bool = False
    panels: str | None = None  # one subplot per value of this column
    ylabel_per_panel: bool = False  # each panel's y axis is labelled with its panel value
    sharey: bool = False  # one y scale for every panel (levels compare across panels)
    symlog: float = 0.0  # > 0: symmetric log y axis, linear below this value (shows zeros)
    logy_panels: Sequence[str] = ()  # log y only on panels whose value contains one of these
    extra: Sequence[Plot] = ()
    """Further panels after these, each drawn from the same rows by its own spec (another x
    or y: paper 003's Fig. 8 plots runtime against records per provider and against the
    average fitness). Their own ``extra`` is ignored; no extra panels by default."""
    labels: Sequence[tuple[str | None, str]] = ()
    """(series value, legend text) pairs: a longer legend name for a series, e.g. one that says
    its line lies on another's (None: the one line of a panel without series). Series not
    named keep their value."""
    fit: bool = False
    """Draw the least-squares line of ``y`` on ``x`` over every row (all seeds), its equation
    and R² in the legend."""
    lines: Sequence[tuple[str, float, float]] = ()
    """Reference lines ``(label, slope, intercept)``, e.g. a paper's fitted line."""
    logx: bool = False  # log x axis (paper 003's Fig. 11 is log-log)
    legend_below: bool = False
    """One legend below the panels even when it is short (inside, it would cover a line)."""


@dataclass(frozen=True)
class Experiment:
    """One figure or table of a paper, reproducible by :func:`run_experiment`.

    ``name`` is the CLI name (``asap-fig10a``); ``paper`` the paper id (``000``, ``001``,
    ``004``); ``figure`` the paper's label (``Fig. 10a``); ``grid`` the points; ``measure``
    measures one point (called as ``measure(point | {"seed": s}, context)``) and returns a row
    or a list of rows of metrics (plain numbers/strings); ``claim`` is what the paper reports
    (numbers where it gives them, trends otherwise); ``version`` is bumped when ``measure``
    changes meaning, so cached points of the old version are not reused.
    """

    name: str
    paper: str
    figure: str
    title: str
    grid: Sequence[Row]
    measure: Measure
    plot: Plot
    claim: str
    seeds: Sequence[int] = (0,)
    version: int = 1
    notes: str = ""
    varies: Sequence[str] = ()
    """Result columns that differ between two runs of the same code and data: seconds
    measured, and draws of noise that cannot be seeded (OpenDP's). A re-run whose other
    columns equal the written CSV's leaves the written CSV and PNG as they are (the
    committed results do not change on every run); ``reproduce --record`` rewrites them."""
    share: str = ""
    """Which experiments share work (tables, releases, attacks through their
    :class:`Context`): a parallel ``reproduce`` runs those with the same ``share`` in one
    worker with one context. Default: the experiments of the same module."""


@dataclass
class Context:
    """Shared state of a run: where the real data is, and tables already loaded (one load of
    Adult or the Census stand-in serves every point of every experiment in a process)."""

    data_dir: Path
    _cache: dict[str, Any] = field(default_factory=dict)

    def cached(self, key: str, make: Callable[[], Any]) -> Any:
        """``make()`` once per key per run."""
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    def dataset(self, name: str) -> Any:
        """The encoded table of a named dataset (see :data:`DATASETS`)."""
        if name not in DATASETS:
            raise ParameterError(f"unknown dataset {name!r} (known: {', '.join(DATASETS)})")
        return self.cached(f"dataset:{name}", lambda: DATASETS[name](self.data_dir))

    @cached_property
    def examples(self) -> Path:
        """The project's ``examples/`` directory (schemas and hierarchies)."""
        return examples_dir()


def examples_dir() -> Path:
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "examples" / "adult" / "schema.toml").is_file():
            return parent / "examples"
    raise InputError("the examples/ directory (schemas, hierarchies) was not found")


def _adult(data_dir: Path) -> Table:
    return Table.encode(
        load_adult(data_dir / "adult"), Schema.from_toml(examples_dir() / "adult" / "schema.toml")
    )


def _census(data_dir: Path) -> Table:
    return Table.encode(
        load_census(data_dir / "census"),
        Schema.from_toml(examples_dir() / "census" / "schema.toml"),
    )


def _demo(data_dir: Path) -> Table:
    return Table.encode(generate_hospital(2000, seed=0), hospital_schema())


DATASETS: dict[str, Callable[[Path], Any]] = {
    "adult": _adult,
    "census": _census,
    "demo": _demo,
}
