"""The enumerating generator: every outcome of a randomized run with its exact probability.

The random-worlds auditor (:mod:`kerckhoffs.audits.random_worlds`) weighs each candidate table
by ``Pr[A(candidate) = T*]``, the probability that the algorithm publishes the observed release
(paper 000 Definition 4, the smart world, ``docs/theory/asap.md#random-worlds``; our design of the
random-worlds audit, ``docs/theory/asap.md#audits`` and
``docs/theory/choices.md#enumerated-randomness``, proposes "a replayable RNG that records the arity
of every choice call and a DFS over choice scripts"). This module is that RNG.

Every algorithm of the project draws its randomness from
``kerckhoffs.randomness.generator(seed)``, which hands through any object with a Generator's
``integers`` and ``random`` methods. The auditor passes an :class:`EnumeratingRNG` in as the
algorithm's ``seed``: a stand-in for :class:`numpy.random.Generator` that decomposes every
draw (``integers``, ``choice``, ``permutation``, ``shuffle``, ``random`` and
:func:`kerckhoffs.randomness.order_within`) into elementary uniform choices among ``k``
outcomes and explores every branch depth-first, each leaf with its exact probability (the
product of ``1/k``). Nothing process-wide is replaced to see the draws (STYLE.md), and no
algorithm function is swapped: an algorithm is enumerated exactly as it runs. An algorithm that
calls ``generator(seed)`` more than once gets the same enumerating object each time, so its
draws are enumerated as independent: the distribution of a run with fresh OS randomness
(``seed=None``), the only one that matters for publishing (DESIGN.md section 5). Seeds are not
enumerated: no finite set of seeds is provably exhaustive for numpy's generators.

``random(size)`` is enumerated as a uniformly random *ranking* of the ``size`` values (returned
as distinct floats in ``(0, 1)``), exact for the way the project uses it (random sort keys and
tie breaks); a scalar ``random()`` compared with a threshold cannot be enumerated and raises.

Branch counts grow with ``n!`` for a permutation of ``n`` rows, so the algorithms draw in the
form with the fewest outcomes that has their intended distribution, and this generator
enumerates that form directly: :func:`kerckhoffs.randomness.order_within` (an independent
uniform order inside each class: Anatomy's row choice, MASK+'s relabelling) is
``prod(b_i!)`` branches, and random sort keys ordered inside classes by ``np.lexsort`` or row by
row by ``np.argsort`` are ranked class by class (:class:`RandomKeys`). Every branch is a real
run of the algorithm, except that a step marked
:func:`~kerckhoffs.randomness.deterministic_stage` and called before the branch's first draw
is computed once per enumeration (every branch would compute the same thing:
:class:`~kerckhoffs.randomness.SharedPrefix`); :class:`AuditTooLarge` beyond ``max_branches``
leaves.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from contextlib import nullcontext
from fractions import Fraction
from typing import Any

import numpy as np

from kerckhoffs.errors import KerckhoffsError
from kerckhoffs.randomness import shared_prefix

__all__ = ["AuditTooLarge", "EnumeratingRNG", "RandomKeys", "enumerate_outcomes"]


class AuditTooLarge(KerckhoffsError):
    """The table has too many candidate worlds or random branches to enumerate."""


class EnumeratingRNG:
    """A :class:`numpy.random.Generator` stand-in that replays one branch of a choice script.

    Each elementary draw is a uniform choice among ``k`` outcomes. The script fixes the
    outcome of the first draws; later draws take outcome 0 and extend the script.
    :func:`enumerate_outcomes` walks every script depth-first. Unsupported methods raise
    ``AttributeError`` (loud: unenumerated randomness would make the weights wrong).
    """

    def __init__(self, script: list[int] | None = None) -> None:
        self.script: list[int] = list(script or [])
        self.arity: list[int] = []
        self.pos = 0
        self.prob = Fraction(1)

    # elementary draw
    def _draw(self, k: int) -> int:
        k = int(k)
        if k <= 0:
            raise ValueError("EnumeratingRNG: a choice among no outcomes")
        if k == 1:
            return 0
        if self.pos < len(self.script):
            v = self.script[self.pos]
        else:
            v = 0
            self.script.append(0)
        self.arity.append(k)
        self.pos += 1
        self.prob /= k
        return v

    def has_drawn(self) -> bool:
        """This branch has made a draw among two or more outcomes."""
        return self.pos > 0

    def _ranking(self, n: int) -> np.ndarray:
        """A uniformly random permutation of ``range(n)`` (Fisher-Yates, n - 1 draws)."""
        perm = list(range(n))
        for i in range(n - 1, 0, -1):
            j = self._draw(i + 1)
            perm[i], perm[j] = perm[j], perm[i]
        return np.asarray(perm, dtype=np.int64)

    # the Generator API the project uses
    def integers(
        self,
        low: int,
        high: int | None = None,
        size: int | tuple[int, ...] | None = None,
        dtype: Any = np.int64,
        endpoint: bool = False,
    ) -> Any:
        if high is None:
            low, high = 0, low
        lo = np.asarray(low, dtype=np.int64)
        hi = np.asarray(high, dtype=np.int64) + (1 if endpoint else 0)
        if size is None and lo.ndim == 0 and hi.ndim == 0:
            return np.dtype(dtype).type(int(lo) + self._draw(int(hi - lo)))
        shape = np.broadcast_shapes(
            lo.shape, hi.shape, () if size is None else np.shape(np.empty(size))
        )
        lo_b = np.broadcast_to(lo, shape).ravel()
        hi_b = np.broadcast_to(hi, shape).ravel()
        out = [int(a) + self._draw(int(b - a)) for a, b in zip(lo_b, hi_b, strict=True)]
        return np.asarray(out, dtype=dtype).reshape(shape)

    def random(self, size: int | tuple[int, ...] | None = None, dtype: Any = np.float64) -> Any:
        if size is None:
            raise AttributeError(
                "EnumeratingRNG: a scalar random() cannot be enumerated exactly (only random "
                "sort keys, random(size), can)"
            )
        return RandomKeys.fresh(self, size)

    def permutation(self, x: int | np.ndarray) -> np.ndarray:
        if isinstance(x, (int, np.integer)):
            return self._ranking(int(x))
        arr = np.asarray(x)
        return arr[self._ranking(arr.shape[0])]

    def shuffle(self, x: Any) -> None:
        perm = self._ranking(len(x))
        x[...] = np.asarray(x)[perm]

    def choice(
        self,
        a: int | np.ndarray,
        size: int | tuple[int, ...] | None = None,
        replace: bool = True,
        p: np.ndarray | None = None,
        axis: int = 0,
        shuffle: bool = True,
    ) -> Any:
        if p is not None:
            raise AttributeError("EnumeratingRNG: choice with probabilities p is not supported")
        pool = np.arange(a) if isinstance(a, (int, np.integer)) else np.asarray(a)
        m = pool.shape[0]
        if size is None:
            return pool[self._draw(m)]
        count = int(np.prod(size))
        if replace:
            idx = [self._draw(m) for _ in range(count)]
        else:
            left = list(range(m))
            idx = [left.pop(self._draw(len(left))) for _ in range(count)]
        return pool[np.asarray(idx, dtype=np.int64)].reshape(size)

    def order_within(self, classes: np.ndarray) -> np.ndarray:
        """:func:`kerckhoffs.randomness.order_within`: the positions sorted by class, each
        class's in a uniformly random order, drawn as one ranking per class (``prod(b_i!)``
        branches for classes of sizes ``b_i``; the numpy version's one permutation of all
        ``n`` positions would give ``n!`` with the same distribution)."""
        classes = np.asarray(classes)
        out = np.argsort(classes, kind="stable")
        bounds = np.flatnonzero(np.diff(classes[out])) + 1
        for seg in np.split(np.arange(out.shape[0]), bounds):
            out[seg] = out[seg][self._ranking(seg.shape[0])]
        return out

    def next_script(self) -> list[int] | None:
        """The next script in depth-first order after the branch just replayed (None: done)."""
        for p in range(len(self.arity) - 1, -1, -1):
            if self.script[p] + 1 < self.arity[p]:
                return [*self.script[:p], self.script[p] + 1]
        return None


class RandomKeys(np.ndarray):
    """Uniform random floats from :meth:`EnumeratingRNG.random`, drawn lazily at first use.

    The project uses ``random(size)`` as sort keys. Their values matter only through their
    ranking, which is uniform; how much of it matters depends on the use, so the ranking is
    drawn when the keys are first used:

    - ``np.lexsort(..., keys, more significant keys...)``: only the order inside each class of
      equal more-significant keys matters (the keys are distinct almost surely, so less
      significant keys never do): one uniform ranking per class, ``prod(c_i!)`` branches;
    - ``np.argsort(keys, axis=-1)`` on a 2-D array: one ranking per row;
    - anything else: one uniform ranking of all values (``size!`` branches).

    After a partial draw (the first two), any further use raises: the full ranking would
    have to be drawn conditionally, which the project never needs.
    """

    _rng: EnumeratingRNG
    _state: str

    @classmethod
    def fresh(cls, rng: EnumeratingRNG, size: int | tuple[int, ...]) -> RandomKeys:
        out = np.zeros(size, dtype=np.float64).view(cls)
        out._rng = rng
        out._state = "fresh"
        return out

    def _plain(self) -> np.ndarray:
        return self.view(np.ndarray)

    def _materialize(self) -> np.ndarray:
        state = getattr(self, "_state", "full")
        if state == "partial":
            raise AttributeError(
                "EnumeratingRNG: random keys used again after a partial draw (lexsort/argsort)"
            )
        if state == "fresh":
            count = int(self.size)
            rank = self._rng._ranking(count)
            self._plain().reshape(-1)[:] = (rank + 0.5) / max(count, 1)
            self._state = "full"
        return self._plain()

    def __array_finalize__(self, obj: Any) -> None:
        # views and results of numpy operations on the keys are plain, concrete values
        self._state = "full"

    def __getitem__(self, item: Any) -> Any:
        return self._materialize()[item]

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        args = [x._materialize() if isinstance(x, RandomKeys) else x for x in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(
                x._materialize() if isinstance(x, RandomKeys) else x for x in kwargs["out"]
            )
        return getattr(ufunc, method)(*args, **kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        if func is np.lexsort and kwargs.get("axis", -1) in (-1, 0):
            keys = args[0] if args else kwargs["keys"]
            if isinstance(keys, tuple | list) and self._lexsort_ready(keys):
                return self._lexsort(list(keys))
        if func is np.argsort and isinstance(args[0], RandomKeys):
            axis = kwargs.get("axis", args[1] if len(args) > 1 else -1)
            a = args[0]
            if a._state == "fresh" and a.ndim == 2 and axis in (-1, 1):
                a._state = "partial"
                rows = [a._rng._ranking(a.shape[1]) for _ in range(a.shape[0])]
                ranks = np.asarray(rows, dtype=np.int64).reshape(a.shape)
                return np.argsort(ranks, axis=1, kind="stable")

        def plain(x: Any) -> Any:
            if isinstance(x, RandomKeys):
                return x._materialize()
            if isinstance(x, tuple | list):
                return type(x)(plain(y) for y in x)
            return x

        return func(*plain(list(args)), **{k: plain(v) for k, v in kwargs.items()})

    @staticmethod
    def _lexsort_ready(keys: Sequence[Any]) -> bool:
        return all((k.ndim if isinstance(k, np.ndarray) else np.ndim(k)) == 1 for k in keys)

    @staticmethod
    def _lexsort(keys: list[Any]) -> np.ndarray:
        pos = max(i for i, k in enumerate(keys) if isinstance(k, RandomKeys))
        rk: RandomKeys = keys[pos]
        major = [
            k._materialize() if isinstance(k, RandomKeys) else np.asarray(k)
            for k in keys[pos + 1 :]
        ]
        if rk._state != "fresh":
            return np.lexsort([rk._materialize(), *major])
        n = int(rk.shape[0])
        if major:
            _, cls_id = np.unique(np.stack(major, axis=1), axis=0, return_inverse=True)
            cls_id = np.asarray(cls_id).reshape(-1)
        else:
            cls_id = np.zeros(n, dtype=np.int64)
        value = np.empty(n, dtype=np.int64)
        for c in np.unique(cls_id).tolist():
            members = np.flatnonzero(cls_id == c)
            value[members] = rk._rng._ranking(members.size)
        rk._state = "partial"
        return np.lexsort([value, *major])


def enumerate_outcomes(
    run: Callable[[EnumeratingRNG], Hashable],
    *,
    max_branches: int = 200_000,
    share_prefix: bool = True,
) -> dict[Hashable, Fraction]:
    """Every outcome of ``run(rng)`` with its exact probability, enumerating all random choices
    it draws from ``rng`` (an :class:`EnumeratingRNG`; pass it on as an algorithm's ``seed``).
    ``share_prefix``: the branches share the deterministic stages computed before their first
    draw (:class:`kerckhoffs.randomness.SharedPrefix`; False recomputes them in every branch,
    with the same result).

    >>> enumerate_outcomes(lambda rng: int(rng.integers(2)) + int(rng.integers(2)))
    {0: Fraction(1, 4), 1: Fraction(1, 2), 2: Fraction(1, 4)}
    """
    out: dict[Hashable, Fraction] = {}
    script: list[int] | None = []
    branches = 0
    with shared_prefix() if share_prefix else nullcontext() as prefix:
        while script is not None:
            rng = EnumeratingRNG(script)
            if prefix is not None:
                prefix.start_branch(rng.has_drawn)
            key = run(rng)
            out[key] = out.get(key, Fraction(0)) + rng.prob
            branches += 1
            if branches > max_branches:
                raise AuditTooLarge(
                    f"more than {max_branches} random branches for one candidate world"
                )
            script = rng.next_script()
    return out
