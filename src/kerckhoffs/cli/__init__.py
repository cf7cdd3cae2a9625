"""The ``kerckhoffs`` command line: argument parsing and printing over the library's pipelines.

One module per command group: :mod:`~kerckhoffs.cli.check`, :mod:`~kerckhoffs.cli.anonymize`,
:mod:`~kerckhoffs.cli.algorithms`, :mod:`~kerckhoffs.cli.datasets`,
:mod:`~kerckhoffs.cli.demo`, :mod:`~kerckhoffs.cli.attack` (attack, audit),
:mod:`~kerckhoffs.cli.audit_algorithm`, :mod:`~kerckhoffs.cli.reproduce`,
:mod:`~kerckhoffs.cli.disclosure`, :mod:`~kerckhoffs.cli.budget`; the Dask engine's options
in :mod:`~kerckhoffs.cli.dask`, the shared printing in :mod:`~kerckhoffs.cli.output` and the
``--option KEY=VALUE`` parser in :mod:`~kerckhoffs.cli.options`. :mod:`~kerckhoffs.cli.app`
builds the application from them and runs it.

This package's own module loads nothing: importing a command module (or
:mod:`kerckhoffs.cli.output` from a notebook) must not build the whole application, and the
application imports every command module, so :func:`main` and :func:`run` load it when called.
"""

from __future__ import annotations

from collections.abc import Sequence


def run(args: Sequence[str]) -> int:
    """Run ``kerckhoffs ARGS`` and return the exit code (:func:`kerckhoffs.cli.app.run`;
    ``check`` of a release in its plain form by :func:`kerckhoffs.cli.check_light.run`,
    which loads neither pandas nor the application, when it can give the same lines;
    ``anonymize`` in its plain form by :func:`kerckhoffs.cli.anonymize_light.run`, which does
    not build the application)."""
    if args and args[0] == "check":
        from kerckhoffs.cli import check_light

        code = check_light.run(args)
        if code is not None:
            return code
    if args and args[0] == "anonymize":
        from kerckhoffs.cli import anonymize_light

        code = anonymize_light.run(args)
        if code is not None:
            return code
    from kerckhoffs.cli import app  # loaded when called: see the module docstring

    return app.run(args)


def main() -> None:
    """Console entry point (``kerckhoffs = "kerckhoffs.cli:main"`` in pyproject.toml)."""
    import os
    import sys

    args = sys.argv[1:]
    if "numpy" not in sys.modules:
        # OpenBLAS starts a thread per core when numpy loads, which spin idle for about 0.1 s
        # of CPU here; the commands multiply small matrices at most (as Dask's workers, which
        # set the same). A user's own setting stands.
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    sys.exit(run(args))


__all__ = ["main", "run"]
