"""What the command line prints: the consoles, tables that wrap instead of cutting words,
and error lines that stay one line.

Without a terminal (a pipe, a CI log) rich assumes 80 columns; a table column that does not fit
folds its text onto more lines (``overflow="fold"``) instead of ending in an ellipsis, so key
words such as "algorithm-safe" are never cut.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from rich.console import Console

from kerckhoffs.model_syntax import model_help

if TYPE_CHECKING:  # imported where used: `kerckhoffs --help` loads neither numpy nor rich.progress
    from rich.progress import Progress
    from rich.table import Table

    from kerckhoffs.models.base import ModelResult
    from kerckhoffs.release import Release

out = Console(highlight=False)
err = Console(stderr=True, highlight=False)

MODEL_HELP = model_help()

MAX_QUOTED = 80
"""A value quoted in an error line is cut to this many characters (a 200 KB cell stays a
readable line)."""
MAX_LINE = 600

_QUOTED = re.compile(r"""(?P<q>['"])(?P<body>[^'"\n]{""" + str(MAX_QUOTED + 1) + r""",})(?P=q)""")


def progress_bar(*, transient: bool = False) -> Progress:
    """A bar with done/total and the elapsed time, on stdout; off in a pipe or a file (no bar
    and no blank line there)."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=out,
        transient=transient,
        disable=not out.is_terminal,
    )


def table(*columns: str, wrap_first: bool = False) -> Table:
    """A rich table whose cells fold onto more lines rather than being cut.

    The first column (a name) is kept on one line unless ``wrap_first``.
    """
    from rich.table import Table

    t = Table()
    for i, name in enumerate(columns):
        if i == 0 and not wrap_first:
            t.add_column(name, overflow="fold", no_wrap=True)
        else:
            t.add_column(name, overflow="fold")
    return t


def fit_words(t: Table, width: int, longest: int = 16) -> Table:
    """Lay out ``t`` so that text breaks between words, not inside one.

    When every cell fits on one line in ``width`` columns nothing changes. Otherwise the
    widest columns are narrowed, none below its longest word (at most ``longest``), until the
    last column, which takes the rest of the line, has room for its own longest word.
    """
    texts = [[str(c.header), *(str(x) for x in c._cells)] for c in t.columns]
    full = [max((len(x) for x in col), default=1) for col in texts]
    room = width - (3 * len(full) + 1)
    if sum(full) <= room:
        return t
    word = [
        min(full[i], longest, max((len(w) for x in col for w in x.split()), default=1))
        for i, col in enumerate(texts)
    ]
    widths = full[:-1]
    need = room - word[-1]
    while sum(widths) > need:
        wide = max(range(len(widths)), key=lambda i: widths[i] - word[i])
        if widths[wide] <= word[wide]:
            break  # every column is at its longest word: the line must overflow
        widths[wide] -= 1
    for column, width in zip(t.columns, widths, strict=False):
        column.width = width
    t.columns[-1].ratio = 1
    return t


def print_results(results: list[ModelResult]) -> None:
    """One table row per model: required, achieved, violating groups and the verdict."""
    from kerckhoffs.models.base import format_number

    t = table("model", "required", "achieved", "violating groups", "verdict")
    for r in results:
        t.add_row(
            r.model,
            r.parameter + (f" {r.scope}" if r.scope else ""),
            format_number(r.achieved) + (f" ({r.detail})" if r.detail else ""),
            f"{r.violating:,} of {r.group_ok.size:,}" if r.per_group else "— (release-wide)",
            "[green]ok[/]" if r.satisfied else "[red]violated[/]",
        )
    out.print(fit_words(t, out.width))


def print_singletons(release: Release, as_it_stands: bool = False) -> None:
    """One line when some rows are published in a group of their own (a group's cells and
    sensitive value are then one person's record, whatever the models say of the subset they
    bound): how many, of how many. ``as_it_stands``: a data file checked as it stands, which
    nobody published yet."""
    from rich.markup import escape

    from kerckhoffs.models.scope import singletons
    from kerckhoffs.release import Scheme

    if release.scheme == Scheme.DP:
        return
    alone = singletons(release.partition.group)
    if alone:
        out.print(
            f"[yellow]{alone:,} of {counted(release.table.n, 'row')} "
            f"{'is' if alone == 1 else 'are'} "
            + ("in a group of one as it stands" if as_it_stands else "published in a group of one")
            + ": the QI cells and "
            f"{escape(release.table.sa_name)} value of each are one person's record[/]"
        )


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun, singular for one: ``1 group``, ``7,192 groups``."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def one_line(message: str) -> str:
    """``message`` as a single line: newlines folded, long quoted values and the line cut."""
    text = " ".join(str(message).split())
    text = _QUOTED.sub(
        lambda m: f"{m['q']}{m['body'][: MAX_QUOTED - 1]}…{m['q']} ({len(m['body']):,} chars)",
        text,
    )
    if len(text) > MAX_LINE:
        text = text[: MAX_LINE - 1] + "…"
    return text


__all__ = [
    "MODEL_HELP",
    "counted",
    "err",
    "fit_words",
    "one_line",
    "out",
    "print_results",
    "print_singletons",
    "progress_bar",
    "table",
]
