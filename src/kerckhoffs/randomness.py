"""Where a randomized algorithm's random choices come from (DESIGN.md section 5).

A randomized step (stratified pick-up, Anatomy's pick, MASK's perturbation) protects only
while the adversary does not know its random choices: the adversary knows the algorithm, so
with the seed it re-runs the algorithm on every candidate table and keeps those that reproduce
the release, and the randomized algorithm is then exactly as leaky as its deterministic
version (paper 000, section 7: the random choice is what makes the ++ variants safe).

Hence the rule: with no seed, randomness comes from the operating system's secure source,
fresh on every run (numpy's ``default_rng(None)`` seeds its PCG64 from ``os.urandom`` via
``SeedSequence``). A seed (an int, or a ready :class:`numpy.random.Generator`, scikit-learn's
``random_state`` convention) is for tests and experiments; it is never written into a
published file (see :mod:`kerckhoffs.release`).
"""

from __future__ import annotations

from typing import Any, TypeAlias

import numpy as np

from kerckhoffs.errors import ArgumentError

Seed: TypeAlias = int | np.random.Generator | None
"""A seed as every algorithm takes it: None (fresh OS randomness), an int, or a Generator."""


def generator(seed: Seed | Any) -> np.random.Generator:
    """The random generator for ``seed``.

    None draws fresh entropy from the operating system; an int gives the same stream every
    time (tests, experiments); a Generator is used as it is, so a caller can share one stream
    across steps. Anything with a Generator's interface (the random-worlds auditor's
    enumerating generator) is passed through unchanged.

    >>> generator(7).integers(100) == generator(7).integers(100)
    True
    """
    if seed is None or isinstance(seed, np.random.Generator):
        return np.random.default_rng(seed)
    if isinstance(seed, bool):
        raise TypeError("seed must be None, an int or a numpy Generator, not a bool")
    if isinstance(seed, int | np.integer):
        if seed < 0:
            raise ValueError(f"seed must be a non-negative int, got {seed}")
        return np.random.default_rng(int(seed))
    if hasattr(seed, "integers") and hasattr(seed, "random"):
        return seed  # a Generator look-alike (the auditor's enumerating RNG)
    raise TypeError(f"seed must be None, an int or a numpy Generator, not {type(seed).__name__}")


def check_seed(value: object, name: str = "seed") -> int:
    """``value`` as a seed an adversary or a table generator can use: a non-negative int
    (numpy refuses negative seeds); anything else is an :class:`ArgumentError` naming
    ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
        raise ArgumentError(name, value, "a seed is a non-negative integer")
    return int(value)


__all__ = ["Seed", "check_seed", "generator"]
