"""Engines that run kerckhoffs's algorithms past one machine's memory (DESIGN.md section 5):
Dask partitions (:mod:`kerckhoffs.engines.dask_table`, ``dask_check``, ``dask_mondrian``).
Optional: ``pip install 'kerckhoffs[dask]'``."""
