"""Time pycanon's privacy-model functions on one CSV and print JSON.

Run with the python of the pycanon venv (see ``venv.py``), not ours:

    python pycanon_runner.py CSV SEP SA QI1,QI2,... [--repeat N] [--extra]

The CSV is loaded once with ``pandas.read_csv(CSV, sep=SEP)``; each pycanon
function is then called N times on that DataFrame, timed with
``time.perf_counter``.  One JSON object goes to stdout:

    {"pycanon_version": ..., "rows": n, "results": {
        "k_anonymity": {"call": ..., "value": ..., "seconds": [...],
                        "median": ...}, ...}}

Values are converted to plain JSON (numpy scalars -> numbers, tuples ->
lists, NaN/inf -> null, with ``value_repr`` keeping pycanon's exact return).
``--extra`` also times basic/enhanced beta-likeness and delta-disclosure.

Notes on pycanon 1.3.6 semantics (details in notes/pycanon.md):
* ``recursive_c_l_diversity`` has no ``l`` argument; it uses
  ``l = l_diversity(data, qi, sa)`` and returns ``(c, l)``, with c = NaN when
  that l is 1.
* ``alpha_k_anonymity`` returns ``(alpha, k)``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import statistics
import sys
import time
import warnings
from importlib import metadata


def _plain(value):
    """Convert pycanon return values to JSON-safe plain Python values."""
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        with contextlib.suppress(TypeError, ValueError):
            value = value.item()  # numpy scalar -> python scalar
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    return repr(value)


def _time_call(fn, repeat: int):
    seconds, values, warns = [], [], set()
    for _ in range(repeat):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t0 = time.perf_counter()
            value = fn()
            seconds.append(time.perf_counter() - t0)
        warns.update(f"{w.category.__name__}: {w.message}" for w in caught)
        values.append(value)
    return values, seconds, sorted(warns)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv")
    ap.add_argument("sep")
    ap.add_argument("sa", help="sensitive attribute column")
    ap.add_argument("qi", help="comma-separated quasi-identifier columns")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument(
        "--extra", action="store_true", help="also time beta-likeness and delta-disclosure"
    )
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat must be >= 1")

    import pandas as pd
    from pycanon import anonymity as A

    qi = [c for c in args.qi.split(",") if c]
    sa = [args.sa]

    t0 = time.perf_counter()
    data = pd.read_csv(args.csv, sep=args.sep)
    load_seconds = time.perf_counter() - t0

    # name -> (call text, thunk, note)
    calls = {
        "k_anonymity": ("k_anonymity(data, qi)", lambda: A.k_anonymity(data, qi), None),
        "l_diversity": ("l_diversity(data, qi, [sa])", lambda: A.l_diversity(data, qi, sa), None),
        "entropy_l_diversity": (
            "entropy_l_diversity(data, qi, [sa])",
            lambda: A.entropy_l_diversity(data, qi, sa),
            "int(exp(min_EC H)), H natural-log entropy; truncation, so a "
            "uniform 2-value EC gives 1 (exp(ln 2) computes as 1.999...)",
        ),
        "recursive_c_l_diversity": (
            "recursive_c_l_diversity(data, qi, [sa])",
            lambda: A.recursive_c_l_diversity(data, qi, sa),
            "returns [c, l]; pycanon takes no l argument (l=2 cannot be "
            "requested): l = l_diversity(data, qi, [sa]); c is NaN (null) "
            "when that l == 1",
        ),
        "alpha_k_anonymity": (
            "alpha_k_anonymity(data, qi, [sa])",
            lambda: A.alpha_k_anonymity(data, qi, sa),
            "returns [alpha, k]",
        ),
        "t_closeness": (
            "t_closeness(data, qi, [sa])",
            lambda: A.t_closeness(data, qi, sa),
            "numeric dtype SA: ordered EMD; string SA: equal-distance EMD (total variation)",
        ),
    }
    if args.extra:
        calls.update(
            {
                "basic_beta_likeness": (
                    "basic_beta_likeness(data, qi, [sa])",
                    lambda: A.basic_beta_likeness(data, qi, sa),
                    None,
                ),
                "enhanced_beta_likeness": (
                    "enhanced_beta_likeness(data, qi, [sa])",
                    lambda: A.enhanced_beta_likeness(data, qi, sa),
                    None,
                ),
                "delta_disclosure": (
                    "delta_disclosure(data, qi, [sa])",
                    lambda: A.delta_disclosure(data, qi, sa),
                    None,
                ),
            }
        )

    results = {}
    for name, (call, thunk, note) in calls.items():
        entry: dict = {"call": f"pycanon.anonymity.{call}"}
        try:
            values, seconds, warns = _time_call(thunk, args.repeat)
        except Exception as exc:  # report, keep going with the others
            entry["error"] = f"{type(exc).__name__}: {exc}"
            results[name] = entry
            continue
        entry["value"] = _plain(values[0])
        entry["value_repr"] = repr(values[0])
        if any(repr(v) != repr(values[0]) for v in values[1:]):
            entry["all_values_repr"] = [repr(v) for v in values]
        entry["seconds"] = seconds
        entry["median"] = statistics.median(seconds)
        if note:
            entry["note"] = note
        if warns:
            entry["warnings"] = warns
        results[name] = entry

    out = {
        "pycanon_version": metadata.version("pycanon"),
        "numpy_version": metadata.version("numpy"),
        "pandas_version": metadata.version("pandas"),
        "python_version": sys.version.split()[0],
        "csv": args.csv,
        "sep": args.sep,
        "quasi_identifiers": qi,
        "sensitive_attribute": args.sa,
        "rows": len(data),
        "load_seconds": load_seconds,
        "repeat": args.repeat,
        "timer": "time.perf_counter, one call per run, DataFrame loaded once",
        "results": results,
    }
    json.dump(out, sys.stdout, indent=2, allow_nan=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
