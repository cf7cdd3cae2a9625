"""What the command line prints: the consoles, tables that wrap instead of cutting words,
and error lines that stay one line.

**Every value is shown as it is.** Cells, column names, ids and paths come from the user's
files; a value such as ``[/bold]``, ``[red]P1`` or ``:lock:`` must neither be read as rich
markup (a crash, or the value shown altered) nor as an emoji code, and a terminal escape
sequence in a cell (``ESC[31m``, a cursor move, a right-to-left override) must not reach the
terminal. So the consoles read no markup and no emoji codes, and every string they render has
its control characters made visible (``\x1b``, ``\u202e``): :func:`visible`, applied in
:meth:`OutputConsole.render_str`, through which rich passes every printed string and every
table cell. A styled piece (a red "violated") is a :func:`styled` text, never markup.

**Names and verdicts are never cut.** Without a terminal (a pipe, a CI log) rich assumes 80
columns, and a terminal may be narrower. Every table printed goes through :func:`fit_table`:
at its natural width when that fits; else with columns narrowed, none below its longest word
(a name column not at all), so text breaks between words; and when even that does not fit
or would make each row several lines tall, as one short paragraph per row (its first cell,
then ``header: value`` pairs), which wraps between words at any width.
"""

from __future__ import annotations

import contextlib
import re
import textwrap
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from kerckhoffs.model_syntax import model_help

if TYPE_CHECKING:  # imported where used: `kerckhoffs --help` loads neither numpy nor rich.progress
    from rich.console import RenderableType
    from rich.progress import Progress
    from rich.table import Table

    from kerckhoffs.models.base import ModelResult
    from kerckhoffs.release import Release

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""Characters a terminal acts on instead of showing: the C0 and C1 controls but tab and
newline (ESC starts an escape sequence, CR returns the cursor), DEL, and the bidirectional
marks, overrides and isolates that reorder what is shown (the "Trojan Source" characters)."""
_CONTROL_ALL = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""The same with tab and newline: for one data value, which must stay on its line."""


def _code(m: re.Match[str]) -> str:
    c = ord(m[0])
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def visible(text: str, *, keep_lines: bool = True) -> str:
    r"""``text`` with every control character written as its Python escape (ESC as ``\x1b``,
    a right-to-left override as ``\u202e``), so that printing it shows it and cannot move
    the cursor, recolour or reorder the terminal. Tabs and newlines are kept unless
    ``keep_lines`` is false (for one data value, which must stay on its line).

    >>> visible("\x1b[31mP1")
    '\\x1b[31mP1'
    >>> visible("a\tb\nc", keep_lines=False)
    'a\\x09b\\x0ac'
    """
    return (_CONTROL if keep_lines else _CONTROL_ALL).sub(_code, text)


def value(x: object) -> str:
    """One data value (a cell, an id, a column name) as shown: control characters visible,
    tabs and newlines included."""
    return visible(str(x), keep_lines=False)


