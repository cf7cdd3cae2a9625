"""``kerckhoffs hierarchy``: build a generalization hierarchy and write it as an ARX CSV file.

``kerckhoffs hierarchy intervals DATA.csv --column age --widths 5,10,20 --out age.csv`` and the
same for ``quantiles``, ``masking``, ``grouping``, ``groups`` (explicit groups from a TOML file)
and ``dates``. The values come from a column of a data file or from ``--values a,b,c``. The
builders are the library's (:mod:`kerckhoffs.data.hierarchy_build`); this module reads the
values, parses the options, refuses an output it may not write (an existing file without
``--overwrite``, the input itself) and prints one line: the file and its nodes per level.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kerckhoffs.cli.output import out
from kerckhoffs.errors import InputError

if TYPE_CHECKING:  # imported where used, so that `kerckhoffs --help` loads no numpy
    from kerckhoffs.data.hierarchy import Hierarchy

hierarchy_app = typer.Typer(
    help="Build a generalization hierarchy (ARX CSV) from a column's values.",
    no_args_is_help=True,
)

Data = Annotated[Path | None, typer.Argument(help="Data file (CSV or Parquet) holding the column.")]
Column = Annotated[str | None, typer.Option("--column", "-c", help="Column of DATA.")]
Values = Annotated[
    str | None, typer.Option("--values", help="The values, comma-separated (instead of DATA).")
]
Out = Annotated[Path, typer.Option("--out", help="Hierarchy CSV file to write.")]
Overwrite = Annotated[bool, typer.Option(help="Replace --out if it exists.")]


def _split(text: str, option: str) -> list[str]:
    items = [t.strip() for t in text.split(",")]
    if not text.strip() or any(not t for t in items):
        raise InputError(f"{option} {text!r}: expected a comma-separated list such as 5,10,20")
    return items


def _ints(text: str, option: str) -> list[int]:
    try:
        return [int(t) for t in _split(text, option)]
    except ValueError:
        raise InputError(f"{option} {text!r}: expected whole numbers such as 5,10,20") from None


def _values(data: Path | None, column: str | None, values: str | None) -> list[object]:
    """The values a builder reads: a column of ``data`` (as text, missing cells dropped) or
    the ``--values`` list."""
    if values is not None:
        if data is not None or column is not None:
            raise InputError("give DATA with --column, or --values, not both")
        return list(_split(values, "--values"))
    if data is None or column is None:
        raise InputError("give DATA with --column COLUMN, or --values a,b,c")
    from kerckhoffs.data.io import read_table

    frame = read_table(data, columns=[column], text_columns=[column])
    if column not in frame.columns:
        raise InputError(f"{data}: no column {column!r}")
    return frame[column].dropna().tolist()


def _write(
    hierarchy: Hierarchy, out_file: Path, overwrite: bool, data: Path | None, name: str
) -> None:
    from kerckhoffs.data.hierarchy_build import write_csv
    from kerckhoffs.data.output import check_writable_file

    check_writable_file(out_file, overwrite=overwrite, protect=[data])
    write_csv(hierarchy, out_file, overwrite=overwrite)
    nodes = " > ".join(str(len(hierarchy.node_labels(j))) for j in range(hierarchy.height + 1))
    out.print(
        f"wrote {out_file}: {name} hierarchy of {len(hierarchy):,} values, nodes per level {nodes}"
    )


def _precheck(out_file: Path, overwrite: bool, data: Path | None) -> None:
    """Refuse an output that cannot be written before reading any data."""
    from kerckhoffs.data.output import check_writable_file

    check_writable_file(out_file, overwrite=overwrite, protect=[data])


def intervals(
    out_file: Out,
    data: Data = None,
    column: Column = None,
    values: Values = None,
    widths: Annotated[
        str, typer.Option(help="Interval widths per level, each a multiple of the one before.")
    ] = "5,10,20",
    start: Annotated[
        float | None, typer.Option(help="Where the intervals start (default 0).")
    ] = None,
    labels: Annotated[
        str, typer.Option(help="arx ([20, 25[) or inclusive ([20-24], whole numbers).")
    ] = "arx",
    overwrite: Overwrite = False,
) -> None:
    """Numbers into nested intervals of fixed widths, then *."""
    from kerckhoffs.data.hierarchy_build import intervals as build

    _precheck(out_file, overwrite, data)
    ws = _ints(widths, "--widths")
    h = build(_values(data, column, values), ws, start=start, label=labels, name=out_file.name)
    _write(h, out_file, overwrite, data, "interval")


def quantiles(
    out_file: Out,
    data: Data = None,
    column: Column = None,
    values: Values = None,
    levels: Annotated[str, typer.Option(help="Number of bins per level, decreasing.")] = "10,4,2",
    labels: Annotated[
        str, typer.Option(help="arx ([20, 25[) or inclusive ([20-24], whole numbers).")
    ] = "arx",
    overwrite: Overwrite = False,
) -> None:
    """Numbers into intervals holding about equal shares of the values (quantiles), then *.

    The bin edges are quantiles of the values read: a hierarchy built from the private table
    is a function of it. Build it from public data when that matters."""
    from kerckhoffs.data.hierarchy_build import quantile_intervals

    _precheck(out_file, overwrite, data)
    counts = _ints(levels, "--levels")
    h = quantile_intervals(_values(data, column, values), counts, label=labels, name=out_file.name)
    _write(h, out_file, overwrite, data, "quantile interval")


def masking(
    out_file: Out,
    data: Data = None,
    column: Column = None,
    values: Values = None,
    levels: Annotated[
        str | None,
        typer.Option(help="Characters masked per level, increasing (default 1,2,...)."),
    ] = None,
    char: Annotated[str, typer.Option(help="The masking character.")] = "*",
    align: Annotated[
        str, typer.Option(help="right: mask from the right, keep prefixes; left: keep suffixes.")
    ] = "right",
    pad: Annotated[
        str | None,
        typer.Option(help="Fill shorter codes with this character (default: refuse them)."),
    ] = None,
    keep_order: Annotated[
        bool, typer.Option("--keep-order", help="Keep the values' order (default: sorted).")
    ] = False,
    overwrite: Overwrite = False,
) -> None:
    """Codes masked one more character per level (02116, 0211*, 021**), then *."""
    from kerckhoffs.data.hierarchy_build import masking as build

    _precheck(out_file, overwrite, data)
    steps = None if levels is None else _ints(levels, "--levels")
    h = build(
        _values(data, column, values),
        levels=steps,
        char=char,
        align=align,
        pad=pad,
        sort=not keep_order,
        name=out_file.name,
    )
    _write(h, out_file, overwrite, data, "masking")


def grouping(
    out_file: Out,
    data: Data = None,
    column: Column = None,
    values: Values = None,
    order: Annotated[
        str | None,
        typer.Option(help="All categories in order, comma-separated (default: --values)."),
    ] = None,
    sizes: Annotated[
        str, typer.Option(help="Group sizes per level in values, each a multiple of the last.")
    ] = "2,4",
    labels: Annotated[str, typer.Option(help="bounds ([a, c]) or set ({a, b, c}).")] = "bounds",
    overwrite: Overwrite = False,
) -> None:
    """Ordered categories into consecutive groups of growing sizes, then *.

    --order lists every category in order; DATA's column (or --values) must hold no other."""
    from kerckhoffs.data.hierarchy_build import grouping as build

    _precheck(out_file, overwrite, data)
    group_sizes = [] if sizes.strip() == "" else _ints(sizes, "--sizes")
    if order is None:
        if values is None:
            raise InputError("grouping needs --order (every category, in order)")
        ordered = _split(values, "--values")
    else:
        ordered = _split(order, "--order")
        if data is not None or values is not None:
            known = set(ordered)
            seen = [str(v).strip() for v in _values(data, column, values)]
            absent = [v for v in dict.fromkeys(seen) if v not in known]
            if absent:
                raise InputError(f"value {absent[0]!r} of the data is not in --order")
    h = build(ordered, group_sizes, label=labels, name=out_file.name)
    _write(h, out_file, overwrite, data, "grouping")


