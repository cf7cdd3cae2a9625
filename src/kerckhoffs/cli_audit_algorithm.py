"""The ``audit-algorithm`` command: is an anonymization algorithm itself safe against an
adversary who knows it? Random-worlds audit on random small tables (paper 000, Definition 5).
"""

from __future__ import annotations

from typing import Annotated

import numpy as np
import typer
from rich.console import Console
from rich.progress import Progress, TextColumn, TimeElapsedColumn

from kerckhoffs.errors import InputError
from kerckhoffs.models import parse_model

out = Console(highlight=False)

MODEL_HELP = (
    "Privacy model to check; repeat for several. k=5, l=3 (frequency l-diversity), "
    "distinct-l=3, entropy-l=2.5, recursive-cl=C,L, t=0.2, alpha-k=0.5,5, m=3."
)


def audit_algorithm(
    name: Annotated[str, typer.Argument(help="Algorithm name (see `kerckhoffs algorithms`).")],
    rows: Annotated[int, typer.Option(help="Rows of each random table (about 10 at most).")] = 8,
    trials: Annotated[int, typer.Option(help="How many random tables to audit.")] = 200,
    seed: Annotated[int, typer.Option(help="Seed of the table generator.")] = 0,
    model: Annotated[
        list[str] | None,
        typer.Option("--model", "-m", help=MODEL_HELP + " Default: l=2 (k=3, m=2 for MASK)."),
    ] = None,
    sa_values: Annotated[
        int, typer.Option("--sa-values", help="Distinct SA values the tables draw from.")
    ] = 4,
    option: Annotated[
        list[str] | None,
        typer.Option("--option", "-O", help="Algorithm option KEY=VALUE; repeat for several."),
    ] = None,
) -> None:
    """Random-worlds audit (paper 000, Definition 5) of an algorithm on random small tables:
    how many releases change a row's SA posterior once the adversary knows the algorithm.
    Exit code 1 when some table violates."""
    from rich.progress import BarColumn, MofNCompleteColumn

    from kerckhoffs.algorithms import get
    from kerckhoffs.attacks.random_worlds import fuzz
    from kerckhoffs.cli import _parse_options

    info = get(name)
    if model is None:
        model = ["l=2"] if "LDiversity" in info.models else ["k=3", "m=2"]
    models = [parse_model(m) for m in model]
    if not 1 <= rows <= 12:
        raise InputError(f"--rows {rows}: the auditor enumerates worlds; use 1..12 rows")
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=out,
        transient=True,
    ) as progress:
        task = progress.add_task(f"auditing {info.name}", total=trials)
        results = fuzz(
            info.name,
            models,
            trials=trials,
            rows=rows,
            n_sa=sa_values,
            seed=seed,
            options=_parse_options(option or []),
            progress=lambda i: progress.update(task, completed=i),
        )
    audited = [t for t in results if t.audit is not None]
    bad = [t for t in audited if t.audit is not None and t.audit.violates]
    not_asap = sum(1 for t in bad if t.audit is not None and not t.audit.asap)
    not_div = sum(1 for t in bad if t.audit is not None and not t.audit.smart_l_diverse)
    refused = sum(1 for t in results if t.skipped and t.skipped.startswith("refused"))
    large = sum(1 for t in results if t.skipped and t.skipped.startswith("too large"))
    params = ", ".join(m.parameter for m in models)
    out.print(
        f"{info.name} ({params}): {len(bad)} of {len(audited)} audited tables violate "
        f"(ASAP fails on {not_asap}, l-diversity in the smart view on {not_div}); "
        f"{refused} refused by the algorithm, {large} too large to enumerate"
    )
    if bad:
        worst = min(bad, key=lambda t: (t.table.n, t.audit.naive_count if t.audit else 0))
        assert worst.audit is not None
        rel = worst.audit.release
        frame = worst.table.to_frame()
        frame.insert(0, "row", np.arange(1, worst.table.n + 1))
        frame["group"] = rel.partition.group
        if rel.perturbed.any():
            frame["published"] = worst.table.decode_sa(np.asarray(rel.sa_published))
        out.print(f"smallest violating table ({worst.table.n} rows):")
        out.print(frame.to_string(index=False))
        labels = [str(v) for v in worst.table.sa_column.labels.tolist()]
        out.print(worst.audit.describe(labels))
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add the command to the main app."""
    app.command("audit-algorithm")(audit_algorithm)
