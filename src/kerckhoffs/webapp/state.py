"""What the app holds while it runs: the folder, the per-process token, the addresses it
answers, the runs, and the table open with its roles (one user, this process)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kerckhoffs.data.schema import Schema
from kerckhoffs.webapp.jobs import Jobs
from kerckhoffs.webapp.workflow import Dataset, HierarchyChoice
from kerckhoffs.webapp.workspace import Workspace

HERE = Path(__file__).parent

PAGE_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-src 'self'; "
    "frame-ancestors 'self'; base-uri 'none'"
)
"""Content-Security-Policy of every page: nothing from another origin, no inline script."""


@dataclass
class AppState:
    """What the app holds while it runs (one user, this process)."""

    workspace: Workspace
    token: str
    hosts: frozenset[str] | None
    origin: str
    jobs: Jobs = field(default_factory=Jobs)
    dataset: Dataset | None = None
    schema: Schema | None = None
    roles: dict[str, str] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)
    hierarchies: dict[str, HierarchyChoice] = field(default_factory=dict)
    schema_name: str | None = None
    """The schema file loaded as it is (None: the schema the roles form built)."""
    not_shown: tuple[str, ...] = ()
    """Columns of the loaded schema with settings the roles form has no field for."""