class OutputConsole(Console):
    """A rich console that shows text as it is: no markup, no emoji codes, no highlighting,
    control characters visible, and every table laid out by :func:`fit_table`."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("highlight", False)
        super().__init__(markup=False, emoji=False, **kwargs)

    def render_str(self, text: str, **kwargs: Any) -> Text:
        """Every string rich renders (printed, or a table cell) passes here."""
        kwargs["markup"] = False
        kwargs["emoji"] = False
        return super().render_str(visible(text), **kwargs)

    def print(self, *objects: Any, sep: str = " ", **kwargs: Any) -> None:
        """Print as rich does, but a table is laid out by :func:`fit_table` and text wraps
        between words only (:class:`Words`): a word longer than the line (a path) stays whole
        on a line of its own, never folded into pieces that cannot be copied."""
        from rich.table import Table

        laid = [fit_table(o, self.width) if isinstance(o, Table) else o for o in objects]
        if not kwargs.get("soft_wrap") and laid and all(isinstance(o, str | Text) for o in laid):
            parts = [o if isinstance(o, Text) else self.render_str(str(o)) for o in laid]
            laid = [Words(Text(sep).join(parts))]
            kwargs.setdefault("crop", False)
        super().print(*laid, sep=sep, **kwargs)


class Words:
    """A text wrapped between words only: a word longer than the line stays whole (the line
    overflows; a terminal shows the rest on its next line, and copying it gives the word),
    where rich would fold it into pieces."""

    def __init__(self, text: Text) -> None:
        self.text = text

    def __rich_console__(self, console: Console, options: Any) -> Iterator[Text]:
        width = max(options.max_width, 1)
        for line in self.text.split(allow_blank=True):
            if "\t" in line.plain:
                line.expand_tabs()
            for piece in line.divide(_breaks(line.plain, width)):
                piece.rstrip()
                piece.no_wrap, piece.overflow = True, "ignore"  # laid out here, kept whole
                yield piece


def _breaks(text: str, width: int) -> list[int]:
    """Where the lines of ``text`` wrapped at ``width`` start (but the first): before a word
    that would pass the width, never inside one."""
    from rich.cells import cell_len

    breaks: list[int] = []
    start = 0
    for m in re.finditer(r"\S+", text):
        if m.start() > start and cell_len(text[start : m.end()]) > width:
            breaks.append(m.start())
            start = m.start()
    return breaks


out = OutputConsole()
err = OutputConsole(stderr=True)


def styled(*parts: str | tuple[str, str]) -> Text:
    """A line of plain pieces and ``(text, style)`` pieces (``("violated", "red")``), each shown
    as it is: the way to colour part of a line (the consoles read no markup)."""
    return Text.assemble(
        *(visible(p) if isinstance(p, str) else (visible(p[0]), p[1]) for p in parts)
    )


MODEL_HELP = model_help()

MAX_QUOTED = 80
"""A value quoted in an error line is cut to this many characters (a 200 KB cell stays a
readable line)."""
MAX_LINE = 600

_QUOTED = re.compile(r"""(?P<q>['"])(?P<body>[^'"\n]*)(?P=q)""")
"""A quoted value; short ones are matched too, so that the scan steps over them and never
takes the closing quote of one value and the opening quote of the next for a long value."""


def progress_bar(*, transient: bool = False) -> Progress:
    """A bar with done/total and the elapsed time, on stdout; off in a pipe or a file (no bar
    and no blank line there)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    return Progress(
        _description(),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=out,
        transient=transient,
        disable=not out.is_terminal,
    )


@contextlib.contextmanager
def working(description: str) -> Iterator[None]:
    """A spinner with the elapsed time while a step runs, cleared when it ends; nothing at all
    in a pipe or a file (a transient display there leaves blank lines)."""
    if not out.is_terminal:  # nothing to show: rich's progress display is not even loaded
        yield
        return
    from rich.progress import Progress, SpinnerColumn, TimeElapsedColumn

    with Progress(
        SpinnerColumn(),
        _description(),
        TimeElapsedColumn(),
        console=out,
        transient=True,
    ) as progress:
        progress.add_task(description, total=None)
        yield


def _description() -> Any:
    """The progress column showing a task's description as it is (it may hold a path)."""
    from rich.progress import Task, TextColumn

    class Description(TextColumn):
        def render(self, task: Task) -> Text:
            return Text(visible(task.description))

    return Description("{task.description}", markup=False)


def table(*columns: str, wrap_first: bool = False) -> Table:
    """A rich table whose cells fold onto more lines rather than being cut (printed on
    :data:`out`, it is laid out by :func:`fit_table`).

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


ROW_LINES = 2.5
"""A table whose rows, narrowed to the width, would take more lines than this on average is
printed as paragraphs when they are shorter (a summary column narrowed to a word or two a
line makes a table of 200 lines for 25 algorithms)."""
INDENT = 4
"""The indent of a row's further lines in the paragraph layout."""


def _plain(cell: object) -> str:
    return cell.plain if isinstance(cell, Text) else visible(str(cell))


def _lines(text: str, width: int) -> int:
    """Lines ``text`` takes wrapped between words at ``width`` (a word longer folds)."""
    return sum(
        max(1, len(textwrap.wrap(line, max(width, 1), break_on_hyphens=False)))
        for line in text.splitlines() or [""]
    )


def fit_table(t: Table, width: int) -> RenderableType:
    """``t`` laid out in ``width`` columns without cutting a word: the table at its natural
    width if that fits, else with columns narrowed (none below its longest word; a ``no_wrap``
    column not at all), else, when that does not fit or its rows would take more than
    :data:`ROW_LINES` lines each, one paragraph per row (:func:`paragraphs`).
    Column widths are set explicitly, so rich never narrows them further."""
    from rich.cells import cell_len

    cols = t.columns
    if not cols:
        return t
    texts = [[_plain(c.header), *(_plain(x) for x in c._cells)] for c in cols]
    full = [max(cell_len(ln) for x in col for ln in x.splitlines() or [""]) for col in texts]
    word = [
        f if c.no_wrap else max((cell_len(w) for x in col for w in x.split()), default=1)
        for c, f, col in zip(cols, full, texts, strict=True)
    ]
    word = [max(w, 1) for w in word]
    _, right, _, left = t.padding
    extra = (len(cols) + 1 if t.box and t.show_edge else len(cols) - 1 if t.box else 0) + len(
        cols
    ) * (left + right)
    room = width - extra
    if sum(full) <= room:
        widths = full
    elif sum(word) <= room:
        widths = list(word)
        spare = room - sum(widths)
        while spare > 0:  # the column with most text still folded gets the next column
            i = max(range(len(cols)), key=lambda j: full[j] - widths[j])
            if widths[i] >= full[i]:
                break
            widths[i] += 1
            spare -= 1
        rows = len(texts[0]) - 1
        body = sum(
            max(_lines(col[r], w) for col, w in zip(texts, widths, strict=True))
            for r in range(1, rows + 1)
        )
        head = 4 + max(_lines(col[0], w) for col, w in zip(texts, widths, strict=True))
        if body > ROW_LINES * rows and _paragraph_height(texts, width) < head + body:
            return paragraphs(t)
    else:
        return paragraphs(t)
    for column, w in zip(cols, widths, strict=True):
        column.width = max(w, 1)
        column.min_width = column.max_width = None
        column.ratio = None
    return t


def _paragraph_height(texts: list[list[str]], width: int) -> int:
    rows = len(texts[0]) - 1
    return sum(
        _lines(
            texts[0][r] + "  " + "; ".join(f"{col[0]}: {col[r]}" for col in texts[1:]),
            width - INDENT,
        )
        for r in range(1, rows + 1)
    )


def paragraphs(t: Table) -> RenderableType:
    """``t`` as one paragraph per row: the first cell (in bold), then the other columns as
    ``header: value`` pairs, its further lines indented, wrapping between words at any
    width."""
    from rich.console import Group

    def as_text(cell: object) -> Text:
        return cell.copy() if isinstance(cell, Text) else Text(visible(str(cell)))

    cols = t.columns
    blocks: list[RenderableType] = []
    for r in range(t.row_count):
        text = as_text(cols[0]._cells[r])
        text.stylize("bold")
        for i, c in enumerate(cols[1:]):
            text.append("; " if i else "  ")
            text.append(f"{_plain(c.header)}: ")
            text.append_text(as_text(c._cells[r]))
        blocks.append(_Hanging(text))
    return Group(*blocks)


class _Hanging:
    """A text wrapped between words (a word longer than a line folds), its lines after the
    first indented by :data:`INDENT` (rich's Padding would also pad every line with spaces
    to the full width)."""

    def __init__(self, text: Text) -> None:
        self.text = text
        self.text.overflow = "fold"

    def __rich_console__(self, console: Console, options: Any) -> Iterator[Text]:
        for i, line in enumerate(self.text.wrap(console, max(options.max_width - INDENT, 1))):
            line.rstrip()
            yield Text(" " * INDENT) + line if i else line


def fit_words(t: Table, width: int, longest: int = 0) -> RenderableType:
    """The former name of :func:`fit_table` (``longest`` is ignored: no column is narrowed
    below its longest word). Printing a table on :data:`out` lays it out already."""
    return fit_table(t, width)


def print_results(results: list[ModelResult]) -> None:
    """One table row per model: required, achieved, violating groups and the verdict."""
    t = table("model", "required", "achieved", "violating groups", "verdict")
    for r in results:
        t.add_row(
            r.model,
            r.parameter + (f" {r.scope}" if r.scope else ""),
            r.achieved_text + (f" ({r.detail})" if r.detail else ""),
            f"{r.violating:,} of {r.group_ok.size:,}" if r.per_group else "— (release-wide)",
            styled(("ok", "green")) if r.satisfied else styled(("violated", "red")),
        )
    out.print(t)


def print_singletons(release: Release, as_it_stands: bool = False) -> None:
    """One line when some rows are published in a group of their own (a group's cells and
    sensitive value are then one person's record, whatever the models say of the subset they
    bound): how many, of how many. ``as_it_stands``: a data file checked as it stands, which
    nobody published yet."""
    from kerckhoffs.models.scope import singletons
    from kerckhoffs.release import Scheme

    if release.scheme in (Scheme.DP, Scheme.SYNTHETIC):
        return
    alone = singletons(release.partition.group)
    print_alone(alone, release.table.n, release.table.sa_name, as_it_stands)


def print_alone(alone: int, rows: int, sa_name: str, as_it_stands: bool = False) -> None:
    """The line of :func:`print_singletons`, from the count of rows alone in their group."""
    if alone:
        where = "in a group of one as it stands" if as_it_stands else "published in a group of one"
        text = (
            f"{alone:,} of {counted(rows, 'row')} {'is' if alone == 1 else 'are'} "
            f"{where}: the QI cells and {sa_name} value of each are one person's record"
        )
        out.print(styled((text, "yellow")))


def fail(message: str, code: int = 2) -> int:
    """Print ``message`` as the one ``error:`` line on stderr; return the exit ``code``."""
    import sys

    print(f"error: {one_line(message)}", file=sys.stderr)
    return code


def fail_os_error(exc: OSError) -> int:
    """The error line of a failed read or write (the disk filled, a file vanished, a
    permission was lost, the pipe closed): the file, then the system's words; exit 2."""
    where = f"{exc.filename}: " if exc.filename else ""
    return fail(f"{where}{exc.strerror or exc}")


def exit_code(call: Callable[[], object], passthrough: tuple[type[BaseException], ...] = ()) -> int:
    """Run a command's ``call`` and return its exit code: 0 done (or the int it returns), 1 a
    privacy verdict (a violated model, an unsafe release), 2 bad input or usage, 3 an
    internal error or too little memory. Whatever goes wrong ends in one line on stderr
    starting with ``error:``, never a traceback (``KERCKHOFFS_TRACEBACK=1`` shows it for
    internal errors, to report them). Exceptions of the ``passthrough`` types are raised
    again, for the caller to word (typer's usage errors: :func:`kerckhoffs.cli.app.run`)."""
    from kerckhoffs.errors import ArgumentError, KerckhoffsError, NothingReleased

    try:
        rv = call()
    except passthrough:
        raise
    except ArgumentError as exc:  # name the parameter as typed: --sa-values, --option
        return fail(exc.spelled(f"--{exc.parameter.replace('_', '-')}"))
    except NothingReleased as exc:  # a verdict (paper 002's φ), not bad input
        return fail(exc.cli_message, NothingReleased.exit_code)
    except KerckhoffsError as exc:
        return fail(exc.cli_message)
    except KeyboardInterrupt:
        return 130
    except OSError as exc:  # the disk filled, a file vanished, a permission was lost
        return fail_os_error(exc)
    except MemoryError:  # the machine, not the input nor the code: say so, not "a bug"
        return _out_of_memory()
    except RuntimeError as exc:
        if "can't start new thread" in str(exc):  # no memory left for a thread's stack
            return _out_of_memory()
        return _internal_error(exc)
    except Exception as exc:  # a bug: say so in one line
        return _internal_error(exc)
    return rv if isinstance(rv, int) else 0


def _out_of_memory() -> int:
    return fail(
        "out of memory: this machine could not hold the computation; run it where more "
        "memory is free, or on a smaller input",
        3,
    )


def _internal_error(exc: Exception) -> int:
    """A bug: say so in one line (the traceback with ``KERCKHOFFS_TRACEBACK=1``)."""
    import os
    import traceback

    if os.environ.get("KERCKHOFFS_TRACEBACK"):
        traceback.print_exc()
    return fail(
        f"internal error ({type(exc).__name__}: {exc}); this is a bug in kerckhoffs, "
        "please report it (KERCKHOFFS_TRACEBACK=1 shows the traceback)",
        3,
    )


def reflow_help(text: str) -> str:
    """A command's help with each paragraph's lines joined into one (the terminal wraps it):
    paragraphs stay apart, and a paragraph whose lines are indented or start a list item
    (``- ``, ``* ``) keeps its lines. Typer shows a docstring's line breaks as they are.

    >>> reflow_help("Show the loss a\nperson paid.\n\nTotals are\nsums.")
    'Show the loss a person paid.\n\nTotals are sums.'
    """
    out = []
    for para in text.split("\n\n"):
        lines = para.split("\n")
        kept = any(ln.startswith((" ", "\t", "- ", "* ")) for ln in lines)
        out.append(para if kept else " ".join(ln.strip() for ln in lines if ln.strip()))
    return "\n\n".join(out)


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun, singular for one: ``1 group``, ``7,192 groups``."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def one_line(message: str) -> str:
    """``message`` as a single line: newlines folded, control characters made visible
    (:func:`visible`), long quoted values and the line cut."""
    text = visible(" ".join(str(message).split()))
    text = _QUOTED.sub(
        lambda m: (
            f"{m['q']}{m['body'][: MAX_QUOTED - 1]}…{m['q']} ({len(m['body']):,} chars)"
            if len(m["body"]) > MAX_QUOTED
            else m[0]
        ),
        text,
    )
    if len(text) > MAX_LINE:
        text = text[: MAX_LINE - 1] + "…"
    return text


__all__ = [
    "MODEL_HELP",
    "OutputConsole",
    "Words",
    "counted",
    "err",
    "fail",
    "fail_os_error",
    "fit_table",
    "fit_words",
    "one_line",
    "out",
    "paragraphs",
    "print_alone",
    "print_results",
    "print_singletons",
    "progress_bar",
    "reflow_help",
    "styled",
    "table",
    "value",
    "visible",
    "working",
]
