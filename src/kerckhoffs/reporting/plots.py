"""The report's pictures: matplotlib figures rendered to inline SVG (text drawn as paths, so
no font is fetched or needed to view them)."""

from __future__ import annotations

import io
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
    """Counts with their intervals, sorted by count (at most 200 drawn, evenly spaced)."""
    fig, ax = _axes(title, "cells, sorted by noisy count", ylabel)
    order = np.argsort(centre, kind="stable")
    if order.size > 200:
        order = order[np.linspace(0, order.size - 1, 200).astype(int)]
    x = np.arange(order.size)
    ax.vlines(x, lower[order], upper[order], color="#9bb7d9", linewidth=1)  # type: ignore[attr-defined]
    ax.plot(x, centre[order], ".", color="#1f4e8c", markersize=3)  # type: ignore[attr-defined]
    ax.set_yscale("symlog", linthresh=10)  # type: ignore[attr-defined]
    return _svg(fig)
