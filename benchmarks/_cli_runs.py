"""Shared helpers of the CLI benchmarks (issue 15): run ``kerckhoffs`` as a subprocess from
our sources or from the previous implementation's, and measure each run by ``os.wait4``.

The previous implementation is the main branch before issue 15 (:data:`BASELINE_COMMIT`),
its ``src/`` extracted with ``git archive`` into a temporary folder: today's CLI and the
previous one run side by side in one benchmark, on the same inputs, alternating.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE_COMMIT = "b4b9aba"
"""main before issue 15's I/O work (pandas to_csv, all columns read, eager imports)."""


@dataclass
class Run:
    """One subprocess run: wall and CPU seconds (user + system), peak RSS in MB."""

    wall_s: float
    cpu_s: float
    user_s: float
    sys_s: float
    peak_mb: float
    returncode: int
    stderr: str


def baseline_src() -> Path:
    """``src/`` of :data:`BASELINE_COMMIT`, extracted once into a temporary folder."""
    folder = Path(tempfile.gettempdir()) / f"kerckhoffs-baseline-{BASELINE_COMMIT}"
    if not (folder / "src" / "kerckhoffs" / "cli.py").is_file():
        folder.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", BASELINE_COMMIT, "src"],
            check=True,
            capture_output=True,
        ).stdout
        with tarfile.open(fileobj=__import__("io").BytesIO(archive)) as tar:
            tar.extractall(folder, filter="data")
    return folder / "src"


def ours_src() -> Path:
    return ROOT / "src"


def run_cli(src: Path, args: list[str], env: dict[str, str] | None = None) -> Run:
    """``kerckhoffs ARGS`` with the package imported from ``src`` (a fresh interpreter)."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); "
        "from kerckhoffs.cli import main; sys.argv = ['kerckhoffs', *sys.argv[2:]]; main()"
    )
    return run([sys.executable, "-c", code, str(src), *args], env)


LAUNCHER = r"""
import json, os, subprocess, sys, time
t0 = time.perf_counter()
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, status, usage = os.wait4(proc.pid, 0)
print(json.dumps([time.perf_counter() - t0, usage.ru_utime, usage.ru_stime,
                  usage.ru_maxrss, os.waitstatus_to_exitcode(status)]))
"""
"""Starts the measured process from a small interpreter: a child's peak RSS counts the memory
of the process it was forked from (before ``exec``), so forking from this benchmark (pandas
and the generated data loaded) would inflate every peak."""


def run(cmd: list[str], env: dict[str, str] | None = None) -> Run:
    """Run ``cmd`` and measure it by ``os.wait4`` (that process only), through
    :data:`LAUNCHER`."""
    full_env = {**os.environ, "COLUMNS": "120", **(env or {})}
    done = subprocess.run(
        [sys.executable, "-S", "-c", LAUNCHER, *cmd],
        capture_output=True,
        text=True,
        env=full_env,
    )
    wall, user, system, peak_kb, code = json.loads(done.stdout.strip().splitlines()[-1])
    return Run(
        wall_s=wall,
        cpu_s=user + system,
        user_s=user,
        sys_s=system,
        peak_mb=peak_kb / 1024,
        returncode=code,
        stderr=done.stderr,
    )


def same_release(a: Path, b: Path) -> bool:
    """Whether two release directories hold the same files, byte for byte."""
    names = sorted(p.name for p in a.iterdir())
    if names != sorted(p.name for p in b.iterdir()):
        return False
    return all((a / n).read_bytes() == (b / n).read_bytes() for n in names)
