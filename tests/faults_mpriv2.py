"""Faults of the insider attack from files on m-private releases, and of the providers file:
a release whose recorded m-privacy check its coalition's records contradict (never SAFE), a
coalition larger than the recorded check covers (its ambiguous groups stay undecided, and the
line says why), a providers path that is a FIFO, a device or a directory (named as such), and
the m-privacy anonymizers' refusal saying what the search tried. Each setup builds its
releases with the library (it prints nothing the harness would read)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from catalogue import Fault, Setup
from kerckhoffs.data import manifest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "providers"


def _table_i_release(ws: Path, name: str, algorithm: str, models: list[str]) -> None:
    """Table I anonymized into ``ws/name`` (with its bound providers file ``name-rows.csv``),
    its schema as ``ws/providers.toml``."""
    from kerckhoffs import api
    from kerckhoffs.data.provider_rows import folder_integrity, write_provider_rows

    shutil.copy(EXAMPLE / "schema.toml", ws / "providers.toml")
    rel = api.anonymize(
        EXAMPLE / "table_i.csv", schema=EXAMPLE / "schema.toml", algorithm=algorithm,
        models=models,
    )  # fmt: skip
    rel.write(ws / name)
    write_provider_rows(
        ws / f"{name}-rows.csv", rel.published_providers(), folder_integrity(ws / name)
    )


def _coalition(ws: Path, hospitals: list[str], name: str, extra: str = "") -> Path:
    """The hospitals' rows of Table I (with the provider column) and a knowledge file."""
    df = pd.read_csv(EXAMPLE / "table_i.csv")
    df[df["hospital"].isin(hospitals)].to_csv(ws / f"{name}.csv", index=False)
    (ws / f"{name}.toml").write_text(f'[coalition]\nrecords = "{name}.csv"\n{extra}')
    return ws / f"{name}.toml"


def _claim_m_privacy(folder: Path, m: int, k: int) -> None:
    """Record a passed m-privacy=m w.r.t. k check in ``folder/release.json`` and seal it
    again, as anyone can (the seal is a digest, not a signature)."""
    f = folder / "release.json"
    meta: dict[str, Any] = json.loads(f.read_text())
    meta.pop("integrity", None)
    meta["checks"].append(
        {
            "model": "m-privacy",
            "parameter": f"m={m} w.r.t. k={k}",
            "achieved": None,
            "satisfied": True,
            "spec": {"model": "m-privacy", "m": m, "models": [{"model": "k-anonymity", "k": k}]},
        }
    )
    f.write_bytes(manifest.seal(meta))


def _forged_check_contradicted(ws: Path) -> list[str]:
    """The README's mondrian k=2 release of Table I, edited to record a passed m-privacy=1
    check: hospital P2's records fit one way and leave Cecilia alone (UNSAFE), which the line
    says contradicts the recorded check."""
    _table_i_release(ws, "mond", "mondrian", ["k=2"])
    _claim_m_privacy(ws / "mond", 1, 2)
    know = _coalition(ws, ["P2"], "p2")
    return ["audit", "--release", "mond", "--knowledge", know.name, "--schema",
            "providers.toml"]  # fmt: skip


def _forged_check_no_placement(ws: Path) -> list[str]:
    """Two groups whose boxes overlap, each holding an ``a``: P1's one record (27, a) fits
    both; wherever it is, its group keeps one row. 2-anonymous, not 1-private, but edited to
    record m-privacy=1. A group-by-group reading of the check would settle both groups (P1's
    record in the other one) and say SAFE; no placement keeps k=2 in both."""
    from kerckhoffs import Partition, Release, Schema, Table
    from kerckhoffs.models import KAnonymity

    df = pd.DataFrame(
        {"age": [27, 20, 25, 35], "disease": list("abac"), "hospital": ["P1", "P2", "P2", "P2"]}
    )
    (ws / "lie.toml").write_text(
        '[columns.age]\nrole = "quasi"\nkind = "numeric"\n\n[columns.disease]\n'
        'role = "sensitive"\n\n[columns.hospital]\nrole = "provider"\n'
    )
    t = Table.encode(df, Schema.from_toml(ws / "lie.toml"))
    part = Partition(np.array([0, 0, 1, 1], dtype=np.int32))
    Release(t, part, models=(KAnonymity(2),)).write(ws / "lie")
    _claim_m_privacy(ws / "lie", 1, 2)
    df.iloc[[0]].to_csv(ws / "lie-p1.csv", index=False)
    (ws / "lie-p1.toml").write_text('[coalition]\nrecords = "lie-p1.csv"\n')
    return ["audit", "--release", "lie", "--knowledge", "lie-p1.toml", "--schema", "lie.toml"]


