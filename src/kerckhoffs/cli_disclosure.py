"""The ``disclosure`` command: disclosure sets of a table's candidate generalizations and what
the naive, inclusive and exclusive publishers do with them (paper 002, Zhang, Wang, Jajodia
and Brodsky; spec ``exclusive.md``; issue 13 item 6).

``kerckhoffs disclosure TABLE --schema S --sequence seq.toml`` (the candidates as partitions
of the rows, ``examples/disclosure``) or ``--lattice`` (the lattice algorithm's candidates:
every node by ascending information loss), with ``--chk recursive-cl=2,2`` (any per-person
share rule: ``l=``, ``distinct-l=``, ``recursive-cl=``). Prints, per candidate the strategies
examined, ``|PER|``, the check on PER (the naive check), each strategy's disclosure-set size
and largest value share, then the three outcomes side by side. This reads the secret table:
its output is for the publisher, never for publication.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kerckhoffs.cli_output import fit_words, out, styled
from kerckhoffs.cli_output import table as rich_table
from kerckhoffs.data.schema import Schema
from kerckhoffs.errors import InputError

if TYPE_CHECKING:  # imported where used, so that `kerckhoffs --help` loads no pandas
    from rich.text import Text

    from kerckhoffs.data.table import Table
    from kerckhoffs.disclosure import Chk, GeneralizationSequence, Outcome


def disclosure(
    data: Annotated[Path, typer.Argument(help="The table (CSV).")],
    schema: Annotated[Path, typer.Option("--schema", "-s", help="Schema TOML.")],
    sequence: Annotated[
        Path | None,
        typer.Option(help="The candidate generalizations, best first (TOML, see examples)."),
    ] = None,
    lattice: Annotated[
        bool,
        typer.Option(
            "--lattice", help="Use the lattice algorithm's candidates (small tables only)."
        ),
    ] = False,
    chk: Annotated[
        str, typer.Option(help="The privacy check on a set of tables (a share-rule model).")
    ] = "recursive-cl=2,2",
    limit: Annotated[
        int, typer.Option(help="Largest set of possible tables enumerated.")
    ] = 1_000_000,
) -> None:
    """Disclosure sets and the naive / inclusive / exclusive outcomes (paper 002)."""
    from kerckhoffs.data.table import Table
    from kerckhoffs.disclosure import GeneralizationSequence, chk_from_model, read_sequence
    from kerckhoffs.models import parse_model

    if (sequence is None) == (not lattice):
        raise InputError("give the candidates with exactly one of --sequence FILE or --lattice")
    if limit < 1:
        raise InputError(f"--limit {limit}: must be at least 1")
    check = chk_from_model(parse_model(chk))
    if not data.is_file():
        raise InputError(f"table not found: {data}")
    table = Table.from_csv(data, Schema.from_toml(schema))
    if sequence is not None:
        seq = read_sequence(sequence, table.n)
    else:
        seq = GeneralizationSequence.from_lattice(table)
    report(table, seq, check, limit)


def outcomes(
    table: Table, seq: GeneralizationSequence, check: Chk, limit: int = 1_000_000
) -> tuple[Outcome, Outcome, Outcome]:
    """The naive, inclusive and exclusive outcomes on ``table``'s sensitive values."""
    from kerckhoffs.disclosure import exclusive, inclusive, naive

    sa = table.sa
    return (
        naive(seq, sa, check, limit=limit),
        inclusive(seq, sa, check, limit=limit),
        exclusive(seq, sa, check, limit=limit),
    )


def _share(x: Fraction | None) -> str:
    return "-" if x is None else f"{x} ({float(x):.3f})"


def report(table: Table, seq: GeneralizationSequence, check: Chk, limit: int) -> None:
    """Print the per-candidate table and the three outcomes."""
    results = outcomes(table, seq, check, limit)
    t = rich_table("candidate", "|PER|", "PER passes", "naive DS", "inclusive DS", "exclusive DS")
    steps: dict[int, dict[str, str | Text]] = {}
    for res in results:
        for s in res.steps:
            row = steps.setdefault(s.index, {"per": f"{s.per_size:,}", "pp": str(s.per_passes)})
            mark = ("passes", "") if s.passes else ("fails", "red")
            row[res.strategy] = styled(
                f"{s.disclosure_size:,}, max {_share(max(s.max_share))} ", mark
            )
    for i in sorted(steps):
        row = steps[i]
        t.add_row(
            seq.names[i],
            row["per"],
            row["pp"],
            *(row.get(k, "-") for k in ("naive", "inclusive", "exclusive")),
        )
    out.print(f"{table.n:,} rows, {len(seq)} candidates, check {check.name}")
    out.print(fit_words(t, out.width))
    o = rich_table("strategy", "releases", "disclosure set", "largest share", "safe")
    for r in results:
        o.add_row(
            r.strategy,
            seq.names[r.released] if r.released is not None else "nothing",
            f"{r.disclosure_size:,}",
            _share(max(r.max_share) if r.max_share else None),
            "yes" if r.safe else styled(("no", "red")),
        )
    out.print(fit_words(o, out.width))


def register(app: typer.Typer) -> None:
    """Add the command to the main app."""
    app.command("disclosure")(disclosure)
