"""``kerckhoffs anonymize`` in its plain form without building the typer application.

Building the application imports every command module, and typer then builds a pydantic
validator for each of the command's 22 parameters before it runs: together about 0.3 s of
CPU on every run, a tenth of anonymizing a million rows (``benchmarks/bench_cli_floor.py``).

:func:`run` takes the command only in a plain form whose every value typer would pass on
unchanged: one data file and the options ``-s/--schema``, ``-a/--algorithm``, ``-m/--model``,
``-o/--out``, ``--seed`` (decimal digits), ``--scheme``, ``-O/--option``, ``--format``,
``--sep``, ``--overwrite`` and ``--include-other``, each value a separate argument or joined
to a long option by ``=``, no value empty or starting with ``-``, no single-valued option
given twice. It then runs the same :func:`kerckhoffs.cli.anonymize_run.in_memory` the typer
command runs, under the same error handling (:func:`kerckhoffs.cli.output.exit_code`), so
the lines printed, the files written and the exit code are the same. Anything else (help, a
missing option, a Dask option, an option it does not know) returns None before doing
anything, and the full application runs from the start: typer's usage errors stay the only
ones.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kerckhoffs.cli.anonymize_run import Arguments

VALUED = {
    "-s": "schema",
    "--schema": "schema",
    "-a": "algorithm",
    "--algorithm": "algorithm",
    "-m": "model",
    "--model": "model",
    "-o": "out_dir",
    "--out": "out_dir",
    "--seed": "seed",
    "--scheme": "scheme",
    "-O": "option",
    "--option": "option",
    "--format": "fmt",
    "--sep": "sep",
}
"""The options with a value the light form takes, and the parameter each sets."""

REPEATED = frozenset({"model", "option", "fmt"})
"""The parameters given once per use of their option (a list, in order)."""

FLAGS = {"--overwrite": "overwrite", "--include-other": "include_other"}
"""The flags the light form takes."""

REQUIRED = ("schema", "algorithm", "model", "out_dir")

_SEED = re.compile(r"[0-9]{1,18}")
"""A seed as typer reads it unchanged (an int of at most 18 decimal digits)."""


def parse_args(args: Sequence[str]) -> Arguments | None:
    """The :class:`~kerckhoffs.cli.anonymize_run.Arguments` of ``anonymize ARGS`` in its plain
    form (see the module docstring), or None for any other form."""
    if not args or args[0] != "anonymize":
        return None
    given: dict[str, Any] = {}
    data: str | None = None
    rest = list(args[1:])
    while rest:
        token = rest.pop(0)
        option, eq, joined = token.partition("=")
        if token in FLAGS:
            if FLAGS[token] in given:
                return None
            given[FLAGS[token]] = True
            continue
        if token in VALUED:
            option, value = token, rest.pop(0) if rest else ""
        elif eq and option.startswith("--") and option in VALUED:
            value = joined
        elif token.startswith("-") or data is not None or not token:
            return None
        else:
            data = token
            continue
        name = VALUED[option]
        if not value or value.startswith("-"):
            return None
        if name in REPEATED:
            given.setdefault(name, []).append(value)
        elif name in given:
            return None
        else:
            given[name] = value
    if data is None or any(name not in given for name in REQUIRED):
        return None
    if "seed" in given:
        if not _SEED.fullmatch(given["seed"]):
            return None
        given["seed"] = int(given["seed"])
    from kerckhoffs.cli.anonymize_run import Arguments

    for name in ("schema", "out_dir"):
        given[name] = Path(given[name])
    return Arguments(data=Path(data), **given)


def run(args: Sequence[str]) -> int | None:
    """The exit code of ``kerckhoffs ARGS`` when the light form takes it (see the module
    docstring), else None with nothing done."""
    arguments = parse_args(args)
    if arguments is None:
        return None
    from kerckhoffs.cli.anonymize_run import in_memory
    from kerckhoffs.cli.output import exit_code

    return exit_code(lambda: in_memory(arguments))


__all__ = ["FLAGS", "REPEATED", "REQUIRED", "VALUED", "parse_args", "run"]
