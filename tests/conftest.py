"""Test configuration: hypothesis runs derandomized under CI (CI=true), so a submission is
judged on the same examples every time; local runs keep exploring new ones."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("dev", print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture(scope="session")
def dask_client() -> Iterator[Any]:
    """A small Dask cluster for the engine tests (issue: "tests on a small LocalCluster, 2
    workers, processes"), started once per session, only when a test asks for it."""
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            memory_limit="1GiB",
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client
