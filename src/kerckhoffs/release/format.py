"""What a release's files are called and which format they are in: the names every reader
and writer of :mod:`kerckhoffs.release` (and the Dask engine's writer) share."""

from __future__ import annotations

from enum import StrEnum

GROUP = "group"
COUNT = "count"
META = "release.json"
FORMAT = "kerckhoffs-release"
FORMAT_VERSION = 2
TABLE_SUFFIXES = frozenset({".csv", ".tsv", ".parquet", ".pq", ".json", ".feather", ".arrow"})
"""Names a reader could take for a release's table (or its metadata): in a release folder,
every such file must be listed in ``release.json``."""


class Scheme(StrEnum):
    """How a release publishes its groups."""

    GENERALIZATION = "generalization"
    BUCKETIZATION = "bucketization"
    DP = "dp"
    """A noisy count table over a public cell domain (paper 004; :mod:`kerckhoffs.dp.counts`)."""
    SYNTHETIC = "synthetic"
    """DP synthetic rows fitted to noisy marginals (MST/AIM; :mod:`kerckhoffs.dp.synthetic`)."""


__all__ = ["COUNT", "FORMAT", "FORMAT_VERSION", "GROUP", "META", "TABLE_SUFFIXES", "Scheme"]
