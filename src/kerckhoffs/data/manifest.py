"""The manifest of a release directory: what was published, byte for byte.

``release.json`` records the SHA-256 of every published table file (``files``) and of
itself (``integrity``), so a release whose files were edited, truncated or mixed with another
release's after it was written is refused when read back, instead of being checked (and
certified) as if it were the release that passed the fail-closed check.

The self-digest covers the exact bytes of ``release.json`` with the digest's own value
replaced by a placeholder of the same length (:data:`PLACEHOLDER`), so changing any byte of the
file, the digest included, is detected; a JSON parser alone would accept many edits (white
space, a changed number). This is integrity against accidents and careless edits, not a
signature: whoever can rewrite every file can also rewrite the digests.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from kerckhoffs.data.io import load_json, regular_file
from kerckhoffs.errors import NO_VERIFY_HINT, InputError, input_error

ALGO = "sha256"
PLACEHOLDER = ALGO + ":" + "0" * 64
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")


def file_digest(path: Path) -> str:
    """``sha256:<hex>`` of a file's bytes."""
    with open(path, "rb") as fh:
        return f"{ALGO}:{hashlib.file_digest(fh, ALGO).hexdigest()}"


def seal(meta: dict[str, Any]) -> bytes:
    """``meta`` as the bytes of ``release.json``, with its ``integrity`` digest filled in."""
    body = dict(meta, integrity=PLACEHOLDER)
    raw = (json.dumps(body, indent=2, sort_keys=True) + "\n").encode("utf-8")
    digest = f"{ALGO}:{hashlib.sha256(raw).hexdigest()}"
    return raw.replace(PLACEHOLDER.encode(), digest.encode(), 1)


def parse(raw: bytes, path: Path) -> dict[str, Any]:
    """The metadata in ``raw`` (the bytes of ``path``), or a one-line InputError (bounded
    nesting and integers: :func:`~kerckhoffs.data.io.load_json`)."""
    meta = load_json(raw, path)
    if not isinstance(meta, dict):
        raise InputError(f"{path}: not a kerckhoffs release (the JSON is not an object)")
    return meta


def sealed(meta: dict[str, Any]) -> bool:
    """Whether the metadata claims a manifest (then it must verify)."""
    return "integrity" in meta or isinstance(meta.get("files"), dict)


def verify_self(raw: bytes, meta: dict[str, Any], path: Path) -> None:
    """Refuse ``release.json`` unless its bytes match its own ``integrity`` digest."""
    digest = meta.get("integrity")
    if not isinstance(digest, str) or not _DIGEST.match(digest):
        raise InputError(f"{path}: the integrity record is missing or malformed; refusing it")
    if raw.count(digest.encode()) != 1:
        raise InputError(f"{path}: the integrity record does not match the file; refusing it")
    blank = raw.replace(digest.encode(), PLACEHOLDER.encode(), 1)
    if f"{ALGO}:{hashlib.sha256(blank).hexdigest()}" != digest:
        raise input_error(
            f"{path}: changed after it was written (its SHA-256 does not match the one it "
            "records); refusing it (--no-verify reads the release as it is)"
        )


def verify_files(folder: Path, meta: dict[str, Any], meta_path: Path) -> None:
    """Refuse the release unless every file the manifest lists is there, byte for byte."""
    files = meta.get("files")
    if not isinstance(files, dict) or not files:
        raise InputError(f"{meta_path}: the list of published files is missing; refusing it")
    for name, digest in sorted(files.items()):
        if not isinstance(name, str) or "/" in name or name.startswith("."):
            raise InputError(f"{meta_path}: names an invalid file {name!r}; refusing it")
        f = folder / name
        if not f.exists():
            raise InputError(f"{f}: listed in {meta_path.name} but missing; refusing the release")
        regular_file(f, "release file")  # a FIFO or a device would hang the digest
        if file_digest(f) != digest:
            raise input_error(
                f"{f}: changed after it was written (its SHA-256 differs from the one in "
                f"{meta_path.name}); refusing the release ",
                NO_VERIFY_HINT,
            )


__all__ = ["file_digest", "parse", "seal", "sealed", "verify_files", "verify_self"]
