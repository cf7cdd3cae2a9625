"""``kerckhoffs report``: one self-contained HTML page about a release, for the people who
decide whether it may be published (:func:`kerckhoffs.reporting.build_report` makes it; this
module parses the options and shows progress)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kerckhoffs.cli.attack import KnowledgeOpt, OtherOpt, SchemaOpt
from kerckhoffs.cli.output import err, out
from kerckhoffs.errors import InputError


def report(
    release: Annotated[Path, typer.Argument(help="The release directory to report on.")],
    out_file: Annotated[
        Path, typer.Option("--out", "-o", help="The HTML file to write (e.g. report.html).")
    ],
    knowledge: KnowledgeOpt = None,
    other: OtherOpt = None,
    schema: SchemaOpt = None,
    threshold: Annotated[
        float,
        typer.Option(
            "--threshold",
            help="A record is at risk when its re-identification risk is above this.",
            min=0.0,
            max=1.0,
        ),
    ] = 0.2,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace OUT if it exists.")
    ] = False,
) -> None:
    """Write a release report: what was published, group sizes and diversity,
    re-identification risk (prosecutor, journalist with a population, marketer), utility,
    every attack that applies with its verdict, DP noise and budget, and the release's seal.
    One HTML file that needs nothing else to view or print."""
    from kerckhoffs.reporting import build_report

    if not release.is_dir():
        raise InputError(f"{release}: not a release directory")
    if out_file.exists() and not overwrite:
        raise InputError(f"{out_file} exists (pass --overwrite to replace it)")
    if out_file.is_dir():
        raise InputError(f"{out_file} is a directory: give a file name such as report.html")
    if not out_file.parent.is_dir():
        raise InputError(f"--out {out_file}: no such directory {out_file.parent}")
    for p in other or []:  # refused before any work, as `kerckhoffs audit` does
        if not p.exists():
            raise InputError(f"release not found: {p}")
    if knowledge is not None and schema is None:
        raise InputError(
            f"--knowledge {knowledge}: needs --schema (the release's schema: its kinds and "
            "hierarchies say which population values each published cell covers)"
        )

    def progress(step: str, done: float) -> None:
        err.print(f"report: {step} ({round(100 * done)} %)", highlight=False)

    rep = build_report(
        release,
        knowledge=knowledge,
        others=list(other or []),
        threshold=threshold,
        schema=schema,
        progress=progress,
    )
    rep.write(out_file, overwrite=True)
    audit = next((v for s in rep.sections for v in s.verdicts if v.key == "audit"), None)
    out.print(f"wrote {out_file}: {rep.title}", soft_wrap=True)
    if audit is not None:
        out.print(audit.text, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add the command to the main app."""
    app.command("report")(report)
