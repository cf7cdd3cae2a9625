"""Faults of the DP claims: a release asked to be DP under substitution that protects only a
change of one sensitive value (``dp-rr`` with ``perturb=sa``), an old release of that kind
read back, DP targets and neighbour notions that do not fit the algorithm, and schemas that
drop rows with missing values. Each ends in one ``error:`` line, exit 2, or (a check that
fails) exit 1 with no line claiming ok; the workspace unchanged (``tests/catalogue.py``)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

from catalogue import Fault, Setup, args
from kerckhoffs.data import manifest

LEVELS = "levels=age:4,sex:1,nationality:2,zip:2"
"""A public cell domain of the demo schema (age and sex at their roots: no hierarchy file)."""


def dp(algorithm: str, *rest: str, schema: str = "demo/schema.toml") -> list[str]:
    return ["anonymize", "data.csv", "-s", schema, "-a", algorithm, "-O", LEVELS, *rest, "-o", "x"]


def _label_release(ws: Path) -> None:
    """A dp-rr perturb=sa release ``rr`` (label DP, epsilon 1) made by the command line, its
    output kept out of the output under test."""
    from kerckhoffs.cli import run

    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        code = run([*dp("dp-rr", "-O", "perturb=sa", "-m", "label-dp=1")[:-1], "rr"])
    assert code == 0, sink.getvalue()


def _check_label_release(model: str) -> Setup:
    def setup(ws: Path) -> list[str]:
        _label_release(ws)
        return ["check", "rr", "-m", model]

    return setup


def _old_label_release(ws: Path) -> list[str]:
    """The same release as written before the notion was recorded: ``"neighbours":
    "substitution"`` and a recorded dp=1 check, re-sealed as it was then."""
    _label_release(ws)
    meta_path = ws / "rr" / "release.json"
    meta = json.loads(meta_path.read_text())
    meta["dp"]["neighbours"] = "substitution"
    meta["provenance"]["parameters"]["neighbours"] = "substitution"
    meta["checks"][0]["spec"] = {"model": "differential-privacy", "epsilon": 1.0, "delta": 0.0}
    meta["checks"][0]["model"] = "differential-privacy"
    meta_path.write_bytes(manifest.seal(meta))
    return ["check", "rr", "-m", "dp=1"]


def _schema_with(line: str, name: str) -> Setup:
    """The demo schema with ``line`` added at its top (schema-wide) or under a column."""

    def setup(ws: Path) -> list[str]:
        text = (ws / "demo" / "schema.toml").read_text()
        if line.startswith("[columns."):
            header, _, setting = line.partition("\n")
            text = text.replace(header + "\n", header + "\n" + setting + "\n", 1)
        else:
            text = text.replace("[columns.patient_id]", line + "\n\n[columns.patient_id]", 1)
        (ws / "demo" / name).write_text(text)
        return dp("dp-rr", "-m", "dp=1", schema=f"demo/{name}")

    return setup


# fmt: off
FAULTS = [
    # dp-rr perturb=sa publishes exact QI cell totals: not DP under substitution
    Fault("dp-rr-sa-asked-dp", args(*dp("dp-rr", "-O", "perturb=sa", "-m", "dp=1")),
          ("perturb=sa", "label-dp=1", "perturb=cell")),
    Fault("dp-rr-sa-neighbours-substitution",
          args(*dp("dp-rr", "-O", "perturb=sa", "-O", "neighbours=substitution", "-m",
                   "label-dp=1")),
          ("perturb=sa", "neighbours=sensitive-value", "not under substitution")),
    Fault("dp-rr-add-remove", args(*dp("dp-rr", "-O", "neighbours=add-remove", "-m", "dp=1")),
          ("add-remove", "reveals n")),
    Fault("dp-rr-two-targets", args(*dp("dp-rr", "-m", "dp=1", "-m", "label-dp=1")),
          ("one DP target",)),
    Fault("check-label-release-as-dp", _check_label_release("dp=1"),
          ("label-dp", "violated"), codes=(1, 2)),
    Fault("check-old-perturb-sa-release-as-dp", _old_label_release,
          ("release.json records neighbours substitution", "sensitive-value"), codes=(1, 2)),
    # the weaker target and notion where they do not fit
    Fault("dp-histogram-label-dp", args(*dp("dp-histogram", "-m", "label-dp=1")),
          ("label-dp=1", "dp=EPS", "dp-histogram")),
    Fault("dp-marginals-label-dp", args(*dp("dp-marginals", "-O", "marginals=zip",
                                            "-m", "label-dp=1")),
          ("label-dp=1", "dp-marginals")),
    Fault("dp-histogram-sensitive-value", args(*dp("dp-histogram", "-O",
                                                   "neighbours=sensitive-value", "-m", "dp=1")),
          ("sensitive-value", "perturb=sa")),
    Fault("label-dp-on-groups", args("check", "rel", "-m", "label-dp=1"),
          ("label-dp", "differentially private release")),
    Fault("label-dp-zero", args("check", "rel", "-m", "label-dp=0"), ("epsilon", "0")),
    Fault("label-dp-three-values", args("check", "rel", "-m", "label-dp=1,0,2"),
          ("label-dp=1,0,2", "EPS,DELTA")),
    # dropping rows for missing values changes n: refused by every DP algorithm
    Fault("dp-missing-drop-schema", _schema_with('missing = "drop"', "drop.toml"),
          ('missing = "drop"', 'missing = "category"', "changes n")),
    Fault("dp-missing-drop-column",
          _schema_with('[columns.zip]\nmissing = "drop"', "drop_zip.toml"),
          ("'zip'", 'missing = "drop"', 'missing = "category"')),
]
# fmt: on
