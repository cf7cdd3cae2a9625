"""The experiments ``kerckhoffs reproduce`` knows, by name."""

from __future__ import annotations

from kerckhoffs.errors import ParameterError
from kerckhoffs.experiments.base import Experiment

EXPERIMENTS: dict[str, Experiment] = {}


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
    import importlib
    import pkgutil

    import kerckhoffs.experiments as pkg

    for mod in pkgutil.iter_modules(pkg.__path__):
        if mod.name.startswith("paper_"):
            importlib.import_module(f"kerckhoffs.experiments.{mod.name}")
