"""What a release report is made of: named numbers, verdict lines, plots and notes, grouped in
sections. Every number carries the key it was computed under, so a reader (or a test) can
check each one against the library function that made it
(:func:`kerckhoffs.reporting.build_report`).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Figure:
    """One number shown: ``key`` (stable, e.g. ``risk.prosecutor_highest``), its label, the
    value as computed, and how it is shown (``share``: as a percentage)."""

    key: str
    label: str
    value: float | int | str
    share: bool = False


@dataclass(frozen=True)
class Verdict:
    """A verdict line exactly as the library states it (``SAFE: ...``, ``ok`` ...)."""

    key: str
    label: str
    text: str


@dataclass(frozen=True)
class Section:
    """A titled part of the report: a short explanation, numbers, verdicts, plots (inline
    SVG made by :mod:`kerckhoffs.reporting.plots`) and notes on what could not be computed."""

    title: str
    intro: str = ""
    figures: tuple[Figure, ...] = ()
    verdicts: tuple[Verdict, ...] = ()
    plots: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    table: tuple[tuple[str | Figure, ...], ...] = field(default=())
    """Rows of cells, the first the header (e.g. the digests of the seal, one row per
    marginal): text, or a :class:`Figure` shown as a number with its key."""

    def numbers(self) -> list[Figure]:
        """Every number the section shows: its figures and the figures in its table."""
        cells = [c for row in self.table for c in row if isinstance(c, Figure)]
        return [*self.figures, *cells]
