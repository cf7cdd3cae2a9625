"""Engines that run kerckhoffs's algorithms past one machine's memory (``docs/guide/dask.md``,
``docs/theory/choices.md#count-representation``):
Dask partitions (:mod:`kerckhoffs.engines.dask_table`, ``dask_check``, ``dask_mondrian``).
Optional: ``pip install 'kerckhoffs[dask]'``."""
