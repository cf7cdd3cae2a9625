"""The providers' row lists of a published release (paper 003's collaborative setting).

Several data providers publish one table; m-privacy (paper 003, Definition 2.1) is about
what a coalition of them learns by removing its own rows from each published group, so
checking it needs to know which provider each published row came from. The release files
never say (publishing it would hand every reader the coalition's subtraction), so the
anonymizer can write it to a separate, private file: a first line naming the release it
belongs to, then a CSV with a header and one line per published row, ``row`` (its 0-based
position in the release table, ``release.csv``) and ``provider`` (the provider's label)::

    # kerckhoffs provider rows for release sha256:4f0c...
    row,provider
    0,P3
    1,P1

Any order of lines is accepted; every row must appear exactly once. ``kerckhoffs check DIR
--model m-privacy=M --providers FILE`` reads it.

**Bound to its release.** A providers file is a list of labels by row number, so any other
release with as many rows would read it without complaint and get a verdict about the wrong
assignment (a wrong ``ok`` as easily as a wrong ``violated``). The first line therefore holds
the release's identity: the ``integrity`` digest of its ``release.json``, which covers every
published file byte for byte (:mod:`kerckhoffs.data.manifest`). A file whose digest is not the
release's is refused, and so is a file written before the binding existed (it names no
release, so a mix-up could not be detected); write a bound one by running ``anonymize ...
--provider-rows FILE`` again. The binding goes this way round on purpose: the release says
nothing about the providers file. A digest of the providers file inside ``release.json``
would be published with it, and anyone could hash a guessed assignment of rows to providers
and confirm it (Kerckhoffs's principle: the adversary has the release and its metadata).
The release's digest in the private file tells a reader of that file nothing the public
release does not.

Keep the file private: it is exactly what an insider coalition knows about its own rows, and
for the other providers' rows more than any of them knows.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import pandas as pd

from kerckhoffs.data.io import regular_file
from kerckhoffs.errors import InputError, input_error

COLUMNS = ("row", "provider")
"""The file's columns."""
HEADER = ",".join(COLUMNS)
BINDING = "# kerckhoffs provider rows for release "
"""The first line's text before the release's digest."""
_BINDING = re.compile(r"^# kerckhoffs provider rows for release (sha256:[0-9a-f]{64})\s*$")
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
HOW_TO_BIND = (
    "write a bound one by running `kerckhoffs anonymize ... --out DIR --provider-rows FILE` again"
)


def release_integrity(meta: Mapping[str, Any] | None, where: str | Path = "the release") -> str:
    """The identity a providers file is bound to: the ``integrity`` digest of the release's
    ``release.json`` (``meta``, as read from the files). A release made in this process (no
    files yet) or one whose metadata records no digest (kerckhoffs 0.1, another tool's table)
    cannot be bound to: one-line :class:`~kerckhoffs.errors.InputError`."""
    digest = meta.get("integrity") if meta is not None else None
    if meta is None:
        raise InputError(
            f"{where}: a providers file belongs to a release directory (it lists rows in the "
            "order of the published files); read the release from its directory, or give one "
            "provider label per row of the table instead"
        )
    if not isinstance(digest, str) or not _DIGEST.match(digest):
        raise InputError(
            f"{where}: the release records no integrity digest (written by kerckhoffs 0.1 or "
            "by another tool), so no providers file can be bound to it; publish it again with "
            "`kerckhoffs anonymize ... --provider-rows FILE`"
        )
    return digest


def folder_integrity(folder: str | Path) -> str:
    """:func:`release_integrity` of the release directory ``folder`` (its ``release.json``
    read as written, for binding the providers file written beside it)."""
    path = Path(folder) / "release.json"
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: cannot read the release's digest ({exc})") from None
    return release_integrity(meta if isinstance(meta, dict) else {}, folder)


def provider_rows_frame(providers: np.ndarray) -> pd.DataFrame:
    """The file's table for ``providers`` (one label per published row, in file order)."""
    return pd.DataFrame({"row": np.arange(len(providers)), "provider": providers})


def write_provider_rows(path: str | Path, providers: np.ndarray, release: str) -> None:
    """Write the providers' row lists (see the module docstring) to ``path``, bound to the
    release whose ``release.json`` integrity digest is ``release`` (:func:`folder_integrity`
    of the release directory just written)."""
    if not _DIGEST.match(str(release)):
        raise InputError(f"a providers file is bound to a release digest, got {release!r}")
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(f"{BINDING}{release}\n")
        provider_rows_frame(providers).to_csv(f, index=False)


