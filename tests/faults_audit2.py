"""Faults of the second audit round: attacks that could not run, and a naive lattice release
read from files.

An attack whose adversary fits the release but that cannot run on this input (a disclosure
set too large to enumerate, files without the schema that reads their cells, a population
that is not the released one, a model the attack's engine does not take) is a gap: the audit
lists it as could not run, runs every other attack, and ends INCOMPLETE (exit 1), or UNSAFE
when another attack disclosed; never SAFE, never an abort. ``attack NAME`` on the same input
is one ``error:`` line (exit 2). A naive lattice release read from files with the population
and the schema is attacked as it is in memory (UNSAFE by disclosure-set).

Each setup writes its data into the workspace and publishes the release there (with
``kerckhoffs.cli.run``) before the command under test runs.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

from catalogue import Fault, Setup

SEQUENCE = """
[[generalization]]
name = "decades"
age = [[0, 9], [10, 19], [20, 29], [30, 39], [40, 49],
       [50, 59], [60, 69], [70, 79], [80, 89], [90, 99]]

[[generalization]]
name = "twenty-years"
age = [[0, 19], [20, 39], [40, 59], [60, 79], [80, 99]]

[[generalization]]
name = "halves"
age = [[0, 49], [50, 99]]
"""
AGE_SCHEMA = """
[columns.name]
role = "identifier"

[columns.age]
role = "quasi"
kind = "numeric"

[columns.disease]
role = "sensitive"
kind = "categorical"
"""
# ten rows of the demo hospital: the naive lattice's l=2 release discloses two of them
LATTICE_ROWS = """patient_id,age,sex,zip,nationality,disease
P000001,33,M,47524,United States,Bronchitis
P000002,87,F,13035,United States,Flu
P000003,32,F,13058,United States,Bronchitis
P000004,62,F,14801,United States,Gastritis
P000005,83,F,13024,United States,Dyspepsia
P000006,36,F,14850,United States,Flu
P000007,48,F,14856,United States,Gastric ulcer
P000008,38,F,02111,Canada,Bronchitis
P000009,12,M,02113,United States,Bronchitis
P000010,54,F,13021,United States,Diabetes
"""
SCHEMA = ["--schema", "demo/schema.toml"]


def _publish(ws: Path, *argv: str) -> None:
    """Run ``kerckhoffs ARGV`` in the workspace (the current directory), its output dropped:
    only the command under test is judged."""
    from kerckhoffs.cli import run

    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        code = run([*argv])
    assert code == 0, sink.getvalue()


def _too_large(*command: str) -> Setup:
    """30 people (ten aged 5 with flu, twenty with distinct values), the naive sequence
    publisher at l=2: it releases 'halves', and 'twenty-years' could pass on another table,
    so the disclosure set must be enumerated among about 10^18 tables."""

    def setup(ws: Path) -> list[str]:
        rows = ["name,age,disease"]
        rows += [f"p{i:02d},5,flu" for i in range(10)]
        rows += [f"q{i:02d},35,a{i}" for i in range(10)]
        rows += [f"r{i:02d},75,b{i}" for i in range(10)]
        (ws / "people.csv").write_text("\n".join(rows) + "\n")
        (ws / "age.toml").write_text(AGE_SCHEMA)
        (ws / "seq.toml").write_text(SEQUENCE)
        _publish(ws, "anonymize", "people.csv", "-s", "age.toml", "-a", "sequence", "-O",
                 "sequence=seq.toml", "-m", "l=2", "-o", "S")  # fmt: skip
        return [*command, "-r", "S", "-k", "people.csv", "--schema", "age.toml"]

    return setup


def _lattice(*command: str, model: str = "l=2", population: int | None = None,
             schema: bool = True) -> Setup:  # fmt: skip
    """The naive lattice over ten demo rows, read from files; ``population`` keeps that many
    of its people as knowledge; ``schema=False`` audits without ``--schema``."""

    def setup(ws: Path) -> list[str]:
        (ws / "lat.csv").write_text(LATTICE_ROWS)
        lines = LATTICE_ROWS.splitlines()
        keep = lines if population is None else lines[: population + 1]
        (ws / "pop.csv").write_text("\n".join(keep) + "\n")
        _publish(ws, "anonymize", "lat.csv", *SCHEMA, "-a", "lattice", "-m", model, "-o", "L")
        return [*command, "-r", "L", "-k", "pop.csv", *(SCHEMA if schema else [])]

    return setup


# fmt: off
FAULTS = [
    # an attack too large to run: listed, the others run, INCOMPLETE (was: the audit aborted)
    Fault("audit2-sequence-too-large", _too_large("audit"),
          ("disclosure-set: could not run", "about 10^18 possible tables", "hilb-order: not run",
           "INCOMPLETE", "disclosure-set could not run"), codes=(1,)),
    Fault("audit2-attack-sequence-too-large", _too_large("attack", "disclosure-set", "-o", "o"),
          ("disclosure-set", "about 10^18 possible tables")),
    # a naive lattice release read from files: attacked as in memory (was: SAFE, exit 0)
    Fault("audit2-lattice-files-unsafe", _lattice("audit"),
          ("UNSAFE by disclosure-set", "P000001 and P000009 (rows 0 and 8)", "share 6/7"),
          codes=(1,)),
    Fault("audit2-lattice-files-no-schema", _lattice("audit", schema=False),
          ("disclosure-set: could not run", "schema", "INCOMPLETE"), codes=(1,)),
    Fault("audit2-attack-lattice-no-schema",
          _lattice("attack", "disclosure-set", "-o", "o", schema=False),
          ("disclosure-set", "schema")),
    Fault("audit2-lattice-files-other-population", _lattice("audit", population=9),
          ("disclosure-set: could not run", "does not match the release", "INCOMPLETE"),
          codes=(1,)),
    # the minimality attack fits a lattice release but its engine takes no distinct l
    Fault("audit2-minimality-engine", _lattice("audit", model="distinct-l=2"),
          ("minimality: could not run", "distinct l-diversity"), codes=(1,)),
]
# fmt: on
