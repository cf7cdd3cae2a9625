"""What this machine lets the process use, shared by everything that starts workers: the
parallel ``reproduce`` (:mod:`kerckhoffs.experiments.parallel`) and the local Dask cluster
(:mod:`kerckhoffs.engines.dask_cluster`)."""

from __future__ import annotations

import os

__all__ = ["available_cpus"]


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity, not the machine's total)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)
