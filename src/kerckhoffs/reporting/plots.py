"""The report's pictures: matplotlib figures rendered to inline SVG (text drawn as paths, so
no font is fetched or needed to view them)."""

from __future__ import annotations

import io
import itertools
import re
from collections.abc import Sequence

import numpy as np


def _svg(fig: object) -> str:
    import matplotlib.pyplot as plt

    buf = io.StringIO()
    no_meta = {"Creator": None, "Date": None, "Format": None, "Type": None}
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata=no_meta)  # type: ignore[attr-defined]
    plt.close(fig)  # type: ignore[arg-type]
    text = buf.getvalue()
    text = text[text.index("<svg") :]
    # inline SVG in HTML needs no namespace declarations (the HTML parser knows svg and
    # xlink), and the page then names no address at all
    return re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", text, count=3)


def _axes(title: str, xlabel: str, ylabel: str) -> tuple[object, object]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.fonttype"] = "path"
    plt.rcParams["svg.hashsalt"] = "kerckhoffs-report"  # the same SVG for the same numbers
    fig, ax = plt.subplots(figsize=(6.0, 2.8))
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(xlabel, fontsize=9)
    ax.set_ylabel(ylabel, fontsize=9)
    ax.tick_params(labelsize=8)
    ax.grid(axis="y", alpha=0.3)
    return fig, ax


def bars(
    labels: Sequence[str],
    counts: Sequence[float] | np.ndarray,
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    color: str = "#3b6ea8",
) -> str:
    """A bar chart of counts per label."""
    fig, ax = _axes(title, xlabel, ylabel)
    x = np.arange(len(labels))
    ax.bar(x, counts, color=color)  # type: ignore[attr-defined]
    step = max(1, len(labels) // 12)
    ax.set_xticks(x[::step], [labels[i] for i in range(0, len(labels), step)])  # type: ignore[attr-defined]
    if max((len(s) for s in labels), default=0) > 4:
        ax.tick_params(axis="x", labelrotation=30)  # type: ignore[attr-defined]
    return _svg(fig)


def histogram(
    values: np.ndarray,
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    bins: int | Sequence[float] | np.ndarray = 20,
    weights: np.ndarray | None = None,
    color: str = "#3b6ea8",
) -> str:
    """A histogram of ``values`` (each weighted, e.g. a group by its rows)."""
    fig, ax = _axes(title, xlabel, ylabel)
    ax.hist(values, bins=bins, weights=weights, color=color)  # type: ignore[attr-defined]
    return _svg(fig)


def intervals(
    centre: np.ndarray, lower: np.ndarray, upper: np.ndarray, *, title: str, ylabel: str
) -> str:
    """Counts with their intervals, sorted by count; at most 200 cells drawn, evenly spaced in
    that order, each at its rank among all cells (so the axis counts every cell)."""
    n = centre.size
    order = np.argsort(centre, kind="stable")
    ranks = np.arange(n)
    if n > 200:
        ranks = np.unique(np.linspace(0, n - 1, 200).astype(int))
    drawn = f" ({ranks.size} of {n:,} drawn)" if ranks.size < n else ""
    fig, ax = _axes(title, f"cells, sorted by published value{drawn}", ylabel)
    cells = order[ranks]
    ax.vlines(ranks, lower[cells], upper[cells], color="#9bb7d9", linewidth=1)  # type: ignore[attr-defined]
    ax.plot(ranks, centre[cells], ".", color="#1f4e8c", markersize=3)  # type: ignore[attr-defined]
    ax.set_yscale("symlog", linthresh=10)  # type: ignore[attr-defined]
    return _svg(fig)


def size_bins(sizes: np.ndarray, exact: int = 10) -> tuple[list[str], np.ndarray]:
    """Group sizes binned for a bar chart whose axis does not mislead: the ``exact`` smallest
    sizes one bar each (the ones a privacy model is about), then ranges growing 1-2-5 (labels
    say each bar's range). Returns (labels, groups per bar)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    if sizes.size == 0:
        return [], np.zeros(0, dtype=np.int64)
    lo, hi = int(sizes.min()), int(sizes.max())
    edges = list(range(lo, min(lo + exact, hi + 1)))
    nice = [m * 10**e for e in range(12) for m in (1, 2, 5)]
    edges += [v for v in nice if edges[-1] < v <= hi]
    edges.append(hi + 1)
    counts = np.histogram(sizes, bins=np.asarray(edges))[0]
    labels = [str(a) if b - a == 1 else f"{a}-{b - 1}" for a, b in itertools.pairwise(edges)]
    return labels, counts
