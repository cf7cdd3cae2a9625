"""Minimal local recoding for (alpha, k)-anonymity and l-diversity (paper 001;
``docs/theory/minimality.md#supporting-algorithms``).

Paper 001 attacks "the (alpha, k)-anonymity local-recoding algorithm" of Wong, Li, Fu and Wang (KDD
2006) with ``alpha = 1/l, k = 1`` (section 7.1), and uses it with ``alpha = 1/m`` and MASK's ``k``
as MASK's reference (section 7.2). That paper is not among ours, so this module is our own
construction in its spirit, a **top-down specialization with borrowing**, chosen because it
reproduces exactly the behaviour paper 001 shows: a class that would violate leaves only its excess
tuples generalized one taxonomy step up, *together with just enough tuples borrowed from a sibling
class*, while the rest is specialized (Table X of paper 001,
``docs/theory/minimality.md#worked-examples``: one HIV tuple of ``q1`` and one tuple of ``q2``
published as ``Q``; the Adult cases of paper 001 section 7.1,
``docs/theory/minimality.md#supporting-algorithms`` and
``docs/theory/minimality.md#worked-examples``: the self-employed tuple and one private tuple
published as the parent node).

Construction (every step is numpy over all rows of all groups at once; a round costs
``O(n d log n)`` and there are at most ``sum of hierarchy heights`` rounds plus one per frozen
attribute):

1. Every row starts at the root of every QI's taxonomy: one group, which must satisfy the
   model (else no recoding can, :class:`~kerckhoffs.errors.ParameterError`).
2. In each round every open group considers every QI ``j`` whose node is not a leaf and not
   frozen, and plans the one-step specialization of ``j``: its rows go to the children of
   the node. A child that satisfies the model keeps all its rows; a child that violates keeps
   its largest satisfying part (all unconstrained rows and, of each sensitive set, as many
   rows as a common cap allows, the lowest row ids; nothing if that part is smaller than
   ``k``), and its other rows go to a remainder ``R`` that stays at the parent node. If ``R``
   violates, it borrows the fewest rows that make it satisfy from the kept parts, without
   making any of them violate: non-sensitive rows first, then rows whose sensitive value
   ``R`` still has room for; donors with the most spare rows first, then by child order and
   row id. The plan is invalid if no borrowing works or nothing would be specialized.
3. Each group takes the valid plan with the largest drop in information loss (paper 001
   Definition 7 with equal weights: the sum over the specialized rows of
   ``(coverage(parent) - coverage(child)) / (base - 1)``; ties to the first QI), moves its
   rows one level down, and freezes ``j`` on ``R`` (``R`` keeps the parent node for ``j`` and
   may still specialize other QIs). A group with no valid plan is final.

Every group ever formed satisfies the model, so the output does; and no final group has a
valid one-step specialization (with borrowing) of a QI it has not frozen, which is the local
minimality of paper 001 Definition 3 for this move set. In particular a table whose classes
already satisfy the model is published as it is (unions of satisfying classes satisfy, so no
specialization ever fails). Nothing is random; ties are broken by
QI codes (child order) and row id. The SA is read only through the model, as any minimal
algorithm must (which is exactly what the minimality attack exploits).

Taxonomies: a column's hierarchy from the schema; a numeric column without one specializes
along implicit binary intervals of its codes (node ``code >> level``). The release publishes
each group's tightest cells (``[lo-hi]`` of the values present for numeric QIs, the lowest
common hierarchy node for categorical ones), which can only be finer than the node reached.

Models: :class:`AlphaKAnonymity` (``alpha``, ``k``), :class:`LDiversity` (frequency form:
``alpha = 1/l``, ``k = 1``) and :class:`KAnonymity` (``alpha = 1``); several combine to the
largest ``k`` and the smallest ``alpha``. The sensitive count follows the schema: the named
subset as one set (``set`` mode), each sensitive value on its own (``each`` mode), or the most
frequent value when every value is sensitive.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from kerckhoffs.algorithms.registry import register
from kerckhoffs.data.schema import SensitiveMode
from kerckhoffs.data.table import EncodedColumn, Table
from kerckhoffs.errors import ParameterError
from kerckhoffs.model_syntax import written
from kerckhoffs.models.base import PrivacyModel
from kerckhoffs.models.k_anonymity import AlphaKAnonymity, KAnonymity
from kerckhoffs.models.l_diversity import LDiversity
from kerckhoffs.models.parse import written_model
from kerckhoffs.randomness import Seed
from kerckhoffs.release import Partition, Provenance, Release
from kerckhoffs.segments import rank_within
from kerckhoffs.tolerance import TOLERANCE


@dataclass(frozen=True)
class Ladder:
    """One QI's taxonomy as arrays over its codes.

    ``node[level, code]``: the node holding ``code`` at ``level`` (0 = leaf, ``height`` =
    root); ``coverage[level, code]``: the number of leaves under that node; ``base``: the
    number of leaves of the taxonomy.
    """

    height: int
    node: np.ndarray
    coverage: np.ndarray
    base: int

    @classmethod
    def of(cls, col: EncodedColumn) -> Ladder:
        """The ladder of an encoded column (hierarchy, or implicit binary intervals)."""
        codes = np.arange(col.size)
        h = col.hierarchy
        if h is not None:
            leaves = col.leaves(codes)
            node = np.stack([h.node_ids[lv][leaves] for lv in range(h.height + 1)])
            cov = np.stack([h.coverage(lv)[h.node_ids[lv][leaves]] for lv in range(h.height + 1)])
            return cls(h.height, node.astype(np.int64), cov.astype(np.int64), len(h))
        height = math.ceil(math.log2(col.size)) if col.size > 1 else 0
        node = np.stack([codes >> lv for lv in range(height + 1)]).astype(np.int64)
        lo = node << np.arange(height + 1)[:, None]
        hi = np.minimum((node + 1) << np.arange(height + 1)[:, None], col.size)
        return cls(height, node, hi - lo, col.size)


def _parameters(models: list[PrivacyModel]) -> tuple[int, float]:
    """The combined ``(k, alpha)`` of the accepted models."""
    allowed = (AlphaKAnonymity, LDiversity, KAnonymity)
    if not models:
        raise ParameterError("local-recoding needs a model: alpha-k=ALPHA,K, l=L or k=K")
    k, alpha = 1, 1.0
    for mdl in models:
        if isinstance(mdl, AlphaKAnonymity):
            k, alpha = max(k, mdl.k), min(alpha, mdl.alpha)
        elif isinstance(mdl, LDiversity):
            alpha = min(alpha, 1.0 / mdl.l)
        elif isinstance(mdl, KAnonymity):
            k = max(k, mdl.k)
        else:
            names = ", ".join(written(c.__name__) for c in allowed)
            raise ParameterError(
                f"local-recoding cannot enforce {mdl.name} ({written_model(mdl)}); it enforces: "
                f"{names}"
            )
    return k, alpha


def _classes(table: Table, alpha: float) -> tuple[np.ndarray, int]:
    """Per row its bounded class: 0 = unconstrained, 1.. = a sensitive set; and their number."""
    if alpha >= 1.0:
        return np.zeros(table.n, dtype=np.int64), 1
    sens = table.sensitive
    if not sens.all() and table.schema.sensitive_mode == SensitiveMode.SET:
        return sens[table.sa].astype(np.int64), 2
    index = np.zeros(table.n_sa, dtype=np.int64)
    index[sens] = np.arange(1, int(sens.sum()) + 1)
    return index[table.sa], int(sens.sum()) + 1


class _Rules:
    """The model as integer bounds: a group of ``n`` rows holds at most ``limit(n)`` rows of
    each sensitive class and needs ``n >= k``."""

    def __init__(self, k: int, alpha: float, n_classes: int) -> None:
        self.k = k
        self.alpha = alpha
        self.n_classes = n_classes

    def limit(self, n: np.ndarray) -> np.ndarray:
        return np.floor(self.alpha * n + TOLERANCE).astype(np.int64)

    def rows_needed(self, c: np.ndarray) -> np.ndarray:
        """Smallest group size that may hold ``c`` rows of one sensitive class."""
        need = np.ceil(c / self.alpha - TOLERANCE).astype(np.int64)
        need += self.limit(need) < c  # guard the float edge
        return np.maximum(need, self.k)

    def ok(self, n: np.ndarray, c: np.ndarray) -> np.ndarray:
        return (n >= self.k) & (c <= self.limit(n))


def _kept_counts(cnt: np.ndarray, rules: _Rules) -> np.ndarray:
    """For children that violate: the largest part of each that satisfies the model.

    ``cnt`` [pairs, classes] (column 0 unconstrained). All unconstrained rows are kept and
    every sensitive class is cut to a common cap ``t``: the largest ``t`` with
    ``t <= limit(kept size)``. The iteration ``t <- min(t, limit(n(t)))`` from the largest
    count never passes below a feasible ``t`` (``n(t)`` is non-decreasing), so it stops at the
    largest one. A part smaller than ``k`` is not kept at all.
    """
    if rules.n_classes == 1:
        return np.where(cnt >= rules.k, cnt, 0)
    free, sens = cnt[:, 0], cnt[:, 1:]
    t = sens.max(axis=1)
    while True:
        size = free + np.minimum(sens, t[:, None]).sum(axis=1)
        nxt = np.minimum(t, rules.limit(size))
        if np.array_equal(nxt, t):
            break
        t = nxt
    kept = np.concatenate([free[:, None], np.minimum(sens, t[:, None])], axis=1)
    return np.where((kept.sum(axis=1) >= rules.k)[:, None], kept, 0)


def _plan(
    rows: np.ndarray,
    g: np.ndarray,
    child: np.ndarray,
    cls_: np.ndarray,
    gain: np.ndarray,
    n_groups: int,
    rules: _Rules,
) -> tuple[np.ndarray, np.ndarray]:
    """Plan a one-step specialization for every group at once.

    ``rows`` (row ids, increasing), ``g`` (compact group id), ``child`` (child node),
    ``cls_`` (bounded class) and ``gain`` (information-loss drop if specialized) describe the
    eligible rows. Returns the score per group (``-inf`` if the plan is invalid) and a label per
    row: its child node, or -1 for the remainder that stays at the parent node.
    """
    nc = rules.n_classes
    width = int(child.max()) + 1
    # one stable sort by (group, child, class); rows are increasing, so ties keep row order
    key = (g * width + child) * nc + cls_
    order = np.argsort(key, kind="stable")
    sk = key[order]
    pair_sorted = sk // nc
    pair_start = np.r_[True, pair_sorted[1:] != pair_sorted[:-1]]
    pinv = np.empty(rows.size, dtype=np.int64)
    pinv[order] = np.cumsum(pair_start) - 1
    pc = pair_sorted[pair_start] % width
    n_pairs = pc.size
    cell = pinv * nc + cls_
    cnt = np.bincount(cell, minlength=n_pairs * nc).reshape(n_pairs, nc)
    n_p = cnt.sum(axis=1)
    c_p = cnt[:, 1:].max(axis=1) if nc > 1 else np.zeros(n_pairs, dtype=np.int64)
    kept = cnt.copy()
    bad = ~rules.ok(n_p, c_p)
    if bad.any():
        kept[bad] = _kept_counts(cnt[bad], rules)
    # which rows a violating child keeps: the lowest row ids of each class
    rank = np.empty(rows.size, dtype=np.int64)
    rank[order] = rank_within(sk)
    keep_row = rank < kept.ravel()[cell]
    label = np.where(keep_row, pc[pinv], -1)

    moved = ~keep_row
    bad_n = np.bincount(g[moved], minlength=n_groups)
    kept_n = np.bincount(g[keep_row], minlength=n_groups)
    present = np.bincount(g, minlength=n_groups) > 0
    valid = present & ((bad_n == 0) | (kept_n > 0))
    if nc > 1 and moved.any():
        bad_cnt = np.bincount(g[moved] * nc + cls_[moved], minlength=n_groups * nc).reshape(
            n_groups, nc
        )
        need_n = rules.rows_needed(bad_cnt[:, 1:]).max(axis=1)
    else:
        bad_cnt = None
        need_n = np.full(n_groups, rules.k, dtype=np.int64)
    short = np.where((bad_n > 0) & valid, np.maximum(need_n - bad_n, 0), 0)
    if short.any():
        kept_c = kept[:, 1:].max(axis=1) if nc > 1 else np.zeros(n_pairs, dtype=np.int64)
        kept_size = kept.sum(axis=1)
        spare = np.where(kept_size > 0, kept_size - rules.rows_needed(kept_c), 0)
        borrowed, got = _borrow(
            rows, g, pinv, pc, keep_row, spare, cls_, bad_n, bad_cnt, short, n_groups, rules
        )
        valid &= got >= short
        label[borrowed] = -1
    score = np.bincount(g, weights=np.where(label >= 0, gain, 0.0), minlength=n_groups)
    return np.where(valid, score, -np.inf), label


def _borrow(
    rows: np.ndarray,
    g: np.ndarray,
    pinv: np.ndarray,
    pc: np.ndarray,
    keep_row: np.ndarray,
    spare: np.ndarray,
    cls_: np.ndarray,
    bad_n: np.ndarray,
    bad_cnt: np.ndarray | None,
    short: np.ndarray,
    n_groups: int,
    rules: _Rules,
) -> tuple[np.ndarray, np.ndarray]:
    """Rows (positions into ``rows``) the remainders borrow, and how many each group got."""
    cand = np.flatnonzero(keep_row & (short[g] > 0))
    cand = cand[spare[pinv[cand]] > 0]
    cp = pinv[cand]
    cg = g[cand]
    sens = (cls_[cand] > 0).astype(np.int64)
    crow = rows[cand]
    # a donor gives non-sensitive rows first, at most its spare rows
    o1 = np.lexsort((crow, sens, cp))
    r1 = np.empty(cand.size, dtype=np.int64)
    r1[o1] = rank_within(cp[o1])
    ok = r1 < spare[cp]
    cand, cp, cg, sens, crow = cand[ok], cp[ok], cg[ok], sens[ok], crow[ok]
    # borrowing order: non-sensitive first, donors with most spare rows, child order, row id
    o2 = np.lexsort((crow, pc[cp], -spare[cp], sens, cg))
    cand, cg, sens = cand[o2], cg[o2], sens[o2]
    if bad_cnt is not None and sens.any():
        room = rules.limit(bad_n + short)[:, None] - bad_cnt  # room per (group, class) in R
        c = cls_[cand]
        ck = cg * rules.n_classes + c
        o3 = np.lexsort((np.arange(cand.size), ck))
        r3 = np.empty(cand.size, dtype=np.int64)
        r3[o3] = rank_within(ck[o3])
        fits = (c == 0) | (r3 < room[cg, c])
        cand, cg = cand[fits], cg[fits]
    r4 = rank_within(cg)  # cg is still sorted
    take = cand[r4 < short[cg]]
    got = np.bincount(g[take], minlength=n_groups)
    return take, got


@register(
    "local-recoding",
    minimal=True,
    summary="minimal top-down local recoding with borrowing for (alpha,k)-anonymity / "
    "l-diversity (the anonymizer paper 001 attacks; MASK's reference)",
    models=("AlphaKAnonymity", "LDiversity", "KAnonymity"),
)
def local_recoding(
    table: Table, models: list[PrivacyModel], *, seed: Seed = None, **options: Any
) -> Release:
    """Top-down local recoding (see the module docstring); deterministic, ``seed`` unused."""
    if options:
        raise ParameterError(f"local-recoding: unknown option {sorted(options)[0]!r}")
    k, alpha = _parameters(models)
    whole = Release(table, Partition.single(table.n)).histogram()
    for mdl in models:
        mdl.validate(whole, table.sa_name)
    cls_, nc = _classes(table, alpha)
    rules = _Rules(k, alpha, nc)
    root_c = np.bincount(cls_, minlength=nc)[1:].max() if nc > 1 else 0
    if not rules.ok(np.array([table.n]), np.array([root_c]))[0]:
        raise ParameterError(
            f"local-recoding: the whole table ({table.n} rows, {int(root_c)} in its most "
            f"frequent sensitive set) cannot satisfy alpha={alpha:.4g}, k={k}; no recoding can"
        )
    group = _recode(table, rules)
    partition = Partition.from_labels(group)
    params: dict[str, Any] = {"k": k, "alpha": alpha}
    return Release(table, partition, provenance=Provenance("local-recoding", params))


def _recode(table: Table, rules: _Rules) -> np.ndarray:
    """The top-down rounds; returns a group label per row.

    The state of the open rows is kept per QI as contiguous arrays ([d, open rows]: code,
    level, frozen flag) and compacted when groups close, so a round touches open rows only.
    """
    ladders = [Ladder.of(c) for c in table.qi_columns]
    rows = np.arange(table.n)
    qi = np.ascontiguousarray(table.qi.T, dtype=np.int64)
    level = np.repeat(np.array([[lad.height] for lad in ladders], dtype=np.int64), table.n, 1)
    frozen = np.zeros(qi.shape, dtype=bool)
    cls_, _ = _classes(table, rules.alpha)
    g = np.zeros(table.n, dtype=np.int64)
    n_groups = 1
    final = np.zeros(table.n, dtype=np.int64)
    next_label = 0
    while rows.size:
        best = np.full(n_groups, -np.inf)
        best_j = np.full(n_groups, -1, dtype=np.int64)
        best_label = np.full(rows.size, -1, dtype=np.int64)
        for j, lad in enumerate(ladders):
            lv = level[j]
            elig = np.flatnonzero((lv > 0) & ~frozen[j])
            if elig.size == 0:
                continue
            code = qi[j, elig]
            up = lv[elig]
            down = up - 1
            child = lad.node[down, code]
            gain = (lad.coverage[up, code] - lad.coverage[down, code]) / max(lad.base - 1, 1)
            score_g, label = _plan(rows[elig], g[elig], child, cls_[elig], gain, n_groups, rules)
            better = score_g > best
            best = np.where(better, score_g, best)
            best_j = np.where(better, j, best_j)
            upd = better[g[elig]]
            best_label[elig[upd]] = label[upd]
        moving = best_j[g] >= 0
        done = ~moving
        final[rows[done]] = next_label + g[done]
        next_label += n_groups
        if not moving.any():
            break
        jj = best_j[g[moving]]
        lab = best_label[moving]
        rows, qi, level, frozen = rows[moving], qi[:, moving], level[:, moving], frozen[:, moving]
        cls_ = cls_[moving]
        pos = np.arange(rows.size)
        down = lab >= 0
        level[jj[down], pos[down]] -= 1
        frozen[jj[~down], pos[~down]] = True
        key = g[moving] * (int(lab.max()) + 2) + (lab + 1)
        _, g = np.unique(key, return_inverse=True)
        n_groups = int(g.max()) + 1
    return final
