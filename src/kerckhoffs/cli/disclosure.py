"""The ``disclosure`` command: disclosure sets of a table's candidate generalizations and what
the naive, inclusive and exclusive publishers do with them (paper 002, Zhang, Wang, Jajodia
and Brodsky).

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

from kerckhoffs.cli.output import fit_words, out, styled
from kerckhoffs.cli.output import table as rich_table
from kerckhoffs.data.schema import Schema
from kerckhoffs.errors import InputError, ParameterError

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
    from kerckhoffs.algorithms.lattice import generalization_sequence
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
        enumerable(table, seq, limit)
    else:  # the first node alone first: building every node is slow on a large table
        nodes = generalization_sequence(table)
        enumerable(table, GeneralizationSequence.from_lattice(table, nodes[:1]), limit)
        seq = GeneralizationSequence.from_lattice(table, nodes)
    report(table, seq, check, limit)


def enumerable(table: Table, seq: GeneralizationSequence, limit: int) -> None:
    """Refuse in one line, before any work, a table whose report cannot be computed: the
    inclusive strategy always enumerates the first candidate's ``PER`` (its disclosure set),
    so when that has more than ``limit`` tables, so does the report."""
    from kerckhoffs.disclosure import magnitude, per_size, signature

    if not len(seq):
        return
    size = per_size(seq, 0, signature(seq, 0, table.sa, table.n_sa))
    if size > limit:
        raise ParameterError(
            f"disclosure: the first candidate ({seq.names[0]}) has {magnitude(size)} possible "
            f"tables, more than --limit {magnitude(limit)}, and the inclusive strategy "
            "enumerates them all: this report is for small tables (anonymize -a lattice-exclusive, "
            "or -a sequence -O disclosure=exclusive, decides large ones when the exact shortcut "
            "applies)"
        )


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
    from kerckhoffs.disclosure import magnitude

    results = outcomes(table, seq, check, limit)
    t = rich_table("candidate", "|PER|", "PER passes", "naive DS", "inclusive DS", "exclusive DS")
    steps: dict[int, dict[str, str | Text]] = {}
    for res in results:
        for s in res.steps:
            per: dict[str, str | Text] = {"per": magnitude(s.per_size), "pp": str(s.per_passes)}
            row = steps.setdefault(s.index, per)
            mark = ("passes", "") if s.passes else ("fails", "red")
            size = magnitude(s.disclosure_size)
            row[res.strategy] = styled(f"{size}, max {_share(max(s.max_share))} ", mark)
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
            magnitude(r.disclosure_size),
            _share(max(r.max_share) if r.max_share else None),
            "yes" if r.safe else styled(("no", "red")),
        )
    out.print(fit_words(o, out.width))


def register(app: typer.Typer) -> None:
    """Add the command to the main app."""
    app.command("disclosure")(disclosure)
