"""Test configuration: hypothesis runs derandomized under CI (CI=true), so a submission is
judged on the same examples every time; local runs keep exploring new ones. A property test
written without ``max_examples`` gets the budget :func:`budget.examples` gives hypothesis's
default (a third of it in the default suite, all of it with ``KERCKHOFFS_THOROUGH=1``)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from budget import DEFAULT_FULL, examples

# XLA compiles dp-synthetic's model fit (mbi's mirror descent on jax) anew for every clique
# structure MST picks: about 100 small programs, 5-7 s a release, most of the dp-synthetic
# tests' time. Without its expensive optimization passes the same programs compile faster and
# compute the same fit (they are tiny); measured on the three dp-synthetic test files, 52 -> 45 s
# of CPU. Tests only: the library leaves XLA's defaults alone. Set before anything imports jax;
# the CLI subprocesses of the tests inherit it.
os.environ.setdefault(
    "XLA_FLAGS", "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"
)

settings.register_profile(
    "ci", derandomize=True, print_blob=True, max_examples=examples(DEFAULT_FULL)
)
settings.register_profile("dev", print_blob=True, max_examples=examples(DEFAULT_FULL))
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture(scope="session")
def dask_client() -> Iterator[Any]:
    """A small Dask cluster for the engine tests (a LocalCluster of 2 workers, in the test
    process: tests/dask_shared.py says where the cross-process run is), started once per
    session, only when a test asks for it; the catalogue's Parquet faults share it."""
    from dask_shared import close_shared, shared_client

    yield shared_client()
    close_shared()


@pytest.fixture(scope="session")
def warm_cli() -> Iterator[Any]:
    """One warm ``kerckhoffs`` server for the session (tests/warm_cli.py; it takes ~2.5 s of
    CPU to start): each command a process of its own, forked from it, whose output is a file
    (no terminal) and whose environment sets no width, with this interpreter's scripts first
    on ``PATH`` (as an activated virtual environment has them)."""
    from warm_cli import WarmCli

    env = {k: v for k, v in os.environ.items() if k not in {"COLUMNS", "LINES"}}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    warm = WarmCli(env=env)
    yield warm
    warm.close()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the tests that use the shared Dask cluster last, one after the other, so that the
    cluster (started by the first of them) is closed soon after it starts instead of idling
    through the rest of the suite (an idle 2-worker cluster burns about 0.13 s of CPU a second,
    some 25 s over a default run). A stable sort: every other order is kept."""
    from dask_shared import uses_shared_cluster

    items.sort(key=uses_shared_cluster)
