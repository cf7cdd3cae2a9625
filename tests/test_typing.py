"""The type checker and the linter are part of the suite: ``mypy`` (configured in
pyproject.toml, over ``src``) and ``ruff check`` must report nothing, so a change that breaks
a type (for instance an algorithm whose signature no longer matches the registry's
``Algorithm`` protocol) fails the tests instead of waiting for someone to run the tools.

``ruff`` runs in the default suite (about a second). ``mypy`` from a cold cache takes 20-30 s
of CPU, a sixth of the default suite's three-minute budget, so it runs with ``pytest -m slow``
(run it before every commit that touches ``src``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


@pytest.mark.slow
def test_mypy_is_clean(tmp_path: Path) -> None:
    pytest.importorskip("mypy", reason="mypy is in the test extra: pip install '.[test]'")
    done = _run("mypy", "--cache-dir", str(tmp_path / "mypy-cache"))
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_is_clean() -> None:
    pytest.importorskip("ruff", reason="ruff is in the test extra: pip install '.[test]'")
    done = _run("ruff", "check", "src", "tests", "benchmarks")
    assert done.returncode == 0, done.stdout + done.stderr
