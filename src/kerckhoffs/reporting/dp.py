"""The differential-privacy section of a release report: the loss the release spends (epsilon,
delta, and rho for a zCDP release: what a ledger charges, never a ledger's contents), its
mechanism and noise, the accuracy it states, and its published counts against their intervals.

Every number comes from the release's own noise record (:class:`~kerckhoffs.dp.mechanisms.
NoiseSpec`, as release.json states it) or from :mod:`kerckhoffs.dp.accuracy`; the intervals are
the published ``*_lower``/``*_upper`` columns. A DP release does not publish its true counts or
its number of rows, and the section shows neither.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs.errors import KerckhoffsError
from kerckhoffs.release import BaseRelease, Scheme
from kerckhoffs.reporting import plots
from kerckhoffs.reporting.model import Figure, Section, Verdict

INTERVAL_COLUMNS = (
    ("count", "count_lower", "count_upper", "noisy counts"),
    ("estimate_count", "estimate_lower", "estimate_upper", "estimated records per cell"),
    ("count", "lower", "upper", "noisy counts"),
)
"""The published value and interval columns of each DP table: dp-histogram and dp-marginals
(``count_*``), dp-rr (the estimate from the responses, ``estimate_*``), dp-synthetic's
measured marginals (``lower``/``upper``)."""


def _published_counts(release: BaseRelease) -> pd.DataFrame | None:
    """The published table that carries the intervals: the count table of a DP release, the
    measured marginals of a synthetic one."""
    if release.scheme == Scheme.SYNTHETIC:
        return release.marginals()  # type: ignore[attr-defined]
    if release.scheme == Scheme.DP:
        return release.to_pandas()  # type: ignore[attr-defined]
    return None


def _interval_columns(df: pd.DataFrame) -> tuple[str, str, str, str] | None:
    return next((c for c in INTERVAL_COLUMNS if set(c[:3]) <= set(df.columns)), None)


def _loss_figures(release: BaseRelease, noise: Any) -> list[Figure]:
    loss = release.privacy_loss()
    if loss is None:
        raise KerckhoffsError("a DP release without its privacy loss")
    figs = [
        Figure("dp.epsilon", "epsilon this release spends", float(loss[0])),
        Figure("dp.delta", "delta", float(loss[1])),
        Figure("dp.measure", "guarantee proved under", str(noise.measure.value)),
    ]
    if noise.rho is not None:
        figs.append(Figure("dp.rho", "zCDP rho", float(noise.rho)))
    figs += [
        Figure("dp.neighbours", "neighbouring tables differ by", str(noise.neighbours.value)),
        Figure("dp.contributions", "rows per person the loss covers", int(noise.contributions)),
        Figure("dp.mechanism", "mechanism", str(noise.mechanism.value)),
    ]
    keep = next((p["keep_probability"] for p in noise.parts if "keep_probability" in p), None)
    if keep is not None:  # randomized response: no additive noise, a keep probability
        figs.append(Figure("dp.keep_probability", "keep probability", float(keep)))
    else:
        figs += [
            Figure("dp.scale", "noise scale", float(noise.scale)),
            Figure("dp.sensitivity", f"sensitivity ({noise.norm})", float(noise.sensitivity)),
        ]
    figs.append(Figure("dp.estimator", "published counts are", str(noise.estimator)))
    chosen = getattr(release, "levels_chosen", None)
    if chosen:
        figs.append(Figure("dp.levels", "hierarchy levels (chosen with DP)", chosen["levels"]))
        figs.append(
            Figure(
                "dp.levels_epsilon",
                "of it, spent choosing the levels",
                float(chosen["privacy_map"]),
            )
        )
    return figs


def _parts_table(noise: Any) -> tuple[tuple[str | Figure, ...], ...]:
    """One row per measured marginal (dp-marginals, dp-synthetic): its cells, noise scale and
    95 % half-width as the release records them."""
    from kerckhoffs.dp.accuracy import half_width

    parts = [p for p in noise.parts if p.get("attributes")]
    if not parts:
        return ()
    head: tuple[str | Figure, ...] = ("marginal", "cells", "noise scale", "95 % half-width")
    synthetic = any("l1_synthetic_vs_noisy" in p for p in parts)
    if synthetic:
        head += ("synthetic rows' L1 distance from it",)
    rows: list[tuple[str | Figure, ...]] = [head]
    for p in parts:
        name = "+".join(p["attributes"])
        key = f"dp.part.{name}"
        scale = float(p.get("noise_scale", p.get("scale", noise.scale)))
        width = p.get("interval_half_width")
        if width is None:
            width = half_width(noise.mechanism.value, scale)
        row: tuple[str | Figure, ...] = (
            name,
            Figure(f"{key}.cells", "cells", int(p["cells"])),
            Figure(f"{key}.scale", "noise scale", scale),
            Figure(f"{key}.half_width", "95 % half-width", float(width)),
        )
        if synthetic:
            row += (Figure(f"{key}.l1", "L1", float(p["l1_synthetic_vs_noisy"])),)
        rows.append(row)
    return tuple(rows)


def dp_section(release: BaseRelease) -> Section:
    """A differentially private release: its loss, mechanism and noise, and intervals."""
    from kerckhoffs.dp.accuracy import accuracy_line

    noise = release.noise  # type: ignore[attr-defined]
    figs = _loss_figures(release, noise)
    verdicts = []
    if release.scheme == Scheme.DP:  # a synthetic release states its marginals' intervals
        line = accuracy_line(noise.estimator, noise.accuracy)
        verdicts.append(Verdict("dp.accuracy", "stated accuracy", line))
    pics: list[str] = []
    df = _published_counts(release)
    cols = _interval_columns(df) if df is not None else None
    if df is not None and cols is not None and len(df):
        value, lo, hi, what = cols
        centre, lower, upper = (df[c].to_numpy(dtype=float) for c in (value, lo, hi))
        half = (upper - lower) / 2
        figs += [
            Figure("dp.cells", "cells published", len(df)),
            Figure("dp.half_width", "95 % interval half-width (median)", float(np.median(half))),
            Figure("dp.half_width_max", "95 % interval half-width (largest)", float(half.max())),
        ]
        pics.append(
            plots.intervals(
                centre,
                lower,
                upper,
                title=f"Published {what} and their 95 % intervals",
                ylabel=what,
            )
        )
    notes = []
    if release.scheme == Scheme.SYNTHETIC:
        notes.append(
            "the intervals are those of the measured marginals the synthetic rows were fitted "
            "on; the rows themselves are the model's draw, and their number is its estimate"
        )
    return Section(
        "Differential privacy",
        "The privacy loss this release spends (what a privacy ledger charges for it), the "
        "noise added, and how far each published count may be from the truth.",
        tuple(figs),
        tuple(verdicts),
        plots=tuple(pics),
        notes=tuple(notes),
        table=_parts_table(noise),
    )
