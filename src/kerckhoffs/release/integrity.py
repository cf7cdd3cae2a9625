"""The integrity of a written release: its ``release.json`` read and checked (a kerckhoffs
release of a known format, sealed with its own SHA-256, listing every data file in its folder
with theirs, its fields of the right types) before any of its tables is read."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from kerckhoffs.data import manifest
from kerckhoffs.data.io import read_regular
from kerckhoffs.data.schema import Kind, SensitiveMode
from kerckhoffs.errors import (
    NO_VERIFY_HINT,
    WITH_SCHEMA,
    InputError,
    ParameterError,
    input_error,
)
from kerckhoffs.models.base import PrivacyModel
from kerckhoffs.release.format import FORMAT, FORMAT_VERSION, META, TABLE_SUFFIXES, Scheme


def read_manifest(
    path: Path, *, verify: bool = True, files: bool = True
) -> tuple[dict[str, Any], list[str]]:
    """The ``release.json`` of release directory ``path``, checked: a kerckhoffs release of a
    format this version reads, sealed (its own digest), no data file in the folder that it
    does not list and, with ``files``, every file it lists there byte for byte; its fields
    of the right types. Returns it with the notes a reader should print (``verify=False``:
    nothing verified). One-line :class:`~kerckhoffs.errors.InputError` otherwise.

    A release of format 1 (kerckhoffs 0.1) records no digests, so nothing shows that its files
    are the ones written, and a ``release.json`` whose ``format_version`` was lowered to 1
    would look the same: it is refused unless verification is turned off (``verify=False``),
    which reads it with a note."""
    meta_path = path / META
    if not os.path.lexists(meta_path):
        raise input_error(
            f"{path}: a directory without {META}, so not a kerckhoffs release (to check "
            "another tool's table, pass the table file ",
            WITH_SCHEMA,
        )
    raw = read_regular(meta_path, META)
    meta = manifest.parse(raw, meta_path)
    if meta.get("format") != FORMAT:
        raise InputError(f'{meta_path}: not a kerckhoffs release (no "format": "{FORMAT}")')
    version = meta.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InputError(f"{meta_path}: format_version {version!r} is not a known version")
    if version > FORMAT_VERSION:
        raise InputError(
            f"{meta_path}: written by a newer kerckhoffs (format {version}, this one reads "
            f"up to {FORMAT_VERSION}); upgrade kerckhoffs to read it"
        )
    notes = []
    unlisted = unlisted_files(path, meta)
    if not verify:
        notes.append(
            f"{path}: files not verified against release.json (verification turned off): "
            "reading them as they are"
            if version >= 2 or manifest.sealed(meta)
            else f"{path}: format {version} (kerckhoffs 0.1) records no file digests; read "
            "unverified (verification turned off)"
        )
        if unlisted and listed_files(meta) is not None:
            notes.append(f"{path}: ignoring {', '.join(unlisted)}: not listed in {META}")
    elif version >= 2 or manifest.sealed(meta):
        manifest.verify_self(raw, meta, meta_path)
        if unlisted:
            what = (
                f"{path / unlisted[0]}: a data file {META} does not list (not part of the "
                "sealed release: added after it was written); refusing the release"
            )
            raise InputError(
                f"{what} (verify=False reads only the files it lists)",
                cli=f"{what} (--no-verify reads only the files it lists)",
            )
        if files:
            manifest.verify_files(path, meta, meta_path)
    else:
        raise input_error(
            f"{meta_path}: format {version} (kerckhoffs 0.1) records no file digests, so "
            "nothing shows its files are the ones written; refusing it ",
            NO_VERIFY_HINT,
        )
    _check_meta(meta, meta_path)
    return meta, notes


def listed_files(meta: dict[str, Any]) -> set[str] | None:
    """The file names ``release.json`` lists (a digest per name; format 1 may hold a plain
    list), or None when it lists none."""
    files = meta.get("files")
    if isinstance(files, dict | list) and files:
        return {str(f) for f in files}
    return None


def unlisted_files(path: Path, meta: dict[str, Any]) -> list[str]:
    """Data files (:data:`TABLE_SUFFIXES`) in release folder ``path`` that ``release.json``
    does not list, sorted. Hidden names (``.DS_Store``, the ``._NAME`` files macOS leaves
    on copied folders) are not counted: the reader never opens an unlisted file anyway, the
    refusal only says that someone added a table to a sealed release."""
    listed = listed_files(meta) or set()
    return sorted(
        p.name
        for p in path.iterdir()
        if p.name != META
        and p.name not in listed
        and not p.name.startswith(".")
        and p.suffix.lower() in TABLE_SUFFIXES
    )


def checked_models(meta: dict[str, Any]) -> tuple[PrivacyModel, ...]:
    """The models a release was checked for at write time, as its metadata records them
    (none for releases written before they were recorded as data, or by other tools)."""
    checks = meta.get("checks")
    if not isinstance(checks, list):
        return ()
    specs = [c.get("spec") for c in checks if isinstance(c, dict)]
    records = [s for s in specs if isinstance(s, dict)]
    if not records or len(records) != len(specs):
        return ()
    models = []
    for i, record in enumerate(records):
        try:
            models.append(PrivacyModel.from_dict(record))
        except (ParameterError, TypeError, ValueError, OverflowError) as exc:
            # a model's parameter of the wrong type or out of range (an edited, resealed file)
            text = " ".join(str(exc).split())[:200]
            raise InputError(
                f"{META}: checks[{i}].spec: not a model kerckhoffs reads ({text})"
            ) from None
    return tuple(models)


def release_parts(meta: dict[str, Any], name: str) -> list[str]:
    """The parts ``NAME-00000.parquet``, ... a release lists in its manifest, in order."""
    files = meta.get("files")
    names = files if isinstance(files, dict) else {}
    pattern = re.compile(rf"^{re.escape(name)}-\d{{5}}\.parquet$")
    return sorted(str(f) for f in names if pattern.match(str(f)))


def _check_meta(meta: dict[str, Any], where: Path | str) -> None:
    """Refuse metadata whose fields the reader needs are missing or of the wrong type (an
    edited file may hold any JSON value anywhere: a list where a name was, a number where a
    kind was)."""

    def bad(key: str, want: str) -> InputError:
        return InputError(f"{where}: field {key!r} is missing or not {want}")

    def one_of(value: Any, allowed: set[str]) -> bool:
        return isinstance(value, str) and value in allowed

    if not one_of(meta.get("scheme"), {s.value for s in Scheme}):
        raise bad("scheme", "one of " + ", ".join(s.value for s in Scheme))
    quasi = meta.get("quasi")
    if not isinstance(quasi, list) or not quasi:
        raise bad("quasi", "a non-empty list")
    kinds = {k.value for k in Kind}
    for i, q in enumerate(quasi):
        if not isinstance(q, dict) or not isinstance(q.get("name"), str):
            raise bad(f"quasi[{i}].name", "a column name")
        if not one_of(q.get("kind", Kind.CATEGORICAL.value), kinds):
            raise bad(f"quasi[{i}].kind", "numeric or categorical")
    sa = meta.get("sensitive")
    if not isinstance(sa, dict) or not isinstance(sa.get("name"), str):
        raise bad("sensitive.name", "a column name")
    if not one_of(sa.get("kind", Kind.CATEGORICAL.value), kinds):
        raise bad("sensitive.kind", "numeric or categorical")
    sv = meta.get("sensitive_values")
    if sv is not None and not (isinstance(sv, list) and all(isinstance(v, str) for v in sv)):
        raise bad("sensitive_values", "a list of values")
    modes = {m.value for m in SensitiveMode}
    if not one_of(meta.get("sensitive_mode", SensitiveMode.SET.value), modes):
        raise bad("sensitive_mode", "set or each")
    prov = meta.get("provenance", {})
    if (
        not isinstance(prov, dict)
        or not isinstance(prov.get("parameters", {}), dict)
        or not all(isinstance(prov.get(k, ""), str) for k in ("algorithm", "version"))
    ):
        raise bad("provenance", "an object with an algorithm (a name) and parameters")


__all__ = ["checked_models", "listed_files", "read_manifest", "release_parts", "unlisted_files"]
