"""A release report as a whole: its sections (:mod:`kerckhoffs.reporting.model`), the page
they make (:mod:`kerckhoffs.reporting.html`) and the numbers it shows by key."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kerckhoffs.errors import InputError
from kerckhoffs.reporting.html import render
from kerckhoffs.reporting.model import Section


@dataclass(frozen=True)
class Report:
    """A release report: one self-contained HTML page (:meth:`html`), its numbers by key
    (:meth:`values`)."""

    title: str
    sections: tuple[Section, ...]

    def html(self) -> str:
        """The report as one HTML page: styles inline, plots inline SVG, no script and no
        reference to anything outside the file (readable offline, printable to PDF)."""
        return render(self.title, self.sections)

    def values(self) -> dict[str, float | int | str]:
        """Every number shown, by key."""
        return {f.key: f.value for s in self.sections for f in s.numbers()}

    def write(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """Write :meth:`html` to ``path`` (refused if it exists, unless ``overwrite``)."""
        out = Path(path)
        if out.exists() and not overwrite:
            raise InputError(f"{out} exists (pass overwrite=True / --overwrite to replace it)")
        if out.exists() and out.is_dir():
            raise InputError(f"{out} is a directory: give a file name such as report.html")
        out.write_text(self.html(), encoding="utf-8")
        return out
