"""Stratified pick-up: Anatomy run inside each large group of a partition (paper 000, Alg. 4).

Paper 000 Algorithm 4, Theorems 7.1 and 7.2 (``docs/theory/asap.md#stratified-pickup``). The
look-ahead algorithms (Mondrian+, Hilb+ strict, MASK+) are algorithm-safe but publish coarse groups;
stratified pick-up recovers utility without giving the safety back. Every input group ``G`` with
``|G| >= 2l`` is replaced by the groups :func:`~kerckhoffs.algorithms.anatomy.anatomy_groups` builds
from its rows, with the row taken from a bucket chosen **uniformly at random** (seeded); a group
with ``|G| < 2l`` cannot hold two groups of ``l`` rows and passes through unchanged (being
l-diverse, its SA values are already pairwise distinct).

- **Theorem 7.1.** Every group Anatomy builds has between ``l`` and ``2l - 1`` rows, all with
  distinct SA values; the output refines the input (each output group lies inside one input
  group) and every input group keeps its SA multiset (rows are regrouped, never changed).
- **Theorem 7.2.** Pick-up preserves simulatability: inside ``G`` it reads nothing but the SA
  multiset of ``G`` (published, since ``G`` is the union of the groups it is cut into) and
  randomness. The row choice must be random: a deterministic, QI-ordered choice leaks
  (one of our edge-case vectors, ``docs/theory/asap.md#worked-examples``: 286 of 400 random
  instances violate ASAP in our prototype).
  ``pick="lowest-row"`` exists only for auditors that demonstrate that leak.

**Buckets.** Those of :func:`~kerckhoffs.algorithms.anatomy.sa_buckets`: one per SA value
(paper 000's setting); with a sensitive subset in ``set`` mode the subset is one bucket. For
MASK++ the caller passes the *published* (perturbed) SA values as ``sa`` (paper 000 section 7,
``docs/theory/asap.md#plus-plus``). An input
group is split only when its bucket profile is l-eligible (``|G| >= l * S_max`` over the
buckets), which Theorem 7.1 assumes and every l-diverse group satisfies when all SA values
count; under a sensitive subset a group may be l-diverse while a non-sensitive value fills more
than ``|G| / l`` rows, and such a group passes through unchanged (a decision taken on its SA
multiset alone, so still simulatable).

**Speed.** One stable sort of the rows by input group and one ``bincount`` of (group, bucket)
pairs decide every group; Anatomy then runs once per eligible group (a loop over groups, each
call numpy over its rows, the schedule computed from the bucket sizes alone). The RNG is
consumed group by group in input group-id order, so a seed fixes the output.
"""

from __future__ import annotations

import numpy as np

from kerckhoffs.algorithms.anatomy import PICKS, anatomy_groups
from kerckhoffs.algorithms.sa_reads import SAReadLog
from kerckhoffs.data.schema import SensitiveMode
from kerckhoffs.data.table import Table
from kerckhoffs.errors import ParameterError
from kerckhoffs.randomness import Seed, generator
from kerckhoffs.release import Partition

__all__ = ["bucket_of_sa", "pickup"]


def bucket_of_sa(table: Table) -> np.ndarray:
    """Bucket id of every SA code, as :func:`~kerckhoffs.algorithms.anatomy.sa_buckets` forms
    them: the identity, except that a sensitive subset in ``set`` mode shares one bucket."""
    mapping = np.arange(max(table.n_sa, 1), dtype=np.int64)
    sens = np.asarray(table.sensitive, dtype=bool)
    if sens.any() and not sens.all() and table.schema.sensitive_mode == SensitiveMode.SET:
        mapping[sens] = int(np.flatnonzero(sens)[0])
    return mapping


def pickup(
    table: Table,
    partition: Partition | np.ndarray,
    l: int,  # noqa: E741
    seed: Seed = None,
    *,
    sa: np.ndarray | None = None,
    pick: str = "random",
    sa_log: SAReadLog | None = None,
) -> Partition:
    """Stratified pick-up (``docs/theory/asap.md#stratified-pickup``) of ``partition`` at diversity
    ``l``.

    ``partition`` is a :class:`~kerckhoffs.release.Partition` (or a group id per row) of
    ``table``, normally the l-diverse output of a simulatable algorithm. Each group with at
    least ``2l`` rows and an l-eligible SA profile is cut by Anatomy (uniformly random row
    choice, or ``pick="lowest-row"``, which leaks and is for auditors only); the others are
    kept. ``seed``: an int, a :class:`numpy.random.Generator` (a caller's stream, shared with
    its earlier steps: MASK++ passes the generator its MASK+ step drew from), or None for fresh
    randomness from the operating system; one generator is built from it and drives every
    group's Anatomy in turn. Unused with ``pick="lowest-row"``. ``sa`` (default ``table.sa``)
    are the SA codes the groups are built from (MASK++ passes its perturbed values).
    ``sa_log`` records the one SA statistic read: the multiset of every input group. Returns
    the refined partition (canonical group ids).
    """
    if isinstance(l, float) and not float(l).is_integer():
        raise ParameterError(f"pickup: l must be a whole number, got l={l}")
    l = int(l)  # noqa: E741
    if l < 1:
        raise ParameterError(f"pickup: l must be at least 1, got {l}")
    if pick not in PICKS:
        raise ParameterError(f"pickup: pick must be one of {', '.join(PICKS)}, got {pick!r}")
    group = np.asarray(
        partition.group if isinstance(partition, Partition) else partition, dtype=np.int64
    )
    n = table.n
    if group.shape != (n,):
        raise ValueError(f"pickup: the partition has {group.shape[0]} rows, the table {n}")
    codes = table.sa if sa is None else np.asarray(sa)
    if codes.shape != (n,):
        raise ValueError(f"pickup: sa has {codes.shape[0]} values, the table {n} rows")
    if n == 0:
        return Partition(np.zeros(0, dtype=np.int32))
    bucket = bucket_of_sa(table)[codes]
    n_buckets = int(bucket.max()) + 1
    _, group = np.unique(group, return_inverse=True)
    n_groups = int(group.max()) + 1
    if sa_log is not None:
        sa_log.record(np.arange(n), group, "SA multiset of each input group (stratified pick-up)")

    sizes = np.bincount(group, minlength=n_groups)
    smax = np.bincount(group * n_buckets + bucket, minlength=n_groups * n_buckets)
    smax = smax.reshape(n_groups, n_buckets).max(axis=1)
    split = np.flatnonzero((sizes >= 2 * l) & (sizes >= l * smax))
    # new labels: (input group, subgroup); kept groups have subgroup 0
    sub = np.zeros(n, dtype=np.int64)
    if split.size:
        rng = generator(seed) if pick == "random" else None
        order = np.argsort(group, kind="stable")
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        width = 1
        for g in split.tolist():
            rows = order[starts[g] : starts[g] + sizes[g]]
            sub_g = anatomy_groups(bucket[rows], l, seed=rng, pick=pick)
            sub[rows] = sub_g
            width = max(width, int(sub_g.max()) + 1)
    else:
        width = 1
    return Partition.from_labels(group * width + sub)
