"""Faults of what the terminal shows and of the Dask engine's input (the catalogue's harness:
tests/catalogue.py, run by tests/test_catalogue.py).

- Values that are rich markup or terminal escape sequences: shown as they are in the verdict
  and error lines, never a crash (a ``[/bold]`` cell made ``check`` and ``budget`` end in
  rich's MarkupError, exit 3).
- Bad Parquet input to ``--engine dask``: one ``error:`` line naming the file and the row as
  the file numbers it, no worker traceback; what the files' footers show (not Parquet, a
  missing column, no row at all) is refused before any cluster is contacted (the faults give
  ``--scheduler`` an address where nothing listens: contacting it would fail otherwise);
  the rest runs on the session's shared cluster (tests/dask_shared.py; these faults, ids
  ``dask-...``, run last with the other Dask tests).
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pandas as pd

from catalogue import Fault, Setup

NOWHERE = "tcp://127.0.0.1:9"
"""A scheduler address where nothing listens (the discard port)."""

HOSTILE = ["[/bold]", "[red]P1", "\x1b[31mX"]


def _hostile_data(ws: Path) -> None:
    """``data.csv`` with the nationality cells replaced by markup and an escape sequence, the
    patient ids too, and a schema whose nationality has no hierarchy."""
    df = pd.read_csv(ws / "data.csv", dtype=str, keep_default_na=False)
    df["nationality"] = [HOSTILE[i % 3] for i in range(len(df))]
    df["patient_id"] = [f"{HOSTILE[i % 3]}{i}" for i in range(len(df))]
    df.to_csv(ws / "data.csv", index=False)
    text = (ws / "demo" / "schema.toml").read_text()
    text = text.replace('hierarchy = "hierarchies/nationality.csv"\n', "")
    (ws / "demo" / "schema.toml").write_text(text)


def _markup_check(ws: Path) -> list[str]:
    _hostile_data(ws)
    return ["check", "data.csv", "-s", "demo/schema.toml", "-m", "k=50", "--worst", "30"]


def _markup_budget(ws: Path) -> list[str]:
    from kerckhoffs.cli import run

    _hostile_data(ws)
    args = ["anonymize", "data.csv", "-s", "demo/schema.toml", "-a", "dp-histogram", "-m",
            "dp=1", "-O", "levels=age:4,sex:1,nationality:1", "-o", "dp", "--ledger",
            "led.json"]  # fmt: skip
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert run(args) == 0  # its output is not the fault's
    return ["budget", "led.json", "--budget", "0.5", "--worst", "300"]


def _escape_in_error(ws: Path) -> list[str]:
    df = pd.read_csv(ws / "data.csv", dtype=str, keep_default_na=False)
    df.loc[6, "zip"] = "\x1b[2J[/bold]"  # not in the zip hierarchy
    df.to_csv(ws / "data.csv", index=False)
    return ["check", "data.csv", "-s", "demo/schema.toml", "-m", "k=2"]


# -- Parquet for --engine dask --------------------------------------------------------------------
ZIP_HIERARCHY = "02134;021**;*\n02135;021**;*\n10001;100**;*\n"


def _parquet(ws: Path, frames: list[pd.DataFrame | bytes]) -> Path:
    """``frames`` as ``pq/part-0.parquet``, ``pq/part-1.parquet``, ... (bytes written as they
    are), and a schema ``pq.toml``: age numeric, zip categorical over a hierarchy of codes
    with leading zeros, disease sensitive."""
    folder = ws / "pq"
    folder.mkdir()
    for i, f in enumerate(frames):
        target = folder / f"part-{i}.parquet"
        if isinstance(f, bytes):
            target.write_bytes(f)
        else:
            f.to_parquet(target, index=False)
    (ws / "zip.csv").write_text(ZIP_HIERARCHY)
    (ws / "pq.toml").write_text(
        '[columns]\nage = { role = "quasi", kind = "numeric" }\n'
        'zip = { role = "quasi", kind = "categorical", hierarchy = "zip.csv" }\n'
        'disease = { role = "sensitive" }\n'
    )
    return folder


def _rows(n: int = 40, shift: int = 0) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": [20 + (i * 7 + shift) % 50 for i in range(n)],
            "zip": [("02134", "02135", "10001")[(i + shift) % 3] for i in range(n)],
            "disease": [("flu", "cold", "hiv")[(i * 5 + shift) % 3] for i in range(n)],
        }
    )


def _dask(command: str, frames: list[pd.DataFrame | bytes], *, cluster: bool = True) -> Setup:
    def setup(ws: Path) -> list[str]:
        folder = _parquet(ws, frames)
        if cluster:
            from dask_shared import shared_client

            address = shared_client().scheduler.address
        else:
            address = NOWHERE
        head = ["check", str(folder.name), "-s", "pq.toml", "-m", "k=2"]
        if command == "anonymize":
            head = ["anonymize", folder.name, "-s", "pq.toml", "-a", "mondrian", "-m", "k=2",
                    "-o", "out"]  # fmt: skip
        return [*head, "--engine", "dask", "--scheduler", address]

    return setup


def _bad(column: str, value: object, row: int = 15, astype: str | None = None) -> pd.DataFrame:
    df = _rows(shift=1)
    if astype is not None:
        df = df.astype({column: astype})
    df.loc[row, column] = value
    return df


def _truncated() -> bytes:
    buf = io.BytesIO()
    _rows().to_parquet(buf, index=False)
    data = buf.getvalue()
    return data[: len(data) // 2]


def _parts_with_csv(ws: Path) -> list[str]:
    folder = _parquet(ws, [_rows()])
    _rows().to_csv(folder / "part-1.csv", index=False)
    return ["check", str(folder / "*"), "-s", "pq.toml", "-m", "k=2", "--engine", "dask",
            "--scheduler", NOWHERE]  # fmt: skip


def _no_files(ws: Path) -> list[str]:
    _parquet(ws, [])
    return ["check", "pq/*.parquet", "-s", "pq.toml", "-m", "k=2", "--engine", "dask",
            "--scheduler", NOWHERE]  # fmt: skip


PART = "part-1.parquet"

# fmt: off
FAULTS = [
    # item 21: values that are markup or escape sequences, shown as they are
    Fault("markup-values-check", _markup_check, ("nationality=[/bold]", "nationality=[red]P1",
          "nationality=\\x1b[31mX"), codes=(1,)),
    Fault("markup-ids-budget", _markup_budget, ("[red]P11", "[/bold]0", "\\x1b[31mX2",
          "people over"), codes=(1,)),
    Fault("escape-sequence-in-error", _escape_in_error, ("'zip'", "'\\x1b[2J[/bold]'",
          "data row 7")),
    # item 22: bad Parquet input to --engine dask (footers: refused before any cluster)
    Fault("dask-truncated-parquet", _dask("check", [_rows(), _truncated()], cluster=False),
          ("part-1.parquet", "not a readable Parquet file")),
    Fault("dask-missing-column", _dask("check", [_rows(), _rows().drop(columns="disease")],
          cluster=False), ("part-1.parquet", "'disease'", "not in the data")),
    Fault("dask-every-file-empty", _dask("anonymize", [_rows().head(0), _rows().head(0)],
          cluster=False), ("part-0.parquet", "no rows")),
    Fault("dask-csv-among-parquet", _parts_with_csv, ("part-1.csv", "Parquet")),
    Fault("dask-no-parquet-file", _no_files, ("pq/*.parquet", "no Parquet file")),
    # item 22: what only the rows show, on the shared cluster: the file and its row named
    Fault("dask-value-not-in-hierarchy", _dask("check", [_rows(), _bad("zip", "99999")]),
          ("pq/part-1.parquet", "'zip'", "'99999'", "data row 16", "zip.csv")),
    Fault("dask-text-in-numeric", _dask("anonymize", [_rows(), _bad("age", "old",
          astype="str")]), ("pq/part-1.parquet", "'age'", "data row 16", "'old'")),
    Fault("dask-missing-value", _dask("check", [_bad("disease", None, row=3), _rows()]),
          ("pq/part-0.parquet", "'disease'", "data row 4", "missing")),
    Fault("dask-integer-zip", _dask("check", [_rows().astype({"zip": "int64"})]),
          ("pq/part-0.parquet", "'zip'", "'2134'", "'02134'", "integers", "text")),
    Fault("dask-infinite-age", _dask("anonymize", [_rows(), _bad("age", float("inf"),
          astype="float64")]), ("pq/part-1.parquet", "'age'", "data row 16", "'inf'")),
]
# fmt: on
