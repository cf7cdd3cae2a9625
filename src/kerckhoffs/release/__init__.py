"""Releases: the one representation every algorithm, check and attack shares.

A release is published tables and what is known of them. :class:`BaseRelease` is the contract
every release implements (provenance, models, check, verify, the fail-closed write, metadata,
privacy loss; :mod:`~kerckhoffs.release.contract`); :class:`Release` is a release held in
memory, a table and its :class:`Partition` into groups. Its implementations are
:class:`GroupedRelease` (generalization or bucketization; ``Release(table, partition, ...)``
builds one) and :class:`DPRelease` (a noisy count table); the Dask release
(:class:`~kerckhoffs.engines.dask_run.DaskRelease`) implements the contract with its rows on
the workers. :meth:`Release.from_published` and :meth:`Release.from_frames` read a release
back, of whichever implementation its scheme names. Files are written by
:mod:`~kerckhoffs.release.writer`, checked by :mod:`~kerckhoffs.release.integrity` and read
by :mod:`~kerckhoffs.release.reader`; their names are in :mod:`~kerckhoffs.release.format`.


This package's own module loads only what reading a release's manifest needs
(:mod:`~kerckhoffs.release.format`, :mod:`~kerckhoffs.release.integrity`,
:mod:`~kerckhoffs.release.provenance`, :mod:`~kerckhoffs.release.risk`: no pandas), so that
``kerckhoffs check`` of a release can start without pandas; the releases themselves (which
read and write tables with pandas) load on first use of any of their names (PEP 562), all
implementations at once, so that :meth:`Release.from_frames` finds every scheme's reader.
"""

import importlib
from typing import TYPE_CHECKING, Any

from kerckhoffs.release.format import (
    COUNT,
    FORMAT,
    FORMAT_VERSION,
    GROUP,
    META,
    TABLE_SUFFIXES,
    Scheme,
)
from kerckhoffs.release.integrity import (
    checked_models,
    listed_files,
    read_manifest,
    release_parts,
    unlisted_files,
)
from kerckhoffs.release.provenance import SEED_KEYS, Provenance

if TYPE_CHECKING:
    from kerckhoffs.release.contract import BaseRelease, Release, refuse_failed
    from kerckhoffs.release.count import COUNTS, DPRelease, cell_table
    from kerckhoffs.release.grouped import Bucketized, GroupedRelease
    from kerckhoffs.release.partition import Partition, group_histogram, mix64, stable_order
    from kerckhoffs.release.reader import csv_text, text_categories
    from kerckhoffs.release.synthetic import SyntheticRelease
    from kerckhoffs.release.writer import (
        PARQUET_ROW_GROUP,
        TEXT_DTYPE,
        checks_json,
        read_back,
        writable_models,
        write_parquet,
        write_release_files,
    )

_WHERE = {
    **dict.fromkeys(["BaseRelease", "Release", "refuse_failed"], "contract"),
    **dict.fromkeys(["COUNTS", "DPRelease", "cell_table"], "count"),
    **dict.fromkeys(["Bucketized", "GroupedRelease"], "grouped"),
    **dict.fromkeys(["Partition", "group_histogram", "mix64", "stable_order"], "partition"),
    **dict.fromkeys(["csv_text", "text_categories"], "reader"),
    "SyntheticRelease": "synthetic",
    **dict.fromkeys(
        [
            "PARQUET_ROW_GROUP",
            "TEXT_DTYPE",
            "checks_json",
            "read_back",
            "writable_models",
            "write_parquet",
            "write_release_files",
        ],
        "writer",
    ),
}
"""Where each name that needs pandas lives (imported on first use)."""

_IMPLEMENTATIONS = ("grouped", "count", "synthetic")
"""The modules defining a release implementation: loaded together, as when this file imported
them all (each registers the schemes it reads)."""


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:  # a submodule, as when this file imported them all
        try:
            return importlib.import_module(f"kerckhoffs.release.{name}")
        except ModuleNotFoundError:
            raise AttributeError(f"module 'kerckhoffs.release' has no attribute {name!r}") from None
    for impl in _IMPLEMENTATIONS:
        importlib.import_module(f"kerckhoffs.release.{impl}")
    value = getattr(importlib.import_module(f"kerckhoffs.release.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])


__all__ = [
    "COUNT",
    "COUNTS",
    "FORMAT",
    "FORMAT_VERSION",
    "GROUP",
    "META",
    "PARQUET_ROW_GROUP",
    "SEED_KEYS",
    "TABLE_SUFFIXES",
    "TEXT_DTYPE",
    "BaseRelease",
    "Bucketized",
    "DPRelease",
    "GroupedRelease",
    "Partition",
    "Provenance",
    "Release",
    "Scheme",
    "SyntheticRelease",
    "cell_table",
    "checked_models",
    "checks_json",
    "csv_text",
    "group_histogram",
    "listed_files",
    "mix64",
    "read_back",
    "read_manifest",
    "refuse_failed",
    "release_parts",
    "stable_order",
    "text_categories",
    "unlisted_files",
    "writable_models",
    "write_parquet",
    "write_release_files",
]
