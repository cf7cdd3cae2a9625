"""Question: what does starting ``kerckhoffs`` cost before any work (issue 15, item 4:
``kerckhoffs --help`` took 111 MB, and import was ~9% of a 1M-row ``anonymize``)?

Each command as a fresh subprocess, CPU (user + system, ``os.wait4``), wall time and peak RSS,
side by side in one run, alternating: today's sources and the previous implementation
(``_cli_runs``: main before issue 15, which imported pandas, numpy, pyarrow and every command's
library modules at start-up). Commands: ``kerckhoffs --help``, ``kerckhoffs anonymize --help``
and ``import kerckhoffs`` (the library entry); plus ``python -X importtime`` of
``import kerckhoffs.cli``: the cumulative microseconds and which heavy packages were loaded.

Run: ``python benchmarks/bench_import.py [--repeat 7]``
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
from pathlib import Path

import pandas as pd

from _cli_runs import baseline_src, ours_src, run, run_cli
from _timing import save

HEAVY = ("numpy", "pandas", "pyarrow", "scipy", "matplotlib", "opendp", "hypothesis")


def importtime(src: Path) -> tuple[float, list[str]]:
    """Cumulative seconds of ``import kerckhoffs.cli`` and the heavy packages it loaded."""
    code = f"import sys; sys.path.insert(0, {str(src)!r}); import kerckhoffs.cli"
    err = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True
    ).stderr
    total = 0.0
    loaded = []
    for line in err.splitlines():
        m = re.match(r"import time:\s+\d+ \|\s+(\d+) \| (\s*)(\S+)", line)
        if not m:
            continue
        if m.group(3) == "kerckhoffs.cli" and not m.group(2):
            total = int(m.group(1)) / 1e6
        if m.group(3) in HEAVY:
            loaded.append(m.group(3))
    return total, sorted(set(loaded))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    sides = {"kerckhoffs (today)": ours_src(), "baseline (before issue 15)": baseline_src()}
    tasks = {
        "kerckhoffs --help": lambda src: run_cli(src, ["--help"]),
        "kerckhoffs anonymize --help": lambda src: run_cli(src, ["anonymize", "--help"]),
        "import kerckhoffs": lambda src: run(
            [
                sys.executable,
                "-c",
                f"import sys; sys.path.insert(0, {str(src)!r}); import kerckhoffs",
            ]
        ),
    }
    rows = []
    for task, fn in tasks.items():
        runs: dict[str, list] = {name: [] for name in sides}
        for _ in range(args.repeat + 1):
            for name, src in sides.items():
                r = fn(src)
                assert r.returncode == 0, r.stderr
                runs[name].append(r)
        for name, rs in runs.items():
            rs = rs[1:]
            rows.append(
                {
                    "method": name,
                    "task": task,
                    "median_s": statistics.median(r.wall_s for r in rs),
                    "median_cpu_s": statistics.median(r.cpu_s for r in rs),
                    "median_peak_mb": statistics.median(r.peak_mb for r in rs),
                    "runs": len(rs),
                }
            )
    for name, src in sides.items():
        total, loaded = importtime(src)
        rows.append(
            {
                "method": name,
                "task": "-X importtime: import kerckhoffs.cli",
                "median_s": total,
                "heavy_loaded": " ".join(loaded) or "none",
                "runs": 1,
            }
        )
    df = pd.DataFrame(rows)
    save(
        df,
        "import",
        "Start-up of kerckhoffs: CPU seconds per command",
        "task",
        value="median_cpu_s",
    )
    print(df.to_string(index=False))


if __name__ == "__main__":
    main()
