"""The ``kerckhoffs`` application: the typer app every command module registers on, and
:func:`run`, which turns whatever goes wrong into one ``error:`` line and an exit code.

Every problem with the input (missing file, wrong delimiter, a value missing from a
hierarchy, impossible parameters) is one line on stderr starting with ``error:`` and exit
code 2, with no output file left behind. ``check`` exits 1 when a model is violated, so it can
gate a pipeline.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Sequence
from typing import Annotated

import typer

from kerckhoffs.cli import (
    algorithms,
    anonymize,
    attack,
    audit_algorithm,
    budget,
    check,
    datasets,
    demo,
    disclosure,
    hierarchy,
    report,
    reproduce,
    webapp,
)
from kerckhoffs.cli.output import exit_code, fail, out, reflow_help
from kerckhoffs.version import __version__

# numpy, pandas and the library are imported by the commands that use them, so that
# `kerckhoffs --help` (and a mistyped command) does not load them
# (`docs/theory/choices.md#performance`)

app = typer.Typer(
    name="kerckhoffs",
    help="Privacy-preserving data publishing that stays private when the adversary knows "
    "the algorithm.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        out.print(f"kerckhoffs {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    """Privacy-preserving data publishing that stays private when the adversary knows the
    algorithm."""


# the order of the commands in `kerckhoffs --help`
datasets.register(app)
check.register(app)
anonymize.register(app)
algorithms.register(app)
demo.register(app)
attack.register(app)
audit_algorithm.register(app)
reproduce.register(app)
disclosure.register(app)
budget.register(app)
report.register(app)
hierarchy.register(app)
webapp.register(app)


@functools.cache
def _command() -> Callable[..., object]:
    """The click command typer builds from :data:`app`, built once per process: building it
    evaluates every command's annotations (about 23 ms), which ``app(...)`` would redo on each
    :func:`run` of a process that runs many (the tests run about 400). Each command's help
    is reflowed (:func:`~kerckhoffs.cli.output.reflow_help`): the docstrings' line breaks
    would otherwise stay in the help, ragged at any width but theirs."""
    command = typer.main.get_command(app)
    _reflow(command)
    return command


def _reflow(command: object) -> None:
    """Reflow the help of ``command`` and of its subcommands, in place."""
    help_text = getattr(command, "help", None)
    if isinstance(help_text, str):
        command.help = reflow_help(help_text)  # type: ignore[attr-defined]
    for sub in (getattr(command, "commands", None) or {}).values():
        _reflow(sub)


def run(args: Sequence[str]) -> int:
    """Run ``kerckhoffs ARGS`` and return the exit code: 0 done, 1 a privacy verdict
    (a violated model, an unsafe release), 2 bad input or usage, 3 an internal error or too
    little memory (:func:`~kerckhoffs.cli.output.exit_code`; typer's usage errors here).

    Whatever goes wrong ends in one line on stderr starting with ``error:``, never a
    traceback (``KERCKHOFFS_TRACEBACK=1`` shows it for internal errors, to report them).
    """

    def call() -> object:
        return _command()(args=list(args), prog_name="kerckhoffs", standalone_mode=False)

    try:
        return exit_code(call, (typer.TyperException, typer.Abort))
    except typer.TyperException as exc:  # usage: a missing or unknown option, a bad value
        message = exc.format_message()
        if not message:  # no arguments at all: the help was shown
            return 0
        ctx = getattr(exc, "ctx", None)
        where = f" (see: {ctx.command_path} --help)" if ctx is not None else ""
        return fail(message + where, getattr(exc, "exit_code", 2) or 2)
    except typer.Abort:
        return fail("aborted", 1)


def main() -> None:
    """Console entry point."""
    sys.exit(run(sys.argv[1:]))


if __name__ == "__main__":
    main()
