"""How many examples a hypothesis property test runs.

The default suite (what ``.ci/run`` runs on every submission) must stay under three minutes of
CPU, so each property test runs a quarter of its full budget there (never fewer than 12
examples, nor more than the full budget). ``KERCKHOFFS_THOROUGH=1 pytest`` runs every property
test on its full budget; do so after changing an algorithm, a model or an attack, and along
with ``pytest -m slow`` (the exhaustive audits and the real-data runs).

Under ``CI=true`` hypothesis is derandomized (``conftest.py``), so a submission is judged on the
same examples every time; local runs keep exploring new ones.
"""

from __future__ import annotations

import os

THOROUGH = os.environ.get("KERCKHOFFS_THOROUGH", "") not in {"", "0"}
"""Run the full budgets (``KERCKHOFFS_THOROUGH=1``)."""

DEFAULT_FULL = 100
"""Hypothesis's own default budget: what a test without ``max_examples`` is written for."""


def examples(full: int) -> int:
    """The number of examples to run for a test written for ``full`` examples."""
    if THOROUGH:
        return full
    return min(full, max(12, full // 4))
