"""The lattice search before the speed work of the ARX comparison (main at 615b350):
``evaluate`` and ``search`` copied verbatim (the import between them made relative), kept
callable so that ``benchmarks/bench_lattice.py`` times it side by side with today's search.
Its encode is today's ``Table.encode`` with the thread threshold of then (100,000 cells)."""

from .search import search_lattice

ENCODE_PARALLEL_CELLS = 100_000

__all__ = ["ENCODE_PARALLEL_CELLS", "search_lattice"]
