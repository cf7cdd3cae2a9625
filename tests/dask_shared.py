"""One small Dask cluster for the whole test session: the ``dask_client`` fixture
(tests/conftest.py) and the fault catalogue's Parquet faults (tests/faults_cli.py, whose
setups cannot ask for a fixture) share it, so it starts once. Its two workers (one thread each)
run in the test process itself (``processes=False``): a cluster of worker processes cost the
default suite 42 s of CPU against 24 s in-process, for the same tests. What crosses processes
(tasks and results pickled to and from workers of their own) is tested by the README's Dask
command, which starts a local cluster of two worker processes (``--workers 2``) and runs in
the default suite (tests/test_readme.py checks that it stays there). Started on first use; the
fixture closes it at the end of the session, and so does the interpreter's exit when no
fixture was used. The tests that use it run last (``pytest_collection_modifyitems`` in
conftest), so it does not idle through the suite."""

from __future__ import annotations

import atexit
from typing import Any

_shared: list[Any] = []  # [cluster, client] while running


def shared_client() -> Any:
    """The session's :class:`distributed.Client` to its local cluster, started if need be."""
    if not _shared:
        from distributed import Client, LocalCluster

        cluster = LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=False,
            dashboard_address=":0",
            memory_limit=0,  # in-process: a limit would measure the whole test process
        )
        _shared.extend([cluster, Client(cluster)])
        atexit.register(close_shared)
    return _shared[1]


def close_shared() -> None:
    """Close the cluster and its client, if running."""
    if _shared:
        cluster, client = _shared
        _shared.clear()
        client.close()
        cluster.close()


def uses_shared_cluster(item: Any) -> bool:
    """Whether a collected test uses the shared cluster: it asks for ``dask_client``, or it is
    one of the catalogue's Parquet faults (ids ``dask-...``)."""
    if "dask_client" in getattr(item, "fixturenames", ()):
        return True
    callspec = getattr(item, "callspec", None)
    return callspec is not None and str(callspec.id).startswith("dask-")
