"""The ``audit-algorithm`` command: is an anonymization algorithm itself safe against an
adversary who knows it? Every audit that applies, on random tables (paper 000, Definition 5
and Theorem 5.3); the library decides (:mod:`kerckhoffs.audits.algorithm`), this
module parses the arguments and prints the report.
"""

from __future__ import annotations

from typing import Annotated

import typer

from kerckhoffs.cli.options import parse_options
from kerckhoffs.cli.output import MODEL_HELP, out, progress_bar


def audit_algorithm(
    name: Annotated[str, typer.Argument(help="Algorithm name (see `kerckhoffs algorithms`).")],
    rows: Annotated[int, typer.Option(help="Rows of each random table (1..12).")] = 8,
    trials: Annotated[int, typer.Option(help="How many random tables to audit.")] = 200,
    seed: Annotated[int, typer.Option(help="Seed of the table generator.")] = 0,
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model",
            "-m",
            help=MODEL_HELP + " Default: l=2 (k=3, m=2 for MASK, k=3 for k-only algorithms).",
        ),
    ] = None,
    sa_values: Annotated[
        int, typer.Option("--sa-values", help="Distinct SA values the tables draw from (1..26).")
    ] = 4,
    option: Annotated[
        list[str] | None,
        typer.Option("--option", "-O", help="Algorithm option KEY=VALUE; repeat for several."),
    ] = None,
    known_seed: Annotated[
        int | None,
        typer.Option(
            "--known-seed",
            help="Audit an adversary who knows the algorithm's seed (random worlds re-runs "
            "it with this seed instead of enumerating its random choices).",
        ),
    ] = None,
    flow_rows: Annotated[
        int | None,
        typer.Option(
            "--flow-rows",
            help="Rows of the larger generated table the information-flow audit also "
            "checks (0: none; default: kerckhoffs.audits.algorithm.DEFAULT_FLOW_ROWS, "
            "2,000).",
        ),
    ] = None,
) -> None:
    """Audit an algorithm with every audit that applies, on random tables: random worlds
    (paper 000, Definition 5: does knowing the algorithm change a row's SA posterior?) and
    information flow (Theorem 5.3: does it read SA statistics the release does not show?).
    One line per audit, saying where an audit cannot see a kind of leak. Exit code 1 when
    some audit finds a violation."""
    from kerckhoffs.algorithms.registry import lookup
    from kerckhoffs.audits.algorithm import DEFAULT_FLOW_ROWS
    from kerckhoffs.audits.algorithm import audit_algorithm as run_audit
    from kerckhoffs.models import parse_model

    models = [parse_model(m) for m in model] if model else None
    info = lookup(name)  # an unknown name: the audit says so, naming the known ones
    options = parse_options(option or [], info.option_specs if info is not None else ())
    with progress_bar(transient=True) as progress:
        task = progress.add_task(f"auditing {name}", total=trials if trials > 0 else None)
        report = run_audit(
            name,
            models,
            rows=rows,
            trials=trials,
            sa_values=sa_values,
            seed=seed,
            known_seed=known_seed,
            options=options,
            flow_rows=DEFAULT_FLOW_ROWS if flow_rows is None else flow_rows,
            progress=lambda i: progress.update(task, completed=i),
        )
    out.print(report.describe(), soft_wrap=True, markup=False)
    if report.violates:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add the command to the main app."""
    app.command("audit-algorithm")(audit_algorithm)
