"""Where a randomized algorithm's random choices come from
(``docs/theory/choices.md#secret-randomness``).

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

One generator per run: a randomized function builds ``generator(seed)`` once and passes the
generator (not the seed) to every step it calls, since two generators built from one int seed
draw the same stream, so the steps' choices would be correlated (identical, in fact).

Draws that an auditor must enumerate (paper 000 Definition 4, ``docs/theory/asap.md#random-worlds``,
and the random-worlds audit, ``docs/theory/choices.md#enumerated-randomness``: the smart world
weighs each candidate table by the exact probability that the algorithm publishes the release, found
by enumerating every random choice) are written in the form with the fewest outcomes that has the
intended distribution: :func:`order_within` is the one such primitive beyond numpy's own methods.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeAlias, TypeVar

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

    >>> generator(7).integers(100).item() == generator(7).integers(100).item()
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


def order_within(classes: np.ndarray, seed: Seed | Any = None) -> np.ndarray:
    """The positions ``0 .. n-1`` sorted by ``classes`` (ascending, an int array of length
    ``n``), each class's positions in a uniformly random order, independently across classes.

    Drawn as one uniform permutation of all positions, then a stable sort by class: a uniform
    permutation restricted to any set of positions is a uniform order of that set, and its
    restrictions to disjoint sets are independent (relabelling the positions inside one set is
    a bijection of permutations that keeps the order inside every other set). So this is the
    same distribution as an independent shuffle of every class, with exact uniformity (random
    float sort keys would tie with a small probability, and a stable sort would then favour
    lower positions). ``seed`` as everywhere (a Generator to share a stream).

    A generator that implements ``order_within`` itself draws it there: the random-worlds
    auditor's enumerating generator (:class:`kerckhoffs.audits.enumerating_rng.EnumeratingRNG`)
    enumerates the ``prod(b_i!)`` orders of classes of sizes ``b_i``, not the ``n!`` of the
    permutation, with the same distribution.

    >>> order = order_within(np.array([1, 0, 1, 0]), 3)
    >>> sorted(order[:2].tolist()), sorted(order[2:].tolist())
    ([1, 3], [0, 2])
    """
    rng = generator(seed)
    classes = np.asarray(classes)
    own = getattr(rng, "order_within", None)
    if own is not None:
        return np.asarray(own(classes), dtype=np.int64)
    perm = rng.permutation(classes.shape[0])
    key = classes[perm]
    if key.size and key.min() >= 0 and key.max() < 2**15:
        key = key.astype(np.int16)  # a stable sort of int16 is a radix sort
    return perm[np.argsort(key, kind="stable")]


def check_seed(value: object, name: str = "seed") -> int:
    """``value`` as a seed an adversary or a table generator can use: a non-negative int
    (numpy refuses negative seeds); anything else is an :class:`ArgumentError` naming
    ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
        raise ArgumentError(name, value, "a seed is a non-negative integer")
    return int(value)


# -- the deterministic start of an enumerated run -------------------------------------------------
class SharedPrefix:
    """The deterministic stages one enumeration of a randomized run computes before its first
    random draw, kept for the enumeration's other branches.

    The random-worlds auditor finds ``Pr[A(candidate) = T*]`` by running the algorithm once per
    branch of its random choices (:func:`kerckhoffs.audits.enumerating_rng.enumerate_outcomes`).
    Branches differ only in the answers of the generator, so up to a branch's first draw every
    branch runs the same code on the same inputs. A function marked :func:`deterministic_stage`
    (a pure step such as Mondrian+'s cuts before Mondrian++'s pick-up) is therefore computed in
    the first branch and its ``i``-th call before the first draw returns, in every later branch,
    a copy of the first branch's ``i``-th result. After the branch's first draw nothing is
    shared. Mondrian++ on 6-row tables runs about ten branches per candidate, and its audit
    takes about a third less time (x1.45, ``benchmarks/bench_random_worlds.py``).
    """

    def __init__(self) -> None:
        self.results: dict[tuple[str, int], Any] = {}
        self.calls = 0
        self._drawn: Callable[[], bool] = lambda: True

    def start_branch(self, drawn: Callable[[], bool]) -> None:
        """A new branch begins; ``drawn()`` says whether it has made a random draw yet."""
        self.calls = 0
        self._drawn = drawn

    def drawn(self) -> bool:
        """The current branch has drawn (its stages are no longer shared)."""
        return self._drawn()


_PREFIX: ContextVar[SharedPrefix | None] = ContextVar("kerckhoffs_shared_prefix", default=None)


@contextmanager
def shared_prefix() -> Iterator[SharedPrefix]:
    """Share the deterministic stages of the runs inside the block (one enumeration)."""
    prefix = SharedPrefix()
    token = _PREFIX.set(prefix)
    try:
        yield prefix
    finally:
        _PREFIX.reset(token)


F = TypeVar("F", bound=Callable[..., Any])


def deterministic_stage(fn: F) -> F:
    """Mark ``fn`` as a pure step of an algorithm: its result depends only on its arguments
    and it draws nothing. Outside an enumeration (every real run) it is called as it is;
    inside one it is computed once per enumeration while no draw has happened
    (:class:`SharedPrefix`). A call with an ``sa_log`` (the information-flow audit records
    what the step reads) is never shared, nor one during which the branch drew. Results are
    arrays; each caller gets its own copy.
    """

    @functools.wraps(fn)
    def stage(*args: Any, **kwargs: Any) -> Any:
        prefix = _PREFIX.get()
        if prefix is None or kwargs.get("sa_log") is not None or prefix.drawn():
            return fn(*args, **kwargs)
        key = (fn.__qualname__, prefix.calls)
        prefix.calls += 1
        kept = prefix.results.get(key)
        if kept is not None:
            return kept.copy()
        out = fn(*args, **kwargs)
        if not prefix.drawn():  # a stage that drew (lazy random keys) is the branch's own
            prefix.results[key] = np.array(out, copy=True)
        return out

    return stage  # type: ignore[return-value]


__all__ = [
    "Seed",
    "SharedPrefix",
    "check_seed",
    "deterministic_stage",
    "generator",
    "order_within",
    "shared_prefix",
]
