"""The lattice search as it was before issue 15 (main at b4b9aba): ``evaluate``, ``search``,
``nodes`` and ``loss`` copied verbatim (imports made relative), kept callable so that
``benchmarks/bench_lattice_arx.py`` times it side by side with today's search."""

from .search import search_lattice

__all__ = ["search_lattice"]
