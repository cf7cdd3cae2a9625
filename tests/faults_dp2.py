"""Faults of DP releases at the edges of what floats and OpenDP hold, and of the ledger's file:
an epsilon so large that ``e^eps`` is no float or so small that the noise scale passes 2^52,
an epsilon or budget beyond the largest float, a ledger whose folder does not exist (it is
never created), a hard-linked ledger (saving it would split it), the schema-wide
``missing = "drop"`` refusal naming the setting, and a DP check whose loss exceeds its target
by less than four digits show. Each ends in one ``error:`` line, exit 2, or (a check that
fails) exit 1 with no line claiming ok; the workspace unchanged (``tests/catalogue.py``)."""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

from catalogue import Fault, args

LEVELS = "levels=age:4,sex:1,nationality:2,zip:2"
"""A public cell domain of the demo schema (age and sex at their roots: no hierarchy file)."""


def dp(algorithm: str, *rest: str, schema: str = "demo/schema.toml") -> list[str]:
    return ["anonymize", "data.csv", "-s", schema, "-a", algorithm, "-O", LEVELS, *rest, "-o", "x"]


def _quiet_run(argv: list[str]) -> None:
    """Run the command line in a fault's setup, its output kept out of the output under test."""
    from kerckhoffs.cli import run

    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        code = run(argv)
    assert code == 0, sink.getvalue()


def _hard_linked(ws: Path) -> list[str]:
    """A ledger ``h1.json`` charged once, a second name ``h2.json`` for the same file
    (``ln``), and a run through the second name."""
    _quiet_run([*dp("dp-histogram", "-m", "dp=1")[:-1], "first", "--ledger", "h1.json"])
    os.link(ws / "h1.json", ws / "h2.json")
    return [*dp("dp-histogram", "-m", "dp=1"), "--ledger", "h2.json"]


def _schema_wide_drop(ws: Path) -> list[str]:
    text = (ws / "demo" / "schema.toml").read_text()
    text = text.replace("[columns.patient_id]", 'missing = "drop"\n\n[columns.patient_id]', 1)
    (ws / "demo" / "wide_drop.toml").write_text(text)
    return dp("dp-histogram", "-m", "dp=1", schema="demo/wide_drop.toml")


def _check_below_the_loss(ws: Path) -> list[str]:
    """A dp-histogram release at epsilon 1 (OpenDP's map: 1 to float precision) checked
    against 0.99999999: four digits print both as 1."""
    _quiet_run([*dp("dp-histogram", "-m", "dp=1")[:-1], "h"])
    return ["check", "h", "-m", "dp=0.99999999"]


# fmt: off
FAULTS = [
    # e^eps beyond a float (710 and up) overflowed in randomized response: internal error
    Fault("dp-rr-epsilon-800", args(*dp("dp-rr", "-m", "dp=800")), ("800", "too large")),
    Fault("dp-rr-sa-epsilon-1e308",
          args(*dp("dp-rr", "-O", "perturb=sa", "-m", "label-dp=1e308")),
          ("1e+308", "too large")),
    # noise scales beyond 2^52: overflowed counts (a numpy warning and a wrong message) or
    # OpenDP's map (internal error)
    Fault("dp-histogram-epsilon-1e-300", args(*dp("dp-histogram", "-m", "dp=1e-300")),
          ("1e-300", "too small", "2^52")),
    Fault("dp-marginals-epsilon-1e-300",
          args(*dp("dp-marginals", "-O", "marginals=age+sex;zip+nationality", "-m",
               "dp=1e-300")),
          ("too small", "2^52")),
    Fault("dp-gaussian-epsilon-and-delta-1e-300",
          args(*dp("dp-histogram", "-O", "mechanism=gaussian", "-m", "dp=1e-300,1e-300")),
          ("too small", "Gaussian")),
    Fault("dp-rr-epsilon-1e-300", args(*dp("dp-rr", "-m", "dp=1e-300")),
          ("1e-300", "too small", "uniform noise")),
    # numbers beyond the largest float are too large, not "not positive"
    Fault("dp-epsilon-1e400", args(*dp("dp-histogram", "-m", "dp=1e400")),
          ("1e400", "too large")),
    Fault("ledger-budget-400-digits",
          args(*dp("dp-histogram", "-m", "dp=1"), "--ledger", "l.json", "--budget", "9" * 400),
          ("budget", "too large")),
    # a ledger's folder is never created: a typo would start everyone on a fresh budget
    Fault("ledger-folder-missing",
          args(*dp("dp-histogram", "-m", "dp=1"), "--ledger", "ledgr/L.json"),
          ("ledgr", "does not exist")),
    Fault("ledger-folder-missing-nested",
          args(*dp("dp-histogram", "-m", "dp=1"), "--ledger", "home/no/such/L.json"),
          ("home/no/such", "does not exist")),
    # a hard-linked ledger: the atomic rename would give one name a new file (a split)
    Fault("ledger-hard-link", _hard_linked, ("h2.json", "hard links")),
    # the schema-wide missing = "drop" refusal named column 'age'
    Fault("dp-missing-drop-schema-wide-named", _schema_wide_drop,
          ("schema-wide", 'missing = "drop"')),
    # a loss above its target by less than 4 digits show: "epsilon=1 ... achieved 1 violated"
    Fault("dp-check-shows-the-excess", _check_below_the_loss, ("epsilon=0.99999999",),
          codes=(1,)),
]
# fmt: on
