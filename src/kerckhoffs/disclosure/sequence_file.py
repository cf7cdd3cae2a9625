"""Reading a generalization sequence from a TOML file (format in examples/disclosure/).
Skeleton: filled in by a later commit."""

from __future__ import annotations

from pathlib import Path

from kerckhoffs.disclosure.sequence import GeneralizationSequence


def read_sequence(path: str | Path, n_rows: int) -> GeneralizationSequence:
    """The sequence in the TOML file ``path`` for a table of ``n_rows`` rows."""
    raise NotImplementedError
