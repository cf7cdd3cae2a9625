"""Question: does the default test suite stay under its CPU budget (180 s on this machine)?

Runs the default suite the way ``.ci/run`` does (``python -m pytest`` from the project root with
pyproject's default markers, i.e. without ``-m slow``; ``KERCKHOFFS_REQUIRE_BROWSER=1`` as
``.ci/run`` sets it, ``CI=true`` as a CI machine does, so hypothesis is derandomized) in a child
process, ``--repeat`` times (default 1), and measures each run's wall time and CPU: user +
system of every process of the run, read with ``resource.getrusage(RUSAGE_CHILDREN)``. This
process makes itself the children's subreaper (Linux), so processes the suite starts and leaves
behind (a browser, a forked CLI) are reaped here and counted too.

Before the runs, ``src/`` is byte-compiled (``compileall``, as ``pip install .`` compiles the
installed package in ``.ci/run``; install excluded from the budget): otherwise, under
``PYTHONDONTWRITEBYTECODE=1`` (set on this machine), every Python process of the suite would
compile kerckhoffs from source again. The tests are left as they are: on a clean clone, or
under ``PYTHONDONTWRITEBYTECODE=1``, pytest rewrites their asserts on every run (about 8 s).

The per-file breakdown comes from a small pytest plugin (this module, loaded in the child with
``-p bench_suite``): the CPU of the pytest process and of its descendants (reaped ones from
``getrusage``, live ones such as the warm CLI server from ``/proc``) around each test's setup,
call and teardown, summed per test file; plus ``(pytest start)`` (the interpreter, pytest, its
plugins and the conftest's imports) and ``(collection)`` (importing every test module, their
asserts rewritten). What is left, ``(session end and exit)``: the session's last teardowns
after the last test, interpreter exit, processes left behind and reaped late. The sum of the
tests' wall times is the ``sum_test_wall_s`` column.

Writes ``results/suite.csv`` (one row per run and part: ``total``, ``start``, ``collection``,
``file``, ``end``) and ``results/suite.png`` (the runs' CPU against the budget; the parts that
cost most).

Run from the project root: ``python benchmarks/bench_suite.py [--repeat N] [--top 25]``
(extra arguments after ``--`` go to pytest, e.g. ``-- tests/test_dp_synthetic.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

BUDGET_S = 180.0
"""The default suite's CPU budget on this machine (user + system, install excluded)."""

ROOT = Path(__file__).resolve().parents[1]
OUT_ENV = "KERCKHOFFS_BENCH_SUITE_OUT"
"""The file the plugin appends its JSON lines to (set by :func:`main` for the child)."""


# --- the plugin, run inside the pytest child --------------------------------------------------


def _cpu() -> float:
    """CPU seconds (user + system) of this process and its reaped children so far."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _live_descendants_cpu() -> float:
    """CPU seconds of this process's live descendants (each one's own and its reaped
    children's, from ``/proc/PID/stat``): a long-lived helper (the warm CLI server, which
    forks a process per command and reaps it) is charged to the tests that use it, not to
    the session's end when it is closed."""
    tick = os.sysconf("SC_CLK_TCK")
    parent: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rpartition(")")[2].split()
        except OSError:
            continue
        pid = int(entry)
        parent[pid] = int(fields[1])
        cpu[pid] = sum(int(x) for x in fields[11:15]) / tick
    me, total = os.getpid(), 0.0
    for pid, c in cpu.items():
        p, seen = parent.get(pid, 0), 0
        while p not in (0, 1, me) and seen < 64:
            p, seen = parent.get(p, 0), seen + 1
        if p == me:
            total += c
    return total


def _emit(record: dict[str, Any]) -> None:
    path = os.environ.get(OUT_ENV)
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


_STATE: dict[str, float] = {"live": 0.0}
"""The session's start and the last reading of the live descendants' CPU."""


def _tree_cpu(rescan: bool) -> float:
    """CPU of this process and every descendant, dead or alive; the live ones are read again
    only when ``rescan`` (a test waited for something, or a child was reaped): reading /proc
    after every test would cost the suite seconds."""
    if rescan and sys.platform == "linux":
        _STATE["live"] = _live_descendants_cpu()
    return _cpu() + _STATE["live"]


