"""The ``budget`` command: how much privacy loss each person has paid across releases.

``kerckhoffs budget LEDGER`` reads a ledger (:mod:`kerckhoffs.dp.ledger`, written by
``kerckhoffs anonymize --ledger LEDGER --budget B``) and prints the releases it holds with
their neighbour notions, the distribution of every person's total loss under basic
composition (the sum of the (epsilon, delta) of the releases holding them, converted to the
ledger's notion), a histogram of the spent epsilon, and the worst-off people. Totals that
overflow a float read ``inf``, never ``nan``. With ``--budget B`` it also says how many
people are at or over it and how much the median person has left. A missing, damaged or
edited ledger is one line on stderr and exit code 2.

The output names people by their ids: it is for the publisher, like the ledger itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kerckhoffs.cli.output import fit_words, out, table, value

if TYPE_CHECKING:  # numpy and pandas are imported where used (`kerckhoffs --help` needs none)
    import pandas as pd

QUANTILES = (0.0, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0)
MAX_DISTINCT = 12
"""Up to this many distinct totals, the histogram lists each; beyond, ten equal-width bins."""


def _num(x: float) -> str:
    return f"{x:.6g}"


def epsilon_histogram(spent: pd.Series) -> list[tuple[str, int]]:
    """(label, people) rows: each distinct total when there are few (totals are sums of a
    few releases' epsilons, so usually there are), else ten equal-width bins."""
    import numpy as np

    values = spent.to_numpy(dtype=np.float64)
    distinct, counts = np.unique(values, return_counts=True)
    if distinct.size <= MAX_DISTINCT:
        return [(_num(v), int(c)) for v, c in zip(distinct, counts, strict=True)]
    finite = values[np.isfinite(values)]
    rows = []
    if finite.size:
        edges = np.linspace(finite.min(), finite.max(), 11)
        counts, _ = np.histogram(finite, bins=edges)
        rows = [
            (f"{'[' if i == 0 else '('}{_num(edges[i])}, {_num(edges[i + 1])}]", int(c))
            for i, c in enumerate(counts)
        ]
    if finite.size < values.size:  # totals beyond a float: over any budget
        rows.append(("inf", int(values.size - finite.size)))
    return rows


def quantile(values: pd.Series, p: float) -> float:
    """The ``p`` quantile with linear interpolation, ``inf`` when the upper neighbour is
    ``inf`` (pandas would give ``nan`` between two infinite totals)."""
    import numpy as np

    v = np.sort(values.to_numpy(dtype=np.float64))
    h = (v.size - 1) * p
    lo, hi = int(np.floor(h)), int(np.ceil(h))
    if np.isinf(v[hi]):
        return float("inf")
    return float(v[lo] + (v[hi] - v[lo]) * (h - lo))


MEASURES = {"max-divergence": "pure", "zero-concentrated": "zCDP", "approximate": "(eps, delta)"}
"""How ``kerckhoffs budget`` names each entry's measure."""


def budget(
    ledger: Annotated[Path, typer.Argument(help="The ledger file (JSON) to read.")],
    worst: Annotated[int, typer.Option(help="How many of the worst-off people to list.")] = 10,
    limit: Annotated[
        str | None,
        typer.Option(
            "--budget",
            help="A per-person budget EPSILON or EPSILON,DELTA to compare the totals with.",
        ),
    ] = None,
) -> None:
    """Show the privacy loss each person has paid across the releases of a ledger.

    Totals are by basic composition (the sum of epsilons and of deltas over the releases a
    person is in) or, with a --budget whose delta is above 0, the smaller of that and zCDP
    composition (the zCDP releases' rho added, converted at the budget's delta). Lists the
    releases (with their measure and rows per person), quantiles and a histogram of the
    totals, and the worst-off people.
    """
    from kerckhoffs.dp.composition import parse_budget
    from kerckhoffs.dp.ledger import Ledger
    from kerckhoffs.errors import InputError

    if worst < 0:
        raise InputError(f"--worst {worst}: must be >= 0")
    b = parse_budget(limit) if limit is not None else None
    led = Ledger.load(ledger)
    spent = led.spent(b[1] if b is not None and b[1] > 0 else None)
    rel = led.releases()
    zcdp = bool((rel["measure"] == "zero-concentrated").any()) if len(rel) else False
    how = (
        f"the smaller of basic and zCDP composition (rho converted at delta {b[1]:g})"
        if zcdp and b is not None and b[1] > 0
        else "basic composition (a person's loss is the sum over the releases holding them)"
        + ("; give --budget EPS,DELTA to compose the zCDP releases by rho" if zcdp else "")
    )
    out.print(
        f"ledger {ledger}: {len(rel):,} release(s), {len(spent):,} people; budget under "
        f"{led.neighbours} neighbours; {how}",
        soft_wrap=True,
    )
    if len(rel) == 0:
        out.print("no release recorded yet")
        return
    t = table(
        "release", "epsilon", "delta", "neighbours", "measure", "rows/person", "people", "rows",
        "recorded (UTC)", "digest",
    )  # fmt: skip
    for r in rel.itertuples(index=False):
        digest = str(r.digest)[:19] if r.digest else "-"
        measure = MEASURES.get(str(r.measure), str(r.measure))
        if r.rho is not None and r.rho == r.rho:
            measure += f" rho={_num(r.rho)}"
        t.add_row(
            value(r.name), _num(r.epsilon), _num(r.delta), str(r.neighbours), measure,
            str(r.contributions), f"{r.people:,}", f"{r.rows:,}",
            str(r.recorded)[:16].replace("T", " "), digest,
        )  # fmt: skip
    out.print(fit_words(t, out.width))
    _say_conversions(rel, led.neighbours)
    _say_missing(rel)

    q = table("quantile", "epsilon", "delta", "releases")
    for p in QUANTILES:
        name = {0.0: "min", 0.5: "median", 1.0: "max"}.get(p, f"{p:.0%}")
        q.add_row(
            name,
            _num(quantile(spent["epsilon"], p)),
            _num(quantile(spent["delta"], p)),
            _num(quantile(spent["releases"], p)),
        )
    out.print("spent per person:")
    out.print(q)

    h = table("epsilon spent", "people", "share")
    for label, count in epsilon_histogram(spent["epsilon"]):
        h.add_row(label, f"{count:,}", f"{count / len(spent):.1%}")
    out.print(h)

    if worst > 0:
        order = spent.sort_values(["epsilon", "delta", "releases"], ascending=False, kind="stable")
        w = table("person", "epsilon", "delta", "releases")
        for person, row in order.head(worst).iterrows():
            w.add_row(
                value(person), _num(row["epsilon"]), _num(row["delta"]), str(int(row["releases"]))
            )
        out.print(f"worst-off {min(worst, len(order))} of {len(order):,} people:")
        out.print(w)

    if b is not None:
        from kerckhoffs.dp.composition import TOLERANCE

        eps_b, delta_b = b
        over = (spent["epsilon"] > eps_b * (1 + TOLERANCE)) | (
            spent["delta"] > delta_b * (1 + TOLERANCE)
        )
        left = (eps_b - spent["epsilon"]).clip(lower=0)  # inf spent: -inf, clipped to 0
        out.print(
            f"budget epsilon={eps_b:g}, delta={delta_b:g}: {int(over.sum()):,} people over, "
            f"{int((~over).sum()):,} within; epsilon left: median {_num(float(left.median()))}, "
            f"min {_num(float(left.min()))}",
            soft_wrap=True,
        )
        if over.any():
            raise typer.Exit(1)


def _say_conversions(releases: pd.DataFrame, notion: str) -> None:
    """Say how entries under another notion, or none recorded, are charged."""
    from kerckhoffs.dp.composition import ADD_REMOVE, SUBSTITUTION, UNKNOWN

    unknown = int((releases["neighbours"] == UNKNOWN).sum())
    converted = int((releases["neighbours"] == ADD_REMOVE).sum())
    if notion == SUBSTITUTION and converted:
        out.print(
            f"note: {converted} add-remove release(s) charged under substitution as 2 epsilon "
            "and (1 + e^epsilon) delta per row (a substitution is a removal and an addition)",
            soft_wrap=True,
        )
    if unknown:
        out.print(
            f"note: {unknown} release(s) recorded by an older kerckhoffs without their "
            "neighbour notion: charged conservatively, as add-remove releases converted to "
            "substitution (2 epsilon and (1 + e^epsilon) delta per row), which may count "
            "up to twice their true cost",
            soft_wrap=True,
        )


def _say_missing(releases: pd.DataFrame) -> None:
    """Say which recorded releases are not at their path with their digest: a charge without
    a release (the run was stopped between charging and publishing) or a release moved or
    replaced since. Their charges count all the same."""
    from kerckhoffs.dp.publish import release_digest

    gone = [
        str(r.name)
        for r in releases.itertuples(index=False)
        if r.path and r.digest and release_digest(str(r.path)) != r.digest
    ]
    if gone:
        shown = ", ".join(gone[:5]) + (f" and {len(gone) - 5} more" if len(gone) > 5 else "")
        out.print(
            f"note: {len(gone)} recorded release(s) not found at their path with their digest "
            f"({shown}): charged but never published (the run was stopped in between), or "
            "moved or replaced since; their charges count all the same",
            soft_wrap=True,
        )


def register(app: typer.Typer) -> None:
    """Add the command to the main app."""
    app.command("budget")(budget)
