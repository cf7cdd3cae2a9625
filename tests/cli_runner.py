"""Running the ``kerckhoffs`` command in-process from tests."""

from __future__ import annotations

import re
import sys

import pytest

from kerckhoffs.cli import main

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def run_cli(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: object
) -> tuple[int, str, str]:
    """Run ``kerckhoffs ARGS`` in-process; return (exit code, stdout, stderr) without colour
    codes."""
    monkeypatch.setattr(sys, "argv", ["kerckhoffs", *map(str, args)])
    with pytest.raises(SystemExit) as excinfo:
        main()
    out, err = capsys.readouterr()
    code = excinfo.value.code
    return (0 if code is None else int(code)), ANSI.sub("", out), ANSI.sub("", err)
