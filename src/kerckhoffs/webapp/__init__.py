"""``kerckhoffs app``: a local web app for a data steward's whole workflow (open a table,
give its columns roles and hierarchies, choose an algorithm and models, run with progress,
read the report, compare two configurations, write the release and its report), in a browser
on this machine (``docs/guide/app.md``).

It calls the library only and adds no privacy logic of its own. It binds to 127.0.0.1, answers
only requests addressed to that address, wants a per-process token on every request that
changes something, and reads and writes only inside the folder it was started on
(:mod:`kerckhoffs.webapp.security`, :mod:`kerckhoffs.webapp.workspace`). Needs the ``app``
extra: ``pip install 'kerckhoffs[app]'``.
"""

from __future__ import annotations

from kerckhoffs.webapp.server import create_app, serve

__all__ = ["create_app", "serve"]
