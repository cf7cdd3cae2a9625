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
"""

from kerckhoffs.release.contract import BaseRelease, Release, refuse_failed
from kerckhoffs.release.count import COUNTS, DPRelease, cell_table
from kerckhoffs.release.format import (
    COUNT,
    FORMAT,
    FORMAT_VERSION,
    GROUP,
    META,
    TABLE_SUFFIXES,
    Scheme,
)
from kerckhoffs.release.grouped import Bucketized, GroupedRelease
from kerckhoffs.release.integrity import (
    checked_models,
    listed_files,
    read_manifest,
    release_parts,
    unlisted_files,
)
from kerckhoffs.release.partition import Partition, group_histogram, mix64, stable_order
from kerckhoffs.release.provenance import SEED_KEYS, Provenance
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
