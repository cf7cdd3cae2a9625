"""Two configurations side by side: the numbers their reports hold (computed by the library,
looked up here by key, never recomputed) and a picture of re-identification risk against
information loss for every finished run."""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from typing import Any

from kerckhoffs.webapp.workflow import RunResult

ROWS: tuple[tuple[str, str, bool], ...] = (
    ("release.groups", "groups published", False),
    ("measure.k", "k (smallest group)", False),
    ("measure.l", "l (frequency l-diversity)", False),
    ("measure.t", "t (largest distance to the table's SA distribution)", False),
    ("risk.prosecutor_highest", "prosecutor risk, highest", True),
    ("risk.prosecutor_average", "prosecutor risk, average", True),
    ("risk.prosecutor_at_risk", "records at risk (prosecutor)", True),
    ("risk.journalist_highest", "journalist risk, highest", True),
    ("risk.marketer", "marketer risk", True),
    ("risk.sample_uniques", "sample uniques", True),
    ("utility.ncp", "information loss (NCP, all QIs)", True),
    ("dp.epsilon", "epsilon spent", False),
)
"""The rows of the comparison: a report key, its label, whether it is a share (shown as %)."""


def shown(value: object, share: bool) -> str:
    """A number as the page shows it (a share as a percentage, four significant digits)."""
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    number = float(value)  # type: ignore[arg-type]
    if share:
        return f"{100 * number:.4g} %"
    return f"{number:.4g}"


def table(a: RunResult, b: RunResult) -> list[tuple[str, str, str]]:
    """``(label, a's value, b's value)`` for every row either report has, then each QI's
    information loss, then the verdicts of both."""
    va, vb = a.values(), b.values()
    rows = [
        (label, shown(va.get(key), share), shown(vb.get(key), share))
        for key, label, share in ROWS
        if key in va or key in vb
    ]
    for key in sorted({k for k in (*va, *vb) if k.startswith("utility.ncp.")}):
        label = f"information loss of {key.removeprefix('utility.ncp.')}"
        rows.append((label, shown(va.get(key), True), shown(vb.get(key), True)))
    da, db = dict(a.verdicts()), dict(b.verdicts())
    asked = dict.fromkeys([*da, *db])
    rows += [(label, da.get(label, "not asked"), db.get(label, "not asked")) for label in asked]
    return rows


def risk_utility_svg(runs: Sequence[tuple[int, RunResult]], marked: Sequence[int]) -> str:
    """Inline SVG: each finished run (numbered) at its information loss (x) and its average
    prosecutor risk (y); the two compared drawn larger. Text drawn as paths (no font needed)."""
    import matplotlib
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure

    # a Figure of its own, not pyplot's global state: a run's report may be plotting in
    # another thread meanwhile
    fig = Figure(figsize=(5.2, 3.0))
    FigureCanvasSVG(fig)
    ax = fig.subplots()
    for number, run in runs:
        values = run.values()
        x, y = values.get("utility.ncp"), values.get("risk.prosecutor_average")
        if not isinstance(x, int | float) or not isinstance(y, int | float):
            continue
        big = number in marked
        ax.scatter([x], [y], s=70 if big else 25, color="#b3261e" if big else "#5f6b7a")
        ax.annotate(f"#{number}", (x, y), textcoords="offset points", xytext=(6, 4), fontsize=8)
    ax.set_xlabel("information loss (NCP)", fontsize=9)
    ax.set_ylabel("average prosecutor risk", fontsize=9)
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.tick_params(labelsize=8)
    buf = io.StringIO()
    no_meta = {"Creator": None, "Date": None, "Format": None, "Type": None}
    style: Any = {"svg.fonttype": "path", "svg.hashsalt": "kerckhoffs-app"}
    with matplotlib.rc_context(style):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata=no_meta)
    text = buf.getvalue()
    text = text[text.index("<svg") :]
    return re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", text, count=3)
