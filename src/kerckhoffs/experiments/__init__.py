"""Reproduction of every experiment of the five papers: declarative experiment specs
(:class:`Experiment`), one runner that caches finished points and writes a CSV and a PNG per
experiment, and the experiments themselves in ``paper_*.py`` modules (one per paper)."""

from kerckhoffs.experiments.base import DATASETS, Context, Experiment, Plot
from kerckhoffs.experiments.registry import (
    EXPERIMENTS,
    all_experiments,
    get_experiment,
    register_experiment,
)
from kerckhoffs.experiments.runner import plot_experiment, point_key, run_experiment

__all__ = [
    "DATASETS",
    "EXPERIMENTS",
    "Context",
    "Experiment",
    "Plot",
    "all_experiments",
    "get_experiment",
    "plot_experiment",
    "point_key",
    "register_experiment",
    "run_experiment",
]