def _larger_than_covered(hospitals: list[str], extra: str = "") -> Setup:
    """A coalition of more hospitals than the README's 2-private release covers: P2's and
    P4's ambiguous placements are not settled by the check, and the line says why."""

    def setup(ws: Path) -> list[str]:
        _table_i_release(ws, "hm", "provider-aware", ["k=2", "distinct-l=2", "m-privacy=2"])
        know = _coalition(ws, hospitals, "big", extra)
        return ["audit", "--release", "hm", "--knowledge", know.name, "--schema",
                "providers.toml"]  # fmt: skip

    return setup


def _providers_path(kind: str) -> Setup:
    """``check --providers`` given a path that is no regular file: a FIFO (outside the
    workspace: its snapshot reads files), ``/dev/zero``, a directory."""

    def setup(ws: Path) -> list[str]:
        _table_i_release(ws, "hm", "provider-aware", ["k=2", "distinct-l=2", "m-privacy=2"])
        if kind == "fifo":
            path = ws.parent / "providers.fifo"
            if not path.exists():
                os.mkfifo(path)
        else:
            path = Path("/dev/zero") if kind == "device" else ws / "demo"
        return ["check", "hm", "-m", "m-privacy=2", "--providers", str(path)]

    return setup


def _no_cut(*options: str) -> Setup:
    """P1 holds a, a, a, b, b, b and P2 c, d: the cut between them (q <= 5) leaves both
    halves 1-private w.r.t. frequency l=2, but the baseline tries only the balanced cut
    (q <= 3); the refusal says what it tried, not that no cut works."""

    def setup(ws: Path) -> list[str]:
        pd.DataFrame(
            {"q": [0, 1, 2, 3, 4, 5, 10, 11], "s": list("aaabbbcd"), "p": ["P1"] * 6 + ["P2"] * 2}
        ).to_csv(ws / "two.csv", index=False)
        (ws / "two.toml").write_text(
            '[columns.q]\nrole = "quasi"\nkind = "numeric"\n\n[columns.s]\nrole = "sensitive"'
            '\n\n[columns.p]\nrole = "provider"\n'
        )
        return ["anonymize", "two.csv", "-s", "two.toml", "-a", "mondrian-mprivacy", "-m",
                "l=2", "-m", "m-privacy=1", "-o", "two-out", *options]  # fmt: skip

    return setup


# fmt: off
FAULTS = [
    Fault("insider-forged-check-contradicted", _forged_check_contradicted,
          ("UNSAFE", "contradict the release's recorded m-privacy=1 check",
           "1 group(s) its records fit one way break k=2"), codes=(1, 2)),
    Fault("insider-forged-check-no-placement-keeps-it", _forged_check_no_placement,
          ("INCOMPLETE", "2 group(s) (4 of 4 rows) not attacked",
           "no placement of its records keeps k=2 in every group at once"), codes=(1, 2)),
    Fault("insider-coalition-larger-than-the-check", _larger_than_covered(["P2", "P3", "P4"]),
          ("INCOMPLETE", "not attacked",
           "covers coalitions of up to 2 provider(s); this one has 3"), codes=(1, 2)),
    Fault("insider-coalition-m-larger-than-the-check", _larger_than_covered(["P2"], "m = 3\n"),
          ("INCOMPLETE", "this one has 3"), codes=(1, 2)),
    Fault("providers-fifo", _providers_path("fifo"), ("providers.fifo", "a FIFO")),
    Fault("providers-dev-zero", _providers_path("device"), ("/dev/zero", "a character device")),
    Fault("providers-directory", _providers_path("directory"), ("demo", "a directory")),
    Fault("mprivacy-refusal-says-what-was-tried", _no_cut(),
          ("found no partition", "w.r.t. l=2:", "tried 1 QI cut(s)", "balanced split point",
           "cuts at other values are not tried")),
    Fault("mprivacy-refusal-median-cut", _no_cut("-O", "cut=median"),
          ("found no partition", "at its median", "cuts at other values are not tried")),
]
# fmt: on
