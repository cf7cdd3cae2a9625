"""Isolated virtual environments for peer libraries used in benchmarks.

Why: some peer libraries we compare kerckhoffs against (e.g. pycanon) pin
exact, often old, versions of numpy/pandas/scipy.  Installing them into the
project's own environment would downgrade our dependencies, so each peer gets
its own venv under ``benchmarks/.venvs/<name>`` (gitignored), and the
benchmark talks to it by running a small runner script with that venv's
python and reading JSON from its stdout.

What: :func:`ensure_venv` creates the venv once with ``<sys.executable> -m
venv``, pip-installs the requested requirements, and records the requirement
list in a marker file.  Later calls with the same list return immediately;
a changed list triggers a reinstall into a freshly recreated venv.

Stdlib only, so it can be imported from any interpreter.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

__all__ = ["VENVS_DIR", "VenvError", "ensure_venv", "venv_python"]

#: Root folder of the peer venvs: ``benchmarks/.venvs`` (gitignored).
VENVS_DIR = pathlib.Path(__file__).resolve().parent.parent / ".venvs"

_MARKER = "kerckhoffs-requirements.json"


class VenvError(RuntimeError):
    """Creating a peer venv or installing its requirements failed."""


def venv_python(venv_dir: pathlib.Path) -> pathlib.Path:
    """Path of the python interpreter inside ``venv_dir``."""
    if os.name == "nt":
        return venv_dir / "Scripts" / "python.exe"
    return venv_dir / "bin" / "python"


def _marker_payload(requirements: list[str]) -> dict:
    return {
        "requirements": list(requirements),
        "base_python": sys.executable,
        "base_version": list(sys.version_info[:3]),
    }


def _run(cmd: list[str], what: str) -> None:
    # cwd=VENVS_DIR: this very file is called ``venv.py``; run from its folder,
    # ``python -m venv`` would import it instead of the stdlib module.
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=VENVS_DIR)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-40:])
        raise VenvError(
            f"{what} failed (exit {proc.returncode}).\n"
            f"command: {' '.join(cmd)}\n"
            f"--- last output lines ---\n{tail}"
        )


def ensure_venv(name: str, requirements: list[str]) -> pathlib.Path:
    """Return the python of venv ``benchmarks/.venvs/<name>``, creating it if needed.

    The venv is built with the current interpreter (``sys.executable -m venv``)
    and ``requirements`` (pip requirement strings, e.g. ``"pycanon==1.3.6"``)
    are installed into it.  A marker file holding the requirement list makes
    the call cheap when nothing changed; if the list (or the base interpreter)
    differs, the venv is deleted and rebuilt.  The marker is written only
    after a successful install, so an interrupted or failed install is retried
    on the next call.

    Raises :class:`VenvError` with pip's output tail if anything fails.
    """
    if not name or "/" in name or "\\" in name or name in {".", ".."}:
        raise ValueError(f"invalid venv name: {name!r}")
    venv_dir = VENVS_DIR / name
    python = venv_python(venv_dir)
    marker = venv_dir / _MARKER
    wanted = _marker_payload(requirements)

    if python.exists() and marker.exists():
        try:
            if json.loads(marker.read_text()) == wanted:
                return python
        except (OSError, ValueError):
            pass

    if venv_dir.exists():
        shutil.rmtree(venv_dir)
    VENVS_DIR.mkdir(parents=True, exist_ok=True)
    _run([sys.executable, "-I", "-m", "venv", str(venv_dir)], f"creating venv {venv_dir}")
    if requirements:
        _run(
            [str(python), "-m", "pip", "install", "--disable-pip-version-check", *requirements],
            f"pip install {' '.join(requirements)} into venv {name!r}",
        )
    marker.write_text(json.dumps(wanted, indent=2) + "\n")
    return python


if __name__ == "__main__":  # python venv.py NAME REQ [REQ ...]
    if len(sys.argv) < 2:
        sys.exit("usage: python venv.py NAME [REQUIREMENT ...]")
    try:
        print(ensure_venv(sys.argv[1], sys.argv[2:]))
    except VenvError as exc:
        sys.exit(str(exc))