def pytest_sessionstart(session: Any) -> None:
    """Record what starting pytest cost (the interpreter, pytest and its plugins, the
    conftest's imports) and mark where collection starts."""
    _STATE["cpu"] = _tree_cpu(True)
    _STATE["wall"] = time.perf_counter()
    _emit({"kind": "start", "name": "(pytest start)", "cpu_s": _STATE["cpu"], "tests": 0})


def pytest_collection_finish(session: Any) -> None:
    """Record what collecting the tests (importing every test module) cost."""
    _emit(
        {
            "kind": "collection",
            "name": "(collection)",
            "cpu_s": _tree_cpu(True) - _STATE.get("cpu", 0.0),
            "wall_s": time.perf_counter() - _STATE.get("wall", 0.0),
            "tests": len(session.items),
        }
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: Any, nextitem: Any) -> Iterator[None]:
    """Charge each test with the CPU (this process and its descendants) and wall time of its
    setup, call and teardown."""
    reaped0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    c0, w0 = _tree_cpu(False), time.perf_counter()
    yield
    wall = time.perf_counter() - w0
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN) != reaped0
    waited = wall - (_cpu() - c0 + _STATE["live"]) > 0.02
    _emit(
        {
            "kind": "test",
            "name": item.nodeid,
            "cpu_s": _tree_cpu(reaped or waited) - c0,
            "wall_s": wall,
            "tests": 1,
        }
    )


# --- the measuring side ----------------------------------------------------------------------


