"""The ``kerckhoffs`` application: the typer app every command module registers on, and
:func:`run`, which turns whatever goes wrong into one ``error:`` line and an exit code.

Every problem with the input (missing file, wrong delimiter, a value missing from a
hierarchy, impossible parameters) is one line on stderr starting with ``error:`` and exit
code 2, with no output file left behind. ``check`` exits 1 when a model is violated, so it can
gate a pipeline.
"""

from __future__ import annotations

import functools
import os
import sys
import traceback
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
from kerckhoffs.cli.output import fail, fail_os_error, out, reflow_help
from kerckhoffs.errors import ArgumentError, KerckhoffsError, NothingReleased
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
    little memory.

    Whatever goes wrong ends in one line on stderr starting with ``error:``, never a
    traceback (``KERCKHOFFS_TRACEBACK=1`` shows it for internal errors, to report them).
    """
    try:
        rv = _command()(args=list(args), prog_name="kerckhoffs", standalone_mode=False)
    except ArgumentError as exc:  # name the parameter as typed: --sa-values, --option
        return _fail(exc.spelled(f"--{exc.parameter.replace('_', '-')}"))
    except NothingReleased as exc:  # a verdict (paper 002's φ), not bad input
        return _fail(exc.cli_message, NothingReleased.exit_code)
    except KerckhoffsError as exc:
        return _fail(exc.cli_message)
    except typer.TyperException as exc:  # usage: a missing or unknown option, a bad value
        message = exc.format_message()
        if not message:  # no arguments at all: the help was shown
            return 0
        ctx = getattr(exc, "ctx", None)
        where = f" (see: {ctx.command_path} --help)" if ctx is not None else ""
        return _fail(message + where, getattr(exc, "exit_code", 2) or 2)
    except typer.Abort:
        return _fail("aborted", 1)
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
    return _fail(
        "out of memory: this machine could not hold the computation; run it where more "
        "memory is free, or on a smaller input",
        3,
    )


def _internal_error(exc: Exception) -> int:
    """A bug: say so in one line (the traceback with ``KERCKHOFFS_TRACEBACK=1``)."""
    if os.environ.get("KERCKHOFFS_TRACEBACK"):
        traceback.print_exc()
    return _fail(
        f"internal error ({type(exc).__name__}: {exc}); this is a bug in kerckhoffs, "
        "please report it (KERCKHOFFS_TRACEBACK=1 shows the traceback)",
        3,
    )


def _fail(message: str, code: int = 2) -> int:
    return fail(message, code)


def main() -> None:
    """Console entry point."""
    sys.exit(run(sys.argv[1:]))


if __name__ == "__main__":
    main()
