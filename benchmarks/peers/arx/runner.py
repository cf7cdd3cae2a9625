"""ARX's lattice search behind a pipe: our harness ``ArxLattice.java`` in one warm JVM.

ARX is not part of kerckhoffs and is not built by this project: the benchmark is given ARX's
classes and its bundled jars on the ``ARX_CLASSPATH`` environment variable (a Java class path,
``:``-separated). :func:`start` compiles the harness against that class path into
``benchmarks/.cache/arx-harness`` (gitignored) and starts one JVM that answers one search per
request, so every timed run after the warm-up finds the JIT warm.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

HARNESS = Path(__file__).resolve().parent / "ArxLattice.java"
BUILD = Path(__file__).resolve().parents[2] / ".cache" / "arx-harness"


class ArxUnavailable(RuntimeError):
    """No ARX class path, no Java compiler, or the harness does not compile against it."""


@dataclass(frozen=True)
class ArxRun:
    """One search as the harness timed it (seconds) and what it found."""

    cpu_s: float  # the JVM main thread (ARX starts no threads of its own)
    process_cpu_s: float  # the whole JVM: JIT compiler and garbage collector included
    wall_s: float
    own_timer_s: float  # ARXResult.getTime(): anonymize() alone, wall
    chosen: tuple[int, ...] | None  # levels in the order the QIs were given; None: no optimum
    checked: int  # lattice nodes ARX checked


def start() -> subprocess.Popen[str]:
    """Compile the harness against ``$ARX_CLASSPATH`` and start its JVM."""
    classpath = os.environ.get("ARX_CLASSPATH", "")
    if not classpath:
        raise ArxUnavailable("ARX_CLASSPATH is not set (ARX's classes and its lib/ jars)")
    javac, java = shutil.which("javac"), shutil.which("java")
    if javac is None or java is None:
        raise ArxUnavailable("no javac/java on PATH")
    BUILD.mkdir(parents=True, exist_ok=True)
    made = subprocess.run(
        [javac, "-nowarn", "-cp", classpath, "-d", str(BUILD), str(HARNESS)],
        capture_output=True,
        text=True,
    )
    if made.returncode != 0:
        raise ArxUnavailable(f"the harness does not compile against ARX_CLASSPATH: {made.stderr}")
    return subprocess.Popen(
        [java, "-cp", f"{BUILD}{os.pathsep}{classpath}", "ArxLattice"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        bufsize=1,
    )


def search(
    jvm: subprocess.Popen[str],
    mode: str,
    csv: Path,
    sep: str,
    k: int,
    l_diversity: int,
    sensitive: str,
    hierarchies: dict[str, Path],
) -> ArxRun:
    """One ARX search: ``mode`` "memory" (rows split before the timer) or "file" (parsed inside
    it); k-anonymity, plus distinct l-diversity of ``sensitive`` when ``l_diversity`` > 1."""
    assert jvm.stdin is not None and jvm.stdout is not None
    qis = ",".join(f"{q}={p}" for q, p in hierarchies.items())
    fields = ["run", mode, str(csv), sep, str(k), str(l_diversity), sensitive, qis]
    jvm.stdin.write("\t".join(fields) + "\n")
    answer = jvm.stdout.readline().split()
    if not answer or answer[0] != "ok":
        raise RuntimeError(f"ARX harness: {' '.join(answer) or 'no answer (JVM ended)'}")
    cpu, proc, wall, own = (int(x) for x in answer[1:5])
    chosen = None if answer[5] == "none" else tuple(int(x) for x in answer[5].strip(".").split("."))
    return ArxRun(cpu / 1e9, proc / 1e9, wall / 1e9, own / 1e3, chosen, int(answer[6]))
