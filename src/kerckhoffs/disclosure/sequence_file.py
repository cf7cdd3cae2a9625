"""Reading a generalization sequence from a TOML file (the format of
``examples/disclosure/sequence.toml``; paper 002 Table 2 is the example).

One ``[[generalization]]`` table per candidate, most useful first (the sequence ends
implicitly in "release nothing"). Each gives its partition of the data rows by **row
position** (0 = the first data row), as either

- ``groups = [[0, 1], [2, 3], ...]``: the rows of each group, every row exactly once; or
- ``labels = [...]``: one group label per row (ints or strings, relabelled by first
  appearance),

plus an optional ``name`` (default ``g1``, ``g2``, ...) and ``group_names`` (display labels,
one per group; checked for count only). Every problem is one :class:`InputError` line naming
the file and the generalization.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import numpy as np

from kerckhoffs.disclosure.sequence import GeneralizationSequence
from kerckhoffs.errors import InputError, ParameterError


def read_sequence(path: str | Path, n_rows: int) -> GeneralizationSequence:
    """The sequence in the TOML file ``path`` for a table of ``n_rows`` rows.

    Example: ``read_sequence("examples/disclosure/sequence.toml", 10).names`` is
    ``("g1", "g2", "g3")``, paper 002's Table 2.
    """
    p = Path(path)
    try:
        raw = tomllib.loads(p.read_text(encoding="utf-8"))
    except OSError as e:
        raise InputError(f"{p}: cannot read the sequence file ({e.strerror or e})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise InputError(f"{p}: not a TOML file ({str(e).splitlines()[0]})") from None
    entries = raw.get("generalization")
    if not isinstance(entries, list) or not entries:
        raise InputError(f"{p}: no [[generalization]] entries")
    unknown = sorted(set(raw) - {"generalization"})
    if unknown:
        raise InputError(f"{p}: unknown key {unknown[0]!r} (expected [[generalization]])")
    labels, names = [], []
    for k, entry in enumerate(entries):
        where = f"{p}: generalization {k + 1}"
        if not isinstance(entry, dict):
            raise InputError(f"{where} is not a table")
        labels.append(_partition(entry, n_rows, where))
        name = entry.get("name", f"g{k + 1}")
        if not isinstance(name, str) or not name:
            raise InputError(f"{where}: name must be a non-empty string")
        names.append(name)
        group_names = entry.get("group_names")
        n_groups = int(labels[-1].max()) + 1
        if group_names is not None and (
            not isinstance(group_names, list) or len(group_names) != n_groups
        ):
            raise InputError(f"{where}: group_names must list {n_groups} labels, one per group")
    if len(set(names)) != len(names):
        raise InputError(f"{p}: generalization names must be distinct")
    try:
        return GeneralizationSequence.from_labels(labels, names)
    except ParameterError as e:
        raise InputError(f"{p}: {e}") from None


def _partition(entry: dict[str, Any], n_rows: int, where: str) -> np.ndarray:
    unknown = sorted(set(entry) - {"name", "groups", "labels", "group_names"})
    if unknown:
        raise InputError(f"{where}: unknown key {unknown[0]!r}")
    has_groups, has_labels = "groups" in entry, "labels" in entry
    if has_groups == has_labels:
        raise InputError(f"{where}: give exactly one of groups = [[rows]] or labels = [...]")
    if has_labels:
        values = entry["labels"]
        if not isinstance(values, list) or len(values) != n_rows:
            raise InputError(f"{where}: labels must list one group per row ({n_rows} rows)")
        if not all(isinstance(v, int | str) and not isinstance(v, bool) for v in values):
            raise InputError(f"{where}: labels must be integers or strings")
        first: dict[object, int] = {}
        return np.array([first.setdefault(v, len(first)) for v in values], dtype=np.int64)
    groups = entry["groups"]
    if not isinstance(groups, list) or not all(isinstance(g, list) and g for g in groups):
        raise InputError(f"{where}: groups must be a list of non-empty lists of row positions")
    out = np.full(n_rows, -1, dtype=np.int64)
    for gid, rows in enumerate(groups):
        for r in rows:
            if not isinstance(r, int) or isinstance(r, bool) or not 0 <= r < n_rows:
                raise InputError(f"{where}: row {r!r} is not a position 0..{n_rows - 1}")
            if out[r] != -1:
                raise InputError(f"{where}: row {r} is in more than one group")
            out[r] = gid
    missing = np.flatnonzero(out < 0)
    if missing.size:
        raise InputError(f"{where}: row {int(missing[0])} is in no group")
    return out