def _first_line(path: Path) -> str | None:
    try:
        with _open_regular(regular_file(path, "providers file")) as f:
            return _read_first_line(f)
    except (OSError, InputError):
        return None


def _open_regular(path: Path) -> TextIO:
    """``path`` opened for reading text without blocking (a FIFO swapped in after
    :func:`~kerckhoffs.data.io.regular_file` looked would otherwise hang the open), and checked
    again on the open descriptor."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        why = exc.strerror or exc
        raise InputError(f"{path}: cannot read the providers file ({why})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise InputError(f"{path}: the providers file is not a regular file")
    return open(fd, encoding="utf-8", newline="")


def _read_first_line(f: TextIO) -> str | None:
    try:
        return f.readline().rstrip("\r\n")
    except UnicodeDecodeError:
        return None


def is_provider_rows_file(path: str | Path) -> bool:
    """Whether ``path`` starts as this format does, bound or written before the binding (what
    ``--overwrite`` may replace: never a file kerckhoffs did not write)."""
    line = _first_line(Path(path))
    return line is not None and (line.strip() == HEADER or bool(_BINDING.match(line)))


def read_provider_rows(path: str | Path, n_rows: int, *, release: str) -> np.ndarray:
    """The provider label of each of a release's ``n_rows`` published rows, from the file at
    ``path``, which must be bound to ``release`` (the release's :func:`release_integrity`).

    A missing file, a file bound to another release or to none (written before the binding),
    a missing column, a row number out of range, given twice or missing is a one-line
    :class:`~kerckhoffs.errors.InputError` naming the file; so is a path that is not a
    regular file (a FIFO, a device, a directory: named as such, never read)."""
    path = regular_file(path, "providers file")  # a FIFO or a device is named, never read
    with _open_regular(path) as fh:
        first = _read_first_line(fh)
        bound = _BINDING.match(first or "")
        if bound is not None and bound.group(1) == release:
            try:
                df = pd.read_csv(fh, dtype=str, keep_default_na=False)
            except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
                raise input_error(
                    f"{path}: not a providers CSV ({str(exc).splitlines()[0]})"
                ) from None
    if bound is None:
        if first is not None and first.strip() == HEADER:
            raise input_error(
                f"{path}: a providers file written before providers files named their release: "
                "nothing shows it belongs to this release (another release's file with as "
                f"many rows would be read the same); refusing it; {HOW_TO_BIND}"
            )
        raise input_error(
            f"{path}: not a providers file (its first line should be '{BINDING}sha256:...', "
            "as `anonymize --provider-rows` writes it)"
        )
    if bound.group(1) != release:
        raise input_error(
            f"{path}: written for another release (release {bound.group(1)[:19]}..., this one "
            f"is {release[:19]}...); give the providers file written with this release"
        )
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise input_error(
            f"{path}: a providers file needs the columns row and provider (missing {missing[0]})"
        )
    rows = pd.to_numeric(df["row"], errors="coerce")
    bad = rows.isna() | (rows != rows.round()) | (rows < 0) | (rows >= n_rows)
    if bad.any():
        i = int(np.argmax(bad.to_numpy()))
        raise input_error(
            f"{path}: line {i + 3}: row {df['row'].iloc[i]!r} is not a row of the release "
            f"(0 to {n_rows - 1})"
        )
    r = rows.to_numpy().astype(np.int64)
    empty = df["provider"].astype(str).str.strip() == ""
    if empty.any():
        i = int(np.argmax(empty.to_numpy()))
        raise input_error(f"{path}: line {i + 3}: row {r[i]} has no provider")
    seen = np.bincount(r, minlength=n_rows)
    if (seen > 1).any():
        raise input_error(f"{path}: row {int(np.argmax(seen > 1))} is listed twice")
    if (seen == 0).any():
        raise input_error(
            f"{path}: row {int(np.argmax(seen == 0))} of the release has no provider "
            f"(the file lists {len(r):,} of {n_rows:,} rows)"
        )
    out = np.empty(n_rows, dtype=object)
    out[r] = df["provider"].to_numpy()
    return out


__all__ = [
    "BINDING",
    "COLUMNS",
    "folder_integrity",
    "is_provider_rows_file",
    "provider_rows_frame",
    "read_provider_rows",
    "release_integrity",
    "write_provider_rows",
]
