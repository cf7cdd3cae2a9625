"""Hilbert-curve index of encoded quasi-identifiers, vectorized over all rows (Hilb step 1).

Hilb (paper 000, section 6.2.2, step 1; ``docs/theory/asap.md#hilbert-curve``) maps each row's QI
code vector (``d`` integers) to its position ``Q_T`` on a ``d``-dimensional Hilbert curve of order
``p`` and sorts the rows by it. This module computes ``Q_T`` with John Skilling's transform
("Programming the Hilbert curve", AIP Conf. Proc. 707, 2004): ``AxestoTranspose`` turns the
coordinates into the *transposed* Hilbert index in place (``p`` rounds of inverse-undo over the
``d`` axes, then a Gray encoding), and the index is the transposed form's bits read most significant
first, axis 0 before axis 1. Every step is a bit operation on whole columns (uint arrays over all
rows), so the loops are over bits and axes, never over rows.

**Convention** (paper 000 section 7 leaves the Hilbert mapping's orientation, scaling and ties
open; our resolution, a documented encoder with ties by row id, is
``docs/theory/asap.md#err-hilbert-mapping``):

- Raw integer codes, no rescaling: QI ``j`` takes values ``0 .. size_j - 1`` and the order is
  ``p = ceil(log2(max_j size_j))`` (at least 1), the smallest grid holding every code. Small
  domains are not stretched to the full ``[0, 2^p)`` range.
- The QI columns enter Skilling's transform in *reverse* order (Skilling's axis 0 is the last
  QI). For two QIs ``(x, y)`` this is Wikipedia's ``xy2d(2^p, y, x)``: the curve starts at
  ``(0, 0)``, its first step goes along the first QI ``x``, and it ends at ``(0, 2^p - 1)``.
  That is the convention under which our reconstruction of paper 000's running example (its
  figures are missing from the text, ``docs/theory/asap.md#err-figures``) holds (the 8-tuple
  example of Figures 1-5, ``docs/theory/asap.md#worked-examples``: ``t1 = (6, 0) -> 20``,
  ..., ``t8 = (0, 4) -> 58`` on the 8x8 grid).
- Ties (rows with equal QI vectors) are broken by row id in :func:`hilbert_order`, never by SA.

The index has ``d * p`` bits. Up to 64 bits it is one uint64 per row; beyond, it is a uint64
array ``[n, words]`` (most significant word first) and :func:`hilbert_order` sorts the words
lexicographically, so any number of QIs and any domain size works.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["hilbert_bits", "hilbert_index", "hilbert_order", "hilbert_transpose"]


def hilbert_bits(sizes: list[int] | np.ndarray) -> int:
    """Order ``p`` of the grid for code domains of the given sizes: ``ceil(log2(max size))``."""
    top = max((int(s) for s in sizes), default=1)
    return max(1, (top - 1).bit_length())


def _as_columns(codes: np.ndarray) -> np.ndarray:
    codes = np.asarray(codes)
    if codes.ndim == 1:
        codes = codes[:, None]
    if codes.ndim != 2:
        raise ValueError("codes must be a [rows, dims] integer array")
    if codes.size and int(codes.min()) < 0:
        raise ValueError("Hilbert coordinates must be non-negative codes")
    return codes


def hilbert_transpose(codes: np.ndarray, bits: int) -> list[np.ndarray]:
    """Skilling's ``AxestoTranspose`` on every row at once.

    ``codes`` is int [n, d] (one column per QI, values below ``2**bits``). Returns the
    transposed index as ``d`` uint arrays, Skilling's axis order (axis 0 = the *last* QI, see
    the module docstring): bit ``b`` of axis ``i`` is bit ``b * d + (d - 1 - i)`` of the index.
    """
    codes = _as_columns(codes)
    n, d = codes.shape
    if bits < 1:
        raise ValueError("bits must be at least 1")
    if codes.size and int(codes.max()) >> bits:
        raise ValueError(f"a code does not fit in {bits} bits")
    dtype = np.uint16 if bits <= 16 else np.uint32 if bits <= 32 else np.uint64
    # Skilling's axis i is QI column d - 1 - i (the convention of the module docstring)
    # (typed Any: the unsigned width is chosen at run time, which numpy's stubs cannot follow)
    x: list[Any] = [np.ascontiguousarray(codes[:, d - 1 - i]).astype(dtype) for i in range(d)]
    # inverse undo: for Q = 2^(p-1) .. 2, where bit Q of axis i is set invert the low bits of
    # axis 0, elsewhere exchange the low bits of axes 0 and i (branch-free: masks, no where)
    for level in range(bits - 1, 0, -1):
        low = dtype((1 << level) - 1)
        shift = dtype(level)
        for i in range(d):
            invert = ((x[i] >> shift) & dtype(1)) * low  # low where the bit is set, else 0
            if i == 0:
                x[0] ^= invert
                continue
            t = (x[0] ^ x[i]) & (low ^ invert)
            x[0] ^= invert | t
            x[i] ^= t
    # Gray encode
    for i in range(1, d):
        x[i] ^= x[i - 1]
    t = np.zeros(n, dtype=dtype)
    for level in range(bits - 1, 0, -1):
        t ^= ((x[d - 1] >> dtype(level)) & dtype(1)) * dtype((1 << level) - 1)
    for i in range(d):
        x[i] ^= t
    return x


def hilbert_index(codes: np.ndarray, bits: int | None = None) -> np.ndarray:
    """Position of every row on the Hilbert curve (``Q_T`` of paper 000's Hilb, step 1).

    See ``docs/theory/asap.md#hilbert-curve``.

    ``codes`` is int [n, d] of non-negative codes; ``bits`` is the grid order ``p`` (default:
    the fewest bits holding the largest code). Returns uint64 [n] when ``d * bits <= 64``,
    else uint64 [n, words] with the most significant word first.
    """
    codes = _as_columns(codes)
    n, d = codes.shape
    if bits is None:
        bits = max(1, int(codes.max()).bit_length()) if codes.size else 1
    x = hilbert_transpose(codes, bits)
    total = d * bits
    words = (total + 63) // 64
    out = np.zeros((n, words), dtype=np.uint64)
    if bits <= 16:
        # spread each axis's bits to their index positions through a lookup table of all
        # 2^bits values: d gathers instead of d * bits shift-and-or passes over the rows
        values = np.arange(1 << bits, dtype=np.uint64)
        for i in range(d):
            table = np.zeros((1 << bits, words), dtype=np.uint64)
            for b in range(bits):
                k = b * d + (d - 1 - i)
                table[:, words - 1 - k // 64] |= ((values >> np.uint64(b)) & np.uint64(1)) << (
                    np.uint64(k % 64)
                )
            out |= table[x[i]]
    else:
        # index bit k (0 = least significant) is bit k // d of axis d - 1 - k % d
        for b in range(bits):
            for i in range(d):
                k = b * d + (d - 1 - i)
                bit = (x[i] >> x[i].dtype.type(b)) & x[i].dtype.type(1)
                out[:, words - 1 - k // 64] |= bit.astype(np.uint64) << np.uint64(k % 64)
    return out[:, 0] if words == 1 else out


def hilbert_order(
    codes: np.ndarray | None = None,
    bits: int | None = None,
    *,
    index: np.ndarray | None = None,
) -> np.ndarray:
    """Row indices sorted by Hilbert index, ties by row id (a stable sort).

    Pass ``codes`` (and optionally ``bits``) to compute the index, or a precomputed ``index``
    (any integer or float array [n], or [n, words] as :func:`hilbert_index` returns).
    """
    if index is None:
        if codes is None:
            raise ValueError("give codes or a precomputed index")
        index = hilbert_index(codes, bits)
    index = np.asarray(index)
    if index.ndim == 1:
        return np.argsort(index, kind="stable")
    # lexsort's last key is the primary one; equal keys keep row order (stable)
    return np.lexsort(tuple(index[:, w] for w in range(index.shape[1] - 1, -1, -1)))
