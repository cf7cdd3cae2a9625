"""Faults of m-privacy and the insider attack (paper 003): providers files bound to their
release, an insider whose own records fit the groups in more than one way, a frequency
l-diversity table the search cannot partition, providers of a bucketized release. Each
setup builds its releases with the library (it prints nothing the harness would read)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd

from catalogue import Fault

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "providers"


def _table_i(ws: Path) -> tuple[Path, Path]:
    shutil.copy(EXAMPLE / "table_i.csv", ws / "table_i.csv")
    shutil.copy(EXAMPLE / "schema.toml", ws / "providers.toml")
    return ws / "table_i.csv", ws / "providers.toml"


def _release(ws: Path, name: str, algorithm: str, models: list[str]) -> Path:
    """A release of Table I in ``ws/name`` and its providers file ``ws/name-rows.csv``."""
    from kerckhoffs import api
    from kerckhoffs.data.provider_rows import folder_integrity, write_provider_rows

    data, schema = _table_i(ws)
    rel = api.anonymize(data, schema=schema, algorithm=algorithm, models=models)
    rel.write(ws / name)
    rows = ws / f"{name}-rows.csv"
    write_provider_rows(rows, rel.published_providers(), folder_integrity(ws / name))
    return rows


def _other_releases_file(ws: Path) -> list[str]:
    _release(ws, "mond", "mondrian", ["k=2"])
    _release(ws, "aware", "provider-aware", ["k=2", "m-privacy=0"])
    return ["check", "mond", "-m", "m-privacy=1", "--providers", "aware-rows.csv"]


def _unbound_file(ws: Path) -> list[str]:
    rows = _release(ws, "mond", "mondrian", ["k=2"])
    lines = rows.read_text().splitlines(keepends=True)
    (ws / "old-rows.csv").write_text("".join(lines[1:]))  # as written before the binding
    return ["check", "mond", "-m", "m-privacy=1", "--providers", "old-rows.csv"]


def _edited_binding(ws: Path) -> list[str]:
    rows = _release(ws, "mond", "mondrian", ["k=2"])
    text = rows.read_text()
    (ws / "edited-rows.csv").write_text(text.replace("sha256:", "sha256:0", 1)[:-1])
    return ["check", "mond", "-m", "m-privacy=1", "--providers", "edited-rows.csv"]


def _short_file(ws: Path) -> list[str]:
    rows = _release(ws, "mond", "mondrian", ["k=2"])
    lines = rows.read_text().splitlines(keepends=True)
    (ws / "short-rows.csv").write_text("".join(lines[:-1]))
    return ["check", "mond", "-m", "m-privacy=1", "--providers", "short-rows.csv"]


def _bucketized(ws: Path) -> list[str]:
    _release(ws, "buck", "anatomy", ["l=2"])
    return ["check", "buck", "-m", "m-privacy=1", "--providers", "buck-rows.csv"]


def _ambiguous_insider(ws: Path) -> list[str]:
    """Hospital P2 against the README's 2-private release: Mark and John (Flu) fit group 0's
    Flu row as well as group 2's, so P2 cannot tell its rows there from the others'. Its
    records file has no provider column, so nothing says how many providers the coalition is
    and the release's recorded m-privacy=2 check (which would settle it) is not relied on."""
    _release(ws, "hm", "provider-aware", ["k=2", "distinct-l=2", "m-privacy=2"])
    df = pd.read_csv(EXAMPLE / "table_i.csv")
    df.loc[df["hospital"] == "P2", ["age", "zip", "disease"]].to_csv(ws / "p2.csv", index=False)
    (ws / "p2.toml").write_text('[coalition]\nrecords = "p2.csv"\n')
    return ["audit", "--release", "hm", "--knowledge", "p2.toml", "--schema", "providers.toml"]


def _frequency_l_no_cut(ws: Path) -> list[str]:
    """P1 holds a, a, a, b, b, b and P2 c, d: 1-private 2-diverse by provider, but the
    baseline's balanced QI cut mixes them; it must not claim that no partition exists."""
    pd.DataFrame(
        {"q": [0, 1, 2, 3, 4, 5, 10, 11], "s": list("aaabbbcd"), "p": ["P1"] * 6 + ["P2"] * 2}
    ).to_csv(ws / "two.csv", index=False)
    (ws / "two.toml").write_text(
        '[columns.q]\nrole = "quasi"\nkind = "numeric"\n\n[columns.s]\nrole = "sensitive"\n\n'
        '[columns.p]\nrole = "provider"\n'
    )
    return ["anonymize", "two.csv", "-s", "two.toml", "-a", "mondrian-mprivacy", "-m", "l=2",
            "-m", "m-privacy=1", "-o", "two-out"]  # fmt: skip


# fmt: off
FAULTS = [
    Fault("providers-of-another-release", _other_releases_file,
          ("aware-rows.csv", "written for another release")),
    Fault("providers-unbound-old-format", _unbound_file,
          ("old-rows.csv", "before providers files named their release", "--provider-rows")),
    Fault("providers-binding-edited", _edited_binding, ("edited-rows.csv", "not a providers file")),
    Fault("providers-file-short", _short_file, ("short-rows.csv", "row 9")),
    Fault("providers-of-a-bucketization", _bucketized, ("generalized releases only",)),
    Fault("insider-placement-ambiguous", _ambiguous_insider,
          ("INCOMPLETE", "not attacked", "cannot tell its rows", "not relied on",
           "number of providers is not known"), codes=(1, 2)),
    Fault("mprivacy-frequency-l-no-cut", _frequency_l_no_cut,
          ("found no partition", "l=2", "might exist")),
]
# fmt: on
