"""The one tolerance for comparing floats computed from counts (ratios, entropies, distances).

A privacy model's cut rule (inside an algorithm) and its checker (on the release) must agree on
every boundary case, or an algorithm could build a group its own checker then rejects (or the
reverse). Both therefore compare with :data:`TOLERANCE`: ``a >= b`` reads ``a >= b - TOLERANCE``.
Integer comparisons (k-anonymity, the bounded count against ``|G| / l`` with integer ``l``)
need none.
"""

from __future__ import annotations

TOLERANCE = 1e-9
"""Absolute slack on float comparisons of values of order 1-1,000 (float64 rounds them at about
1e-13, four orders below; a real difference between two such values computed from integer
counts is far above it)."""
