"""The experiments ``kerckhoffs reproduce`` knows, by name.

Each ``paper_*`` module of this package declares its experiments in a module-level
``EXPERIMENTS`` sequence and imports nothing from here; the registry finds those modules on
first use and registers what they declare, so the dependency runs one way (registry ->
paper modules) and importing :mod:`kerckhoffs.experiments` loads no experiment.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from kerckhoffs.errors import ParameterError
from kerckhoffs.experiments.base import Experiment

EXPERIMENTS: dict[str, Experiment] = {}

_LOADED: set[str] = set()
"""The paper modules whose experiments are registered already."""


def register_experiment(*experiments: Experiment) -> None:
    """Add experiments to :data:`EXPERIMENTS` (names must be unique)."""
    for exp in experiments:
        if exp.name in EXPERIMENTS:
            raise ValueError(f"experiment {exp.name!r} registered twice")
        EXPERIMENTS[exp.name] = exp


def all_experiments() -> list[Experiment]:
    """Every registered experiment, by paper then name."""
    _load()
    return sorted(EXPERIMENTS.values(), key=lambda e: (e.paper, e.name))


def get_experiment(name: str) -> Experiment:
    """The experiment called ``name``; an unknown name lists the known ones."""
    _load()
    try:
        return EXPERIMENTS[name]
    except KeyError:
        known = ", ".join(sorted(EXPERIMENTS)) or "none yet"
        raise ParameterError(f"unknown experiment {name!r} (known: {known})") from None


def _load() -> None:
    """Register the ``EXPERIMENTS`` of every ``paper_*`` module beside this one, once each
    (modules that only hold a paper's helpers declare none)."""
    for found in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if not found.name.startswith("paper_") or found.name in _LOADED:
            continue
        module = importlib.import_module(f"{__package__}.{found.name}")
        _LOADED.add(found.name)
        register_experiment(*getattr(module, "EXPERIMENTS", ()))
