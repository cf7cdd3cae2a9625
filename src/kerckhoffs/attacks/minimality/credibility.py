"""Exact credibility of one generalized QID-EC under the minimality attack (paper 001).

Setting (paper 001 section 4.1, Fig. 2/3; ``docs/theory/minimality.md#attack-global``): a published
QID-EC ``P`` holds ``n_s`` tuples of a sensitive value set ``s``. The classes ``C_1..C_u`` of the
adversary's ``T^q`` (identical ground QIDs) that generalize into ``P`` own ``g_i`` of its slots. An
anonymizer that follows the minimality principle (Definition 3) only generalizes when needed,
so *at least one* class would violate the requirement if ``P`` were specialized back
(Lemma 1). Class ``i`` violates when it receives more than ``tau_i`` sensitive tuples:

- global recoding: ``g_i = n_i`` and ``tau_i = floor(n_i / l)`` (simplified l-diversity);
- local recoding (paper 001 section 4.2, ``docs/theory/minimality.md#attack-local``; its section
  4.2.2's thresholds on the generalized part alone contradict its own examples, resolved as "whole
  class": ``docs/theory/minimality.md#err-local-thresholds``): ``g_i = n_{i,g}`` (the class's
  tuples inside ``P``) and ``tau_i = floor(n_i / l) - n_{i,u(s)}`` (the violation is judged on
  the whole original class, ungeneralized part included); ``"paper_literal"`` judges the
  generalized part alone, ``tau_i = floor(n_{i,g} / l)``, as the paper's text says;
- ``tau_i = -1``: the class violates whatever it receives (e.g. fewer than ``k`` tuples).

Every assignment of the ``n_s`` sensitive tuples to the ``sum g_i`` slots is equally likely
(paper section 4.1.2); the knowledge keeps those where some class violates. The credibility of
an individual of class ``i`` is ``(E[Y_i | some class violates] + n_{i,u(s)}) / n_i`` with
``Y_i`` the sensitive tuples among its slots. Three exact implementations of
``E[Y_i | knowledge]`` (rational arithmetic, :class:`fractions.Fraction`), which must agree:

- :func:`expected_dp`: Algorithm 2 of Appendix A as we correct it
  (``docs/theory/minimality.md#attack-dp``) -- ``floor``, not the printed ``ceil``, in the ``u``
  recursion (Algorithm 2 line 20 prints ``ceil(n_a / l)``:
  ``docs/theory/minimality.md#err-loop-bound``); empty intervals ``m = u = [x = 0]``, ``n = 0``
  (Appendix A leaves them undefined: ``docs/theory/minimality.md#err-empty-intervals``); sums over
  every ``x`` (Appendix A's sum limits disagree: ``docs/theory/minimality.md#err-sum-limits``); the
  classes that can never violate (``C'``) get a derived formula (section 4.1.2 only says their
  credibility is at most ``1/l``: ``docs/theory/minimality.md#err-unconstrained-cred``). Written for
  per-class thresholds, so it also serves local recoding (our local-recoding reading runs "Algorithm
  2 generalized to per-class thresholds": ``docs/theory/minimality.md#attack-local``).
- :func:`expected_closed_form`: the inclusion-exclusion closed form
  (``docs/theory/minimality.md#attack-closed-form``), with prefix and suffix products of truncated
  polynomials.
- :func:`expected_brute_force`: enumeration of the sensitive tuple distribution table
  (Definition 10; ``docs/theory/minimality.md#attack-brute-force``); tests only, exponential.

When no class can violate (``p = 0``, the first edge case of
``docs/theory/minimality.md#attack-edge-cases``) nothing can be excluded: the result is the
no-exclusion expectation ``g_i n_s / sum g`` (Theorem 1) and ``no_inference`` is set.
The vectorized float engine the whole-table attack uses is
:mod:`kerckhoffs.attacks.minimality.batch`; it is tested against these.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from kerckhoffs.errors import ParameterError

__all__ = [
    "LOCAL_MODES",
    "METHODS",
    "ECInference",
    "credibility_global",
    "credibility_local",
    "distribution_table",
    "dp_tables",
    "expected",
    "expected_brute_force",
    "expected_closed_form",
    "expected_dp",
    "floor_share",
]

METHODS = ("dp", "closed_form", "brute_force")
LOCAL_MODES = ("whole_class", "paper_literal")
EPS = 1e-9


@dataclass(frozen=True)
class ECInference:
    """What the adversary infers about one generalized EC.

    ``expected[i]``: ``E[Y_i | knowledge]``, the expected number of sensitive tuples among
    class ``i``'s slots (the no-exclusion value ``g_i n_s / sum g`` when ``no_inference``).
    ``assignments``: ``B``, the number of assignments in which some class violates.
    ``total``: ``C(sum g, n_s)``, all assignments. ``no_inference``: no class can violate
    (``p = 0``, the edge case "no class can violate" of
    ``docs/theory/minimality.md#attack-edge-cases``), so the minimality knowledge excludes nothing.
    """

    expected: tuple[Fraction, ...]
    assignments: int
    total: int
    no_inference: bool


def floor_share(n: int, l: float) -> int:  # noqa: E741
    """``floor(n / l)``, the most sensitive tuples a class of ``n`` may hold under simplified
    l-diversity (exact for integer ``l``; a tolerance of 1e-9 for fractional ``l``)."""
    if float(l).is_integer():
        return int(n) // int(l)
    return math.floor(n / l + EPS)


def _check(slots: Sequence[int], thresholds: Sequence[int], n_s: int) -> tuple[list, list, int]:
    g = [int(x) for x in slots]
    tau = [int(x) for x in thresholds]
    if len(g) != len(tau):
        raise ParameterError(f"{len(g)} class sizes but {len(tau)} thresholds")
    if not g:
        raise ParameterError("a generalized EC needs at least one class")
    if any(x < 0 for x in g):
        raise ParameterError(f"class sizes must be non-negative, got {g}")
    n_s = int(n_s)
    if not 0 <= n_s <= sum(g):  # edge case: more sensitive tuples than slots is an input error
        raise ParameterError(f"n_s = {n_s} sensitive tuples do not fit in {sum(g)} slots")
    return g, [max(t, -1) for t in tau], n_s


def _may_violate(g: int, tau: int, n_s: int) -> bool:
    """Class can receive more than ``tau`` sensitive tuples
    (``docs/theory/minimality.md#attack-local``: ``tau + 1 <= min(g, n_s)``; for global recoding
    this is the DP's set ``C``, ``n_s > floor(n/l)``)."""
    return tau + 1 <= min(g, n_s)


def _no_inference(g: list[int], n_s: int) -> ECInference:
    total = sum(g)
    exp = tuple(Fraction(x * n_s, total) if total else Fraction(0) for x in g)
    return ECInference(exp, 0, math.comb(total, n_s), True)


# -- Algorithm 2 (Appendix A), corrected ----------------------------------------------------------
def dp_tables(
    slots: Sequence[int],
    thresholds: Sequence[int],
    n_s: int,
    *,
    u_thresholds: Sequence[int] | None = None,
) -> tuple[dict, dict, dict]:
    """Phase 1 of Algorithm 2: the tables ``m``, ``u``, ``n`` over intervals ``[a, b]`` of the
    given classes (1-based, in the order given) and counts ``x in 0..n_s``.

    ``m[a, b][x]``: ways to place ``x`` sensitive tuples in classes ``a..b`` (no constraint);
    ``u[a, b][x]``: ways with every class within its threshold; ``n[a, b][x]``: ways with at
    least one class above it. Empty intervals (``a > b``) are ``m = u = [x = 0]``, ``n = 0``
    (Appendix A leaves them undefined: ``docs/theory/minimality.md#err-empty-intervals``).
    ``u_thresholds`` replaces the thresholds in the ``u`` recursion only (not in the base cases): it
    exists to reproduce the paper's misprinted ``ceil(n_a / l)`` of line 20.
    """
    g = list(slots)
    f = list(thresholds)
    fu = list(u_thresholds) if u_thresholds is not None else f
    p = len(g)
    xs = range(n_s + 1)
    empty_mu = [1 if x == 0 else 0 for x in xs]
    zero = [0] * (n_s + 1)
    m: dict = {}
    u: dict = {}
    n: dict = {}
    for a in range(1, p + 2):  # empty intervals [a, a-1]
        m[a, a - 1] = empty_mu
        u[a, a - 1] = empty_mu
        n[a, a - 1] = zero
    for a in range(1, p + 1):  # base cases, paper lines 1-7
        na, fa = g[a - 1], f[a - 1]
        m[a, a] = [math.comb(na, x) if x <= na else 0 for x in xs]
        u[a, a] = [math.comb(na, x) if x <= min(fa, na) else 0 for x in xs]
        n[a, a] = [math.comb(na, x) if fa < x <= na else 0 for x in xs]
    # recursion, paper lines 8-45: [a+1, b] is complete before [a, b] (a descends)
    for a in range(p, 0, -1):
        na, fa, fua = g[a - 1], f[a - 1], fu[a - 1]
        for b in range(a + 1, p + 1):
            mr, ur, nr = m[a + 1, b], u[a + 1, b], n[a + 1, b]
            mm, uu, nn = [0] * (n_s + 1), [0] * (n_s + 1), [0] * (n_s + 1)
            for x in xs:
                mm[x] = sum(math.comb(na, r) * mr[x - r] for r in range(min(na, x) + 1))
                uu[x] = sum(math.comb(na, r) * ur[x - r] for r in range(min(fua, na, x) + 1))
                nn[x] = sum(
                    math.comb(na, r) * mr[x - r] for r in range(max(fa + 1, 0), min(na, x) + 1)
                ) + sum(math.comb(na, r) * nr[x - r] for r in range(min(fa, na, x) + 1))
            m[a, b], u[a, b], n[a, b] = mm, uu, nn
    return m, u, n


def expected_dp(
    slots: Sequence[int],
    thresholds: Sequence[int],
    n_s: int,
    *,
    u_thresholds: Sequence[int] | None = None,
) -> ECInference:
    """``E[Y_i | some class violates]`` by Algorithm 2 (Appendix A) as we correct it
    (``docs/theory/minimality.md#attack-dp``), with per-class slots and thresholds (module
    docstring).

    The classes that may violate (``C``, ``tau_i + 1 <= min(g_i, n_s)``) are sorted by size
    (a convenience only) and run through the DP; the others (``C'``, ``N`` slots in all) share
    ``(n_s B - EX) / B`` in proportion to their slots, with ``EX = sum_x x n([1,p], x)
    C(N, n_s - x)`` (paper 001 section 4.1.2 gives no formula for ``C'``:
    ``docs/theory/minimality.md#err-unconstrained-cred``). ``u_thresholds`` (per class, in the order
    given) only serves the regression test of the misprinted ceiling (Algorithm 2 line 20 prints
    ``ceil`` for ``floor``: ``docs/theory/minimality.md#err-loop-bound``).
    """
    g, tau, n_s = _check(slots, thresholds, n_s)
    cset = sorted((i for i in range(len(g)) if _may_violate(g[i], tau[i], n_s)), key=lambda i: g[i])
    if not cset:
        return _no_inference(g, n_s)
    cp = [i for i in range(len(g)) if i not in set(cset)]
    p = len(cset)
    big_n = sum(g[i] for i in cp)
    gs = [g[i] for i in cset]
    fs = [tau[i] for i in cset]
    fus = [int(u_thresholds[i]) for i in cset] if u_thresholds is not None else None
    m, u, n = dp_tables(gs, fs, n_s, u_thresholds=fus)

    def comb_n(k: int) -> int:
        return math.comb(big_n, k) if 0 <= k <= big_n else 0

    # Phase 2, paper lines 46-54 (sums over every x, as Appendix A's limits disagree:
    # docs/theory/minimality.md#err-sum-limits)
    big_b = sum(n[1, p][x] * comb_n(n_s - x) for x in range(n_s + 1))
    if big_b == 0:  # cannot happen when p >= 1 (a guard; docs/theory/minimality.md#attack-dp)
        return _no_inference(g, n_s)
    exp: list[Fraction] = [Fraction(0)] * len(g)
    for pos, i in enumerate(cset, start=1):
        ni, fi = gs[pos - 1], fs[pos - 1]
        left_m, left_u, left_n = m[1, pos - 1], u[1, pos - 1], n[1, pos - 1]
        right_m, right_n = m[pos + 1, p], n[pos + 1, p]
        acc = 0
        for j in range(1, min(ni, n_s) + 1):
            a_ij = 0
            for x in range(j, n_s + 1):
                if j >= fi + 1:  # case 1: C_i violates, the others are free
                    s = sum(left_m[r] * right_m[x - r - j] for r in range(x - j + 1))
                else:  # case 2(a): a violation on the left; 2(b): none left, one right
                    s = sum(
                        left_n[r] * right_m[x - r - j] + left_u[r] * right_n[x - r - j]
                        for r in range(x - j + 1)
                    )
                a_ij += comb_n(n_s - x) * math.comb(ni, j) * s
            acc += a_ij * j
        exp[i] = Fraction(acc, big_b)
    if cp:
        ex = sum(x * n[1, p][x] * comb_n(n_s - x) for x in range(n_s + 1))
        share = Fraction(n_s * big_b - ex, big_b * big_n)
        for i in cp:
            exp[i] = share * g[i]
    return ECInference(tuple(exp), big_b, math.comb(sum(g), n_s), False)


# -- closed form (docs/theory/minimality.md#attack-closed-form) ----------------------------------
def _mul(a: list[int], b: list[int], deg: int) -> list[int]:
    out = [0] * (deg + 1)
    for i, x in enumerate(a):
        if x:
            for j in range(deg + 1 - i):
                out[i + j] += x * b[j]
    return out


def expected_closed_form(slots: Sequence[int], thresholds: Sequence[int], n_s: int) -> ECInference:
    """``E[Y_i | some class violates]`` by the closed form
    (``docs/theory/minimality.md#attack-closed-form``).

    With ``H_a(z) = sum_r C(g_a, r) z^r``, ``F_a`` the same truncated at ``tau_a``, ``D_a`` and
    ``DF_a`` their ``r``-weighted versions (all truncated at degree ``n_s``):
    ``B = [z^n_s](prod H - prod F)`` and ``E_i B = [z^n_s](D_i prod_{a!=i} H_a - DF_i
    prod_{a!=i} F_a)``; the products leaving one class out come from prefix and suffix
    products.
    """
    g, tau, n_s = _check(slots, thresholds, n_s)
    if not any(_may_violate(gi, ti, n_s) for gi, ti in zip(g, tau, strict=True)):
        return _no_inference(g, n_s)
    u = len(g)
    h = [[math.comb(gi, r) for r in range(n_s + 1)] for gi in g]
    f = [[c if r <= ti else 0 for r, c in enumerate(hi)] for hi, ti in zip(h, tau, strict=True)]
    one = [1] + [0] * n_s
    pre_h, pre_f, suf_h, suf_f = [one], [one], [one] * (u + 1), [one] * (u + 1)
    for a in range(u):
        pre_h.append(_mul(pre_h[-1], h[a], n_s))
        pre_f.append(_mul(pre_f[-1], f[a], n_s))
    for a in range(u - 1, -1, -1):
        suf_h[a] = _mul(h[a], suf_h[a + 1], n_s)
        suf_f[a] = _mul(f[a], suf_f[a + 1], n_s)
    big_b = pre_h[u][n_s] - pre_f[u][n_s]
    if big_b == 0:
        return _no_inference(g, n_s)
    exp = []
    for i in range(u):
        oh = _mul(pre_h[i], suf_h[i + 1], n_s)
        of = _mul(pre_f[i], suf_f[i + 1], n_s)
        num = sum(r * h[i][r] * oh[n_s - r] - r * f[i][r] * of[n_s - r] for r in range(n_s + 1))
        exp.append(Fraction(num, big_b))
    return ECInference(tuple(exp), big_b, pre_h[u][n_s], False)


# -- brute force (docs/theory/minimality.md#attack-brute-force) ----------------------------------
def distribution_table(
    slots: Sequence[int], thresholds: Sequence[int], n_s: int, *, minimality: bool = True
) -> list[tuple[tuple[int, ...], int]]:
    """The sensitive tuple distribution table (paper 001 Definition 10, with the range
    ``0..min(g_i, n_s)``: the definition prints ``1..n_s``, its examples use 0;
    ``docs/theory/minimality.md#err-mi-range``):
    every vector ``(m_1..m_u)`` with ``sum m_i = n_s``, ``m_i <= g_i`` and (with
    ``minimality``) some ``m_i > tau_i``, and its number of cases ``prod C(g_i, m_i)``, in
    lexicographic order of the vectors."""
    g, tau, n_s = _check(slots, thresholds, n_s)
    rows = []
    for vec in itertools.product(*(range(min(gi, n_s) + 1) for gi in g)):
        if sum(vec) != n_s:
            continue
        if minimality and not any(mi > ti for mi, ti in zip(vec, tau, strict=True)):
            continue
        rows.append((vec, math.prod(math.comb(gi, mi) for gi, mi in zip(g, vec, strict=True))))
    return rows


def expected_brute_force(
    slots: Sequence[int], thresholds: Sequence[int], n_s: int, *, minimality: bool = True
) -> ECInference:
    """``E[Y_i | knowledge]`` by enumerating :func:`distribution_table` (exponential; tests).
    With ``minimality=False`` nothing is excluded (Theorem 1: the result is ``g_i n_s /
    sum g``)."""
    g, _, n_s = _check(slots, thresholds, n_s)
    rows = distribution_table(slots, thresholds, n_s, minimality=minimality)
    big_b = sum(w for _, w in rows)
    if big_b == 0:
        return _no_inference(g, n_s)
    exp = tuple(Fraction(sum(w * vec[i] for vec, w in rows), big_b) for i in range(len(g)))
    return ECInference(exp, big_b, math.comb(sum(g), n_s), False)


def expected(
    slots: Sequence[int], thresholds: Sequence[int], n_s: int, method: str = "closed_form"
) -> ECInference:
    """Dispatch to :func:`expected_dp`, :func:`expected_closed_form` or
    :func:`expected_brute_force`."""
    if method == "dp":
        return expected_dp(slots, thresholds, n_s)
    if method == "closed_form":
        return expected_closed_form(slots, thresholds, n_s)
    if method == "brute_force":
        return expected_brute_force(slots, thresholds, n_s)
    raise ParameterError(f"method must be one of {', '.join(METHODS)}, got {method!r}")


# -- credibility ----------------------------------------------------------------------------------
def credibility_global(
    sizes: Sequence[int],
    n_s: int,
    l: float,  # noqa: E741
    *,
    method: str = "dp",
) -> list[Fraction]:
    """Function V of the paper (section 4.1; ``docs/theory/minimality.md#attack-global``): the
    credibility of an individual of each class ``C_i`` (``sizes[i]`` tuples, all generalized into
    one EC holding ``n_s`` sensitive tuples), under global recoding and simplified l-diversity:
    ``E[Y_i] / n_i``. With no possible violation, ``n_s / n_P`` (the edge case "no class can
    violate", ``docs/theory/minimality.md#attack-edge-cases``)."""
    if l < 1:
        raise ParameterError(f"l must be at least 1, got {l}")
    res = expected(sizes, [floor_share(n, l) for n in sizes], n_s, method)
    return [e / n if n else Fraction(0) for e, n in zip(res.expected, sizes, strict=True)]


def credibility_local(
    classes: Sequence[tuple[int, int, int]],
    n_s: int,
    l: float,  # noqa: E741
    *,
    mode: str = "whole_class",
    method: str = "closed_form",
) -> list[Fraction]:
    """Credibility under local recoding (``docs/theory/minimality.md#attack-local``) for classes
    given as ``(n_i, n_{i,g}, n_{i,u(s)})``: class size in ``T^q``, its tuples generalized into the
    EC, and the sensitive tuples among its ungeneralized ones; ``n_s`` is the EC's sensitive count.

    ``mode="whole_class"`` (default; the paper's section 4.2.2 thresholds on the generalized
    part alone contradict its own examples: ``docs/theory/minimality.md#err-local-thresholds``):
    ``tau_i = floor(n_i / l) - n_{i,u(s)}``; ``"paper_literal"``: ``tau_i = floor(n_{i,g} / l)``.
    Credibility ``(E[Y_i] + n_{i,u(s)}) / n_i``. Global recoding is the case ``n_{i,g} = n_i``,
    ``n_{i,u(s)} = 0``.
    """
    if mode not in LOCAL_MODES:
        raise ParameterError(f"mode must be one of {', '.join(LOCAL_MODES)}, got {mode!r}")
    for n, gi, us in classes:
        if not (0 <= gi <= n and 0 <= us <= n - gi):
            raise ParameterError(f"class (n={n}, generalized={gi}, sensitive kept={us}) is invalid")
    slots = [gi for _, gi, _ in classes]
    if mode == "whole_class":
        tau = [floor_share(n, l) - us for n, _, us in classes]
    else:
        tau = [floor_share(gi, l) for _, gi, _ in classes]
    res = expected(slots, tau, n_s, method)
    return [
        (e + us) / n if n else Fraction(0)
        for e, (n, _, us) in zip(res.expected, classes, strict=True)
    ]
