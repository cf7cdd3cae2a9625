"""Faults of the disclosure sets of paper 002 (Zhang, Wang, Jajodia and Brodsky) on tables
whose sets of possible tables have thousands of digits: each command ends in one line giving
the size as ``about 10^N`` (or, for ``audit``, in no verdict), never in "internal error" from
writing such an int in decimal. The tables are those of :mod:`disclosure_tables` (1,600 rows:
``1600!/2`` possible tables under the one-group candidate, 4,434 digits)."""

from __future__ import annotations

from pathlib import Path

import disclosure_tables as big
from catalogue import Fault, Setup
from kerckhoffs import api

HUGE = f"about 10^{big.EXPONENT}"
"""The size of ``PER(all)`` on the big table, as every message must say it."""


def _files(ws: Path) -> dict[str, str]:
    return {k: str(v.relative_to(ws)) for k, v in big.write(ws / "big").items()}


def _anonymize(*extra: str) -> Setup:
    def setup(ws: Path) -> list[str]:
        f = _files(ws)
        return ["anonymize", f["data"], "-s", f["schema"], *extra, "-o", "out"]

    return setup


def _sequence(candidates: str, strategy: str) -> Setup:
    def setup(ws: Path) -> list[str]:
        f = _files(ws)
        return ["anonymize", f["data"], "-s", f["schema"], "-a", "sequence", "-O",
                f"sequence={f[candidates]}", "-O", f"disclosure={strategy}", "-m",
                "distinct-l=2", "-o", "out"]  # fmt: skip

    return setup


def _disclosure(data: str) -> Setup:
    def setup(ws: Path) -> list[str]:
        f = _files(ws)
        return ["disclosure", f[data], "-s", f["schema"], "--lattice", "--chk", "distinct-l=2"]

    return setup


def _naive_release(ws: Path) -> dict[str, str]:
    """The naive ``sequence`` release of the big table over ``pairs`` (it releases ``all``),
    written as ``big/naive``: the attack must enumerate its disclosure set, and cannot."""
    f = _files(ws)
    rel = api.anonymize(ws / f["data"], schema=ws / f["schema"], algorithm="sequence",
                        models=["distinct-l=2"], sequence=str(ws / f["pairs"]))  # fmt: skip
    rel.write(ws / "big" / "naive")
    return f


def _audit(ws: Path) -> list[str]:
    f = _naive_release(ws)
    return ["audit", "-r", "big/naive", "-k", f["people"], "--schema", f["schema"]]


def _attack(ws: Path) -> list[str]:
    f = _naive_release(ws)
    return ["attack", "disclosure-set", "-r", "big/naive", "-k", f["people"], "--schema",
            f["schema"], "-o", "found-big"]  # fmt: skip


FAULTS = [
    Fault(
        "disclosure-lattice-exclusive-huge",
        _anonymize("-a", "lattice-exclusive", "-m", "distinct-l=2"),
        ("lattice-exclusive", HUGE),
    ),
    Fault(
        "disclosure-lattice-inclusive-huge",
        _anonymize("-a", "lattice-inclusive", "-m", "distinct-l=2"),
        ("lattice-inclusive",),
    ),
    Fault(
        "disclosure-sequence-exclusive-huge",
        _sequence("pairs", "exclusive"),
        ("sequence", HUGE, "pairs"),
    ),
    Fault(
        "disclosure-sequence-inclusive-huge",
        _sequence("pairs", "inclusive"),
        ("sequence", "about 10^240"),
    ),
    Fault("disclosure-command-lattice-huge", _disclosure("data"), (HUGE,)),
    Fault(
        "disclosure-command-first-candidate-huge",
        _disclosure("flat"),
        ("first candidate", "about 10^"),
    ),
    Fault("disclosure-audit-naive-sequence-huge", _audit, ("disclosure-set", HUGE), codes=(1, 2)),
    Fault("disclosure-attack-naive-sequence-huge", _attack, ("disclosure-set", HUGE)),
]