def groups(
    out_file: Out,
    groups_file: Annotated[
        Path,
        typer.Option(
            "--groups",
            help="TOML: one table per level, bottom up, each 'Group = [members]'.",
        ),
    ],
    data: Data = None,
    column: Column = None,
    values: Values = None,
    overwrite: Overwrite = False,
) -> None:
    """Explicit groups per level from a TOML file (Flu and Bronchitis under Respiratory), then *.

    DATA's column (or --values), when given, must hold only values the groups list."""
    from kerckhoffs.data.hierarchy_build import grouping_by
    from kerckhoffs.data.io import load_toml
    from kerckhoffs.errors import HierarchyError

    _precheck(out_file, overwrite, data)
    spec = load_toml(groups_file, "groups file", HierarchyError)
    seen = None if data is None and values is None else _values(data, column, values)
    h = grouping_by(spec, values=seen, name=groups_file.name)
    _write(h, out_file, overwrite, data, "grouping")


def dates(
    out_file: Out,
    data: Data = None,
    column: Column = None,
    values: Values = None,
    levels: Annotated[
        str, typer.Option(help="Levels from month, quarter, year, decade, century.")
    ] = "month,year,decade",
    overwrite: Overwrite = False,
) -> None:
    """ISO dates (2024-03-15) into month, quarter, year, decade or century, then *."""
    from kerckhoffs.data.hierarchy_build import dates as build

    _precheck(out_file, overwrite, data)
    h = build(_values(data, column, values), _split(levels, "--levels"), name=out_file.name)
    _write(h, out_file, overwrite, data, "date")


def register(app: typer.Typer) -> None:
    for command in (intervals, quantiles, masking, grouping, groups, dates):
        hierarchy_app.command(command.__name__)(command)
    app.add_typer(hierarchy_app, name="hierarchy")
