"""Run many ``kerckhoffs`` commands without paying an interpreter start for each.

Why: the README test runs about 40 commands; started one by one, each costs ~0.7 s of CPU in
interpreter start and imports, a sixth of the default suite's CPU budget. Here one server
process imports numpy, pandas, pyarrow, :mod:`kerckhoffs.cli` (what the ``kerckhoffs``
console script imports before it does anything) and every other kerckhoffs module (what the
commands import lazily) once, then *forks* a child per command. The
child changes to the command's folder, points file descriptors 1 and 2 at files, and calls
``kerckhoffs.cli.run(argv)``, the function the console script's ``main`` calls. So every
command still runs in a process of its own, with a clean copy of the imported state. (The
first README command runs through the real console script, so the lazy imports are still
exercised from a cold start.)

The client (:class:`WarmCli`) sends one JSON line per command and reads one back. Anything
that is not a single ``kerckhoffs`` invocation (pipes, redirections, ``{ ...; }``) is left to
``bash`` by the caller; :func:`argv_of` says which is which.

Run as a script, this module is the server.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

SHELL_SYNTAX = set("|&;<>(){}$`*?[]\\\"'")
"""Characters that make a command a shell program rather than one ``kerckhoffs`` call."""


TYPER_PARSE_IMPORTS = (
    "typer._adapters",
    "typer._click.decorators",
    "pydantic",
    "pydantic.type_adapter",
    "pydantic.json_schema",
    "importlib.metadata",
    "email.message",
    "rich.table",
    "rich.padding",
    "rich.box",
    "rich._emoji_codes",
)
"""Modules typer imports lazily while it parses arguments (typer 0.29: pydantic coerces
every value); the server imports them once so that the children do not."""


OPENDP_IMPORTS = ("opendp.prelude",)
"""What the DP release code imports lazily on its first OpenDP call."""


def argv_of(command: str) -> list[str] | None:
    """The arguments of a plain ``kerckhoffs ARGS  # comment`` command, else ``None``."""
    code = command.partition(" #")[0].strip()
    if not code.startswith("kerckhoffs ") or SHELL_SYNTAX & set(code):
        return None
    words = shlex.split(code)
    return words[1:]


class WarmCli:
    """A running server; :meth:`run` runs one command, like ``subprocess.run``."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, __file__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )

    def run(self, argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
        """``kerckhoffs ARGV`` in ``cwd``, in a process of its own."""
        return subprocess.CompletedProcess(
            ["kerckhoffs", *argv], *self._ask({"argv": argv, "cwd": str(cwd)})
        )

    def python(self, code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        """``python -c CODE`` in ``cwd``, in a process of its own (the modules already
        imported, ``__name__ == "__main__"``)."""
        return subprocess.CompletedProcess(
            ["python", "-c", code], *self._ask({"python": code, "cwd": str(cwd)})
        )

    def _ask(self, request: dict[str, object]) -> tuple[int, str, str]:
        """Send one request; (exit code, stdout, stderr) of the child that ran it."""
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(json.dumps(request) + "\n")
        self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError("the warm kerckhoffs server died")
        done = json.loads(line)
        return int(done["code"]), str(done["stdout"]), str(done["stderr"])

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        self._proc.wait(timeout=30)


def _child(request: dict[str, object], out_path: str, err_path: str) -> None:
    """In the forked child: run the command (or the Python code) with stdout/stderr on files,
    then exit."""
    code = 70
    cwd = str(request["cwd"])
    try:
        os.chdir(cwd)
        for fd, path in ((1, out_path), (2, err_path)):
            f = os.open(path, os.O_WRONLY | os.O_TRUNC)
            os.dup2(f, fd)
            os.close(f)
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        try:
            if "python" in request:
                sys.argv = ["-c"]
                exec(compile(str(request["python"]), "<string>", "exec"), {"__name__": "__main__"})
                code = 0
            else:
                argv = [str(a) for a in request["argv"]]  # type: ignore[attr-defined]
                sys.argv = ["kerckhoffs", *argv]
                from kerckhoffs.cli import run

                code = run(argv)
        except SystemExit as exc:  # typer's usage errors and --help end this way, sys.exit too
            if exc.code is not None and not isinstance(exc.code, int):
                print(exc.code, file=sys.stderr)
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # a crash must show as a traceback, as the console script would
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


def _preload() -> None:
    """Import every kerckhoffs module (and so what they import: OpenDP, rich, Dask when
    installed) once in the server, so that no child pays for the lazy imports the commands
    make (~0.4 s each). A module whose optional dependency is missing is left to the child,
    which then reports it as the console script would."""
    import importlib
    import pkgutil

    import kerckhoffs

    for info in pkgutil.walk_packages(kerckhoffs.__path__, "kerckhoffs."):
        with contextlib.suppress(ImportError):
            importlib.import_module(info.name)
    # what the DP commands import on their first draw (lazily, inside the functions):
    # ``opendp.prelude`` imports OpenDP's extras, and with them scikit-learn, SciPy and JAX when
    # installed (the ``dp`` extra): ~2.5 s of CPU in every child that makes a DP release
    for name in OPENDP_IMPORTS:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    # what typer imports while it parses a command line (pydantic for coercing values, its
    # adapters, the rich tables of --help and of our own output): ~0.15 s in every child
    for name in TYPER_PARSE_IMPORTS:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def serve() -> None:
    """The server loop: one JSON request per line on stdin, one JSON answer per line."""
    import numpy  # noqa: F401
    import pandas  # noqa: F401
    import pyarrow
    import pyarrow.parquet  # noqa: F401

    import kerckhoffs.cli.app

    _preload()
    kerckhoffs.cli.app._command()  # typer's click command, built once here for every child
    answers = sys.stdout
    with tempfile.TemporaryDirectory() as tmp:
        out_path, err_path = os.path.join(tmp, "out"), os.path.join(tmp, "err")
        for line in sys.stdin:
            request = json.loads(line)
            for path in (out_path, err_path):
                open(path, "w").close()
            answers.flush()
            pid = os.fork()
            if pid == 0:
                _child(request, out_path, err_path)
            _, status = os.waitpid(pid, 0)
            code = os.waitstatus_to_exitcode(status)
            with open(out_path, encoding="utf-8", errors="replace") as f:
                stdout = f.read()
            with open(err_path, encoding="utf-8", errors="replace") as f:
                stderr = f.read()
            answers.write(json.dumps({"code": code, "stdout": stdout, "stderr": stderr}) + "\n")
            answers.flush()


if __name__ == "__main__":
    serve()
