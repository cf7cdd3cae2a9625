"""The candidate cuts of paper 003's m-privacy partitioners (Goryczka, Xiong, Fung, section
IV) and the choice among the allowable ones, for :mod:`kerckhoffs.algorithms.mprivacy_anonymize`.

- :func:`cut_points`: one balanced (or strict lower median) cut per node and QI, from the
  code histograms the providers return;
- :func:`provider_cut`: the cut along the virtual attribute A_0 = provider (a provider's
  records never split), and :func:`split_hist` its halves' histograms, from the node's own
  per-provider histograms;
- :func:`choose_baseline` (widest normalized range first) and :func:`choose_aware` (the split
  score of paper 003 Eq. 1) pick one allowable cut per node; :func:`merge_children` lays the
  chosen halves out as the next level's nodes.

Every function is a pure function of counts: no record is read here.
"""

from __future__ import annotations

import numpy as np

from kerckhoffs.mprivacy.constraints import Constraint
from kerckhoffs.mprivacy.fitness import fitness_batch
from kerckhoffs.mprivacy.providers import Histograms
from kerckhoffs.segments import exclusive_cumsum


def cut_points(
    box: np.ndarray, code: np.ndarray, count: np.ndarray, n_boxes: int, rule: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per box: (threshold code or -1 for no cut, min code, max code), from the sorted
    (box, code, count) triples of one QI."""
    size = np.bincount(box, minlength=n_boxes)
    first = exclusive_cumsum(size)
    last = first + size - 1
    lo = np.full(n_boxes, -1, dtype=np.int64)
    hi = np.full(n_boxes, -1, dtype=np.int64)
    has = size > 0
    lo[has], hi[has] = code[first[has]], code[last[has]]
    cut = np.full(n_boxes, -1, dtype=np.int64)
    if not code.size:
        return cut, lo, hi
    total = np.bincount(box, weights=count, minlength=n_boxes).astype(np.int64)
    cum = np.cumsum(count) - np.repeat(exclusive_cumsum(total), size)
    not_last = np.ones(code.size, dtype=bool)
    not_last[last[has]] = False
    if rule == "balanced":
        dev = np.abs(2 * cum - total[box])
        dev = np.where(not_last, dev, np.iinfo(np.int64).max)
        # first minimum per box (codes ascend inside a box: ties to the smaller code)
        order = np.lexsort((np.arange(code.size), dev, box))
        head = order[first[has]]
        ok = not_last[head]
        cut[np.flatnonzero(has)[ok]] = code[head[ok]]
    else:  # Mondrian's strict lower median: first code whose cumulative count reaches ceil/2
        need = (total + 1) // 2
        idx = np.flatnonzero(cum >= need[box])
        firsts = np.full(n_boxes, -1, dtype=np.int64)
        uniq, at = np.unique(box[idx], return_index=True)  # first reaching position per box
        firsts[uniq] = idx[at]
        ok = (firsts >= 0) & not_last[np.maximum(firsts, 0)]
        cut[ok] = code[firsts[ok]]
    return cut, lo, hi


def provider_cut(h: Histograms, n_nodes: int, n_prov: int, order: str) -> np.ndarray:
    """Per node, a boolean row over the providers: those going left (all False: no cut).
    Providers present in the node are ordered by id or by size (descending, ties by id) and
    cut where the left side's count is closest to half the node (ties to the earlier cut)."""
    cnt = np.bincount(h.box * n_prov + h.provider, weights=h.count, minlength=n_nodes * n_prov)
    cnt = cnt.astype(np.int64).reshape(n_nodes, n_prov)
    ids = np.broadcast_to(np.arange(n_prov), cnt.shape)
    if order == "id":
        rank = np.argsort(np.where(cnt > 0, ids, n_prov + ids), axis=1, kind="stable")
    else:
        rank = np.lexsort((ids, -cnt), axis=1)
    srt = np.take_along_axis(cnt, rank, axis=1)
    present = (cnt > 0).sum(axis=1)
    cum = np.cumsum(srt, axis=1)
    total = cum[:, -1:] if n_prov else np.zeros((n_nodes, 1), np.int64)
    dev = np.abs(2 * cum - total).astype(np.float64)
    pos = np.arange(n_prov)[None, :]
    dev[pos >= present[:, None] - 1] = np.inf  # only between two present providers
    at = np.argmin(dev, axis=1)
    left = np.zeros((n_nodes, n_prov), dtype=bool)
    ok = present >= 2
    in_left = (pos <= at[:, None]) & ok[:, None]
    np.put_along_axis(left, rank, in_left, axis=1)
    return left


def split_hist(h: Histograms, left: np.ndarray, which: np.ndarray) -> Histograms:
    """Halves of nodes ``which`` of ``h`` by the provider sets ``left[node]``: box ``2i`` the
    left and ``2i + 1`` the right half of ``which[i]``."""
    sub = h.select(which)
    side = ~left[which[sub.box], sub.provider]  # False = left
    box = 2 * sub.box + side
    order = np.lexsort((sub.sa, sub.provider, box))
    return Histograms(box[order], sub.provider[order], sub.sa[order], sub.count[order],
                      2 * which.size)  # fmt: skip


def merge_children(parts: list[Histograms], order: list[np.ndarray], n_cut: int) -> Histograms:
    """The children's histograms in node order: ``parts[i]`` holds, for the cut nodes
    ``order[i]`` (positions among the cut nodes), their two halves."""
    slot = np.concatenate([2 * np.repeat(o, 2) + np.tile([0, 1], o.size) for o in order])
    box = np.concatenate([slot[p.box + off] for p, off in zip(parts, _offsets(parts), strict=True)])
    prov = np.concatenate([p.provider for p in parts])
    sa = np.concatenate([p.sa for p in parts])
    cnt = np.concatenate([p.count for p in parts])
    srt = np.argsort(box, kind="stable")
    return Histograms(box[srt], prov[srt], sa[srt], cnt[srt], 2 * n_cut)


def _offsets(parts: list[Histograms]) -> list[int]:
    out, at = [], 0
    for p in parts:
        out.append(at)
        at += p.n_boxes
    return out


def choose_baseline(
    ci: np.ndarray, cj: np.ndarray, allowed: np.ndarray, norm: np.ndarray, n_nodes: int
) -> np.ndarray:
    """Per node, the allowable candidate of widest normalized range (ties: lower QI), or -1."""
    pick_c = np.full(n_nodes, -1, dtype=np.int64)
    c = np.flatnonzero(allowed)
    if c.size:
        key = np.lexsort((cj[c], -norm[ci[c], cj[c]], ci[c]))
        c = c[key]
        first = np.r_[True, ci[c][1:] != ci[c][:-1]]
        pick_c[ci[c][first]] = c[first]
    return pick_c


def choose_aware(
    halves: Histograms,
    phalves: Histograms | None,
    ci: np.ndarray,
    cj: np.ndarray,
    allowed_q: np.ndarray,
    allowed_p: np.ndarray,
    pcand: np.ndarray,
    norm: np.ndarray,
    n_nodes: int,
    n_sa: int,
    scorer: Constraint,
    alpha: float,
    rule: str,
) -> tuple[np.ndarray, np.ndarray]:
    """Per node: (the chosen QI candidate or -1, whether the provider cut is chosen)."""
    pick_c = np.full(n_nodes, -1, dtype=np.int64)
    use_p = np.zeros(n_nodes, dtype=bool)
    # every allowable candidate as (node, dim, left score, right score, QI candidate index)
    node_l, dim_l, sl_l, sr_l, cand_l = [], [], [], [], []
    q = np.flatnonzero(allowed_q)
    if q.size:
        sub = halves.select(np.stack([2 * q, 2 * q + 1], 1).reshape(-1))
        total, hist = sub.totals(n_sa)
        s, _ = fitness_batch(scorer, total, hist, alpha)
        node_l.append(ci[q])
        dim_l.append(cj[q] + 1)
        sl_l.append(s[0::2])
        sr_l.append(s[1::2])
        cand_l.append(q)
    p_nodes = np.flatnonzero(allowed_p)
    if p_nodes.size and phalves is not None:
        prow = np.cumsum(pcand) - 1
        pair = prow[p_nodes]
        sub = phalves.select(np.stack([2 * pair, 2 * pair + 1], 1).reshape(-1))
        total, hist = sub.totals(n_sa)
        s, _ = fitness_batch(scorer, total, hist, alpha)
        node_l.append(p_nodes)
        dim_l.append(np.zeros(p_nodes.size, dtype=np.int64))
        sl_l.append(s[0::2])
        sr_l.append(s[1::2])
        cand_l.append(np.full(p_nodes.size, -1, dtype=np.int64))
    if not node_l:
        return pick_c, use_p
    node = np.concatenate(node_l)
    dim = np.concatenate(dim_l)
    sl, sr = np.concatenate(sl_l), np.concatenate(sr_l)
    cand = np.concatenate(cand_l)
    lo, tot = np.minimum(sl, sr), sl + sr
    is_p = dim == 0
    width = np.where(is_p, 0.0, norm[node, np.maximum(dim - 1, 0)])
    if rule == "min":
        key = np.lexsort((dim, -tot, -lo, node))
    elif rule == "sum":
        key = np.lexsort((dim, -lo, -tot, node))
    elif rule == "provider_first":
        key = np.lexsort((dim, -tot, -lo, ~is_p, node))
    else:  # mondrian_width: provider cut when allowable, else the widest QI cut
        key = np.lexsort((dim, -width, ~is_p, node))
    node, cand, is_p = node[key], cand[key], is_p[key]
    first = np.r_[True, node[1:] != node[:-1]]
    chosen = node[first]
    use_p[chosen] = is_p[first]
    pick_c[chosen] = np.where(is_p[first], -1, cand[first])
    return pick_c, use_p