def _become_subreaper() -> bool:
    """Make orphaned descendants ours to reap (Linux ``PR_SET_CHILD_SUBREAPER``)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0
    return False


def _reap_orphans(grace_s: float = 5.0) -> None:
    """Reap descendants left behind by the run, waiting at most ``grace_s`` for them."""
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.05)


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_suite(pytest_args: list[str]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One run of the default suite in a child process: its totals and the plugin's records."""
    with tempfile.NamedTemporaryFile("r", suffix=".jsonl", delete=False) as f:
        out = Path(f.name)
    env = dict(os.environ)
    env.setdefault("KERCKHOFFS_REQUIRE_BROWSER", "1")
    env.setdefault("CI", "true")
    env[OUT_ENV] = str(out)
    here = str(Path(__file__).resolve().parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH", "")) if p)
    cmd = [sys.executable, "-m", "pytest", "-p", "bench_suite", "-p", "no:cacheprovider"]
    c0, w0 = _children_cpu(), time.perf_counter()
    proc = subprocess.run([*cmd, *pytest_args], cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - w0
    _reap_orphans()
    cpu = _children_cpu() - c0
    records = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    out.unlink()
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    total = {"cpu_s": cpu, "wall_s": wall, "returncode": proc.returncode, "summary": summary}
    if proc.returncode != 0:
        print(proc.stdout[-3000:], proc.stderr[-2000:], sep="\n", file=sys.stderr)
    return total, records


def rows_of(run: int, total: dict[str, Any], records: list[dict[str, Any]]) -> list[dict]:
    """CSV rows of one run: its total, the collection, one row per test file, the rest."""
    files: dict[str, dict[str, float]] = {}
    rows = []
    for r in records:
        if r["kind"] in ("start", "collection"):
            rows.append(
                {
                    "run": run,
                    "kind": r["kind"],
                    "name": r["name"],
                    "cpu_s": r["cpu_s"],
                    "wall_s": r.get("wall_s", float("nan")),
                    "tests": r["tests"],
                }
            )
            continue
        f = files.setdefault(r["name"].split("::")[0], {"cpu_s": 0.0, "wall_s": 0.0, "tests": 0})
        f["cpu_s"] += r["cpu_s"]
        f["wall_s"] += r["wall_s"]
        f["tests"] += 1
    for name, f in sorted(files.items(), key=lambda kv: -kv[1]["cpu_s"]):
        rows.append({"run": run, "kind": "file", "name": name, **f})
    charged = sum(r["cpu_s"] for r in rows)
    tests = sum(f["tests"] for f in files.values())
    rows.append(
        {
            "run": run,
            "kind": "end",
            "name": "(session end and exit)",
            "cpu_s": total["cpu_s"] - charged,
            "wall_s": float("nan"),
            "tests": 0,
        }
    )
    rows.insert(
        0,
        {
            "run": run,
            "kind": "total",
            "name": "default suite",
            "cpu_s": total["cpu_s"],
            "wall_s": total["wall_s"],
            "tests": tests,
            "budget_s": BUDGET_S,
            "returncode": total["returncode"],
            "summary": total["summary"],
            "sum_test_wall_s": sum(f["wall_s"] for f in files.values()),
        },
    )
    return rows


def plot(df: Any, top: int, name: str) -> None:
    """``results/NAME.png``: each run's CPU against the budget, and the costliest parts."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    totals = df[df.kind == "total"]
    parts = df[df.kind != "total"].groupby("name")["cpu_s"].median().sort_values(ascending=False)
    parts = parts.head(top)[::-1]
    fig, (a, b) = plt.subplots(
        1, 2, figsize=(11, 0.28 * len(parts) + 1.8), gridspec_kw={"width_ratios": [1, 3]}
    )
    a.bar([f"run {r}" for r in totals.run], totals.cpu_s, color="tab:blue")
    for i, v in enumerate(totals.cpu_s):
        a.text(i, v, f"{v:.0f} s", ha="center", va="bottom", fontsize=8)
    a.axhline(BUDGET_S, color="red", linestyle="--", linewidth=1)
    a.text(
        0,
        BUDGET_S,
        f"budget {BUDGET_S:.0f} s",
        color="red",
        ha="center",
        va="bottom",
        fontsize=8,
        bbox={"facecolor": "white", "edgecolor": "none", "pad": 1},
    )
    a.set_ylabel("CPU seconds (user + system, all processes)")
    a.set_title("default suite", fontsize=10)
    b.barh(range(len(parts)), parts.values, color="tab:blue")
    b.set_yticks(range(len(parts)), [n.removeprefix("tests/") for n in parts.index], fontsize=7)
    for i, v in enumerate(parts.values):
        b.text(v, i, f" {v:.1f}", va="center", fontsize=7)
    b.set_xlabel("CPU seconds (median over runs)")
    b.set_title(f"the {len(parts)} costliest parts", fontsize=10)
    fig.tight_layout()
    fig.savefig(ROOT / "benchmarks" / "results" / f"{name}.png", dpi=120)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--top", type=int, default=25, help="files shown in the plot")
    ap.add_argument("--name", default="suite", help="results/NAME.csv and NAME.png")
    ap.add_argument("--replot", action="store_true", help="redraw NAME.png from NAME.csv")
    ap.add_argument("--tests-csv", help="also write every test's CPU and wall time here")
    ap.add_argument("pytest_args", nargs="*", help="after --: passed to pytest")
    args = ap.parse_args()
    import pandas as pd

    if args.replot:
        plot(pd.read_csv(ROOT / "benchmarks" / "results" / f"{args.name}.csv"), args.top, args.name)
        return
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src")], check=True)
    reaper = _become_subreaper()
    rows = []
    for run in range(1, args.repeat + 1):
        total, records = run_suite(args.pytest_args)
        rows += rows_of(run, total, records)
        if args.tests_csv:
            tests = pd.DataFrame(records).assign(run=run)
            header = run == 1
            tests.to_csv(args.tests_csv, mode="w" if header else "a", header=header, index=False)
        print(
            f"run {run}: {total['cpu_s']:.1f} s CPU, {total['wall_s']:.1f} s wall "
            f"(budget {BUDGET_S:.0f} s CPU): {total['summary']}"
        )
    df = pd.DataFrame(rows)
    df["subreaper"] = reaper
    (ROOT / "benchmarks" / "results").mkdir(exist_ok=True)
    df.to_csv(ROOT / "benchmarks" / "results" / f"{args.name}.csv", index=False)
    plot(df, args.top, args.name)
    show = df[df.kind != "file"].to_string(index=False, columns=["run", "name", "cpu_s", "wall_s"])
    print(show)
    print(df[df.kind == "file"].head(args.top).to_string(index=False))


if __name__ == "__main__":
    main()
