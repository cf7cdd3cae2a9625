"""Paper 002's worked examples (Zhang, Wang, Jajodia, Brodsky, "Exclusive Strategy for
Generalization Algorithms in Micro-Data Disclosure", DBSec 2008, Examples 1-8 on the 10-row
patient table of its section 1), recomputed with the disclosure-set engine
:mod:`kerckhoffs.disclosure`: the running example's tables and generalizations, and the table
of every worked number (one row per quantity, the paper's printed value beside ours) that the
experiment ``exclusive-examples`` of :mod:`.paper_002_exclusive` writes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from kerckhoffs.disclosure import (
    NOTHING,
    PAPER_CHK,
    Chk,
    ClassOutcomes,
    GeneralizationSequence,
    Outcome,
    Step,
    class_outcomes,
    enumerate_per,
    exclusive,
    inclusive,
    naive,
    per_size,
    person_counts,
    signature,
    signatures,
)
from kerckhoffs.experiments.base import Context, Row

# -- the running example (paper 002, Tables 1, 2, 4; docs/theory/disclosure-sets.md#worked-examples)
PEOPLE = "ABCDEFGHIJ"
"""Row order of Table 1 (Alice .. Jason); the ID order every instance is read in."""

RUNNING_LABELS = (
    (0, 0, 1, 1, 2, 2, 3, 3, 4, 4),  # g1: {A,B} {C,D} {E,F} {G,H} {I,J}
    (0, 0, 1, 1, 1, 2, 2, 2, 3, 3),  # g2: {A,B} {C,D,E} {F,G,H} {I,J}
    (0, 0, 0, 1, 1, 1, 1, 2, 2, 2),  # g3: {A,B,C} {D,E,F,G} {H,I,J}
)
"""Table 2's partitions, reconstructed from the ages (the printed group labels are shifted:
``docs/theory/disclosure-sets.md#err-table2``)."""


def _codes(values: Sequence[int]) -> tuple[int, ...]:
    """The paper's ``c1..c7`` written as 1..7 -> engine codes 0..6."""
    return tuple(v - 1 for v in values)


G0 = _codes((1, 2, 3, 2, 4, 4, 6, 5, 6, 7))
GA = _codes((1, 2, 3, 4, 2, 6, 4, 5, 6, 7))
GB = _codes((1, 3, 2, 2, 4, 4, 6, 6, 5, 7))
X1 = _codes((5, 4, 2, 5, 4, 4, 7, 6, 3, 4))
X4 = _codes((5, 7, 6, 5, 2, 5, 3, 3, 1, 2))
TABLES = {"G0": G0, "G_a": GA, "G_b": GB, "X1": X1, "X4": X4}
"""The paper's tables G0 (Table 1), G_a and G_b (Table 4), and our X1 and X4 (tables only the
inclusive strategy releases; ``docs/theory/disclosure-sets.md#worked-examples``)."""


def running_sequence() -> GeneralizationSequence:
    """g1, g2, g3 of the running example (Table 2), as a :class:`GeneralizationSequence`."""
    return GeneralizationSequence.from_labels(RUNNING_LABELS)


def exclusive_disclosure_set(
    seq: GeneralizationSequence, i: int, sa: Sequence[int] | np.ndarray, chk: Chk
) -> tuple[int, np.ndarray]:
    """``DS_excl(g_i(sa))`` at any level ``i`` (0-based), whether or not the exclusive publisher
    would reach it (``docs/theory/disclosure-sets.md#exclusive``): the instances of ``PER(g_i(sa))``
    for which no earlier generalization's PER passes CHK. Returns its size and per-person value
    counts ``[n, n_sa]``. The publishers stop at the first naive pass; the worked examples
    (``docs/theory/disclosure-sets.md#worked-examples``) also list the levels before and after
    it."""
    x = np.asarray(sa, dtype=np.int64)
    n_sa = int(x.max()) + 1
    per = enumerate_per(seq, i, signature(seq, i, x, n_sa))
    keep = np.ones(per.shape[0], dtype=bool)
    for j in range(i):
        keep &= ~np.asarray(chk.groups_pass(signatures(seq, j, per, n_sa)))
    return int(keep.sum()), person_counts(per[keep], n_sa)


# -- the worked-example table --------------------------------------------------------------------
def _fmt(v: Any) -> str:
    if isinstance(v, Fraction):
        return str(v.numerator) if v.denominator == 1 else f"{v.numerator}/{v.denominator}"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def _num(v: Any) -> float:
    if v is None:
        return float("nan")
    return float(v)


def outcome_code(released: int | None) -> int:
    """1-based released index, 0 = nothing (φ): the numeric form of an outcome."""
    return 0 if released is None or released == NOTHING else int(released) + 1


def outcome_name(code: int) -> str:
    return "nothing" if code == 0 else f"g{code}"


def _row(
    section: str,
    panel: str,
    item: str,
    ours: Any,
    spec: Any,
    paper: Any = None,
    paper_text: str | None = None,
    remark: str = "",
) -> Row:
    """One quantity: ``ours``/``spec``/``paper`` as numbers (NaN where absent) and as text
    (exact fractions, outcome names); ``spec`` is our value verified by enumeration. ``paper``
    is None where the paper prints no number."""
    if panel.startswith("outcome"):
        ours_t, spec_t = outcome_name(int(ours)), outcome_name(int(spec))
        paper_t = paper_text or ("" if paper is None else outcome_name(int(paper)))
    else:
        ours_t, spec_t = _fmt(ours), _fmt(spec)
        paper_t = paper_text or ("" if paper is None else _fmt(paper))
    if paper is None:
        verdict = (
            "matches our verified value" if ours_t == spec_t else "DIFFERS from our verified value"
        )
    elif ours_t == paper_t or _num(ours) == _num(paper):
        verdict = "reproduced"
    elif ours_t == spec_t:
        verdict = "paper wrong; our correction reproduced"
    else:
        verdict = "DIFFERS"
    return {
        "section": section,
        "panel": panel,
        "item": item,
        "paper": _num(paper),
        "ours": _num(ours),
        "spec": _num(spec),
        "paper_text": paper_t,
        "ours_text": ours_t,
        "spec_text": spec_t,
        "verdict": verdict,
        "remark": remark,
    }


def _max_share(counts: np.ndarray, size: int) -> Fraction:
    return Fraction(int(np.asarray(counts).max()), size)


SIZES = "instances"
SHARES = "largest value share"
OUTCOMES = "outcome (released g_i; 0 = nothing)"
EXHAUSTIVE = "tables (453,600 permutations of G0)"


def worked_examples(ctx: Context | None = None) -> list[Row]:
    """Every number of the worked examples (``docs/theory/disclosure-sets.md#worked-examples``)
    recomputed with the engine, one row per quantity
    (columns: ``section``, ``panel``, ``item``, ``paper``/``ours``/``spec`` as floats and
    ``*_text`` exact, ``verdict``, ``remark``). ``ctx`` caches the class-wide run."""
    seq = running_sequence()
    co = (
        ctx.cached("p002:class-g0", lambda: class_outcomes(seq, np.bincount(G0), PAPER_CHK))
        if ctx is not None
        else class_outcomes(seq, np.bincount(G0), PAPER_CHK)
    )
    steps = {name: inclusive(seq, TABLES[name], PAPER_CHK).steps for name in ("G0", "G_a", "G_b")}
    rows = [
        *_per_sizes(seq),
        *_disclosure_sets(seq, steps),
        *_example_3(seq),
        *_example_7(co),
        *_example_8(co),
        *_person_shares(seq, steps["G0"][2]),
        *_outcomes(seq),
        *_exhaustive(co),
    ]
    done = [_finish(r) for r in rows]
    tally: dict[tuple[str, str], int] = {}
    for r in done:
        group = (str(r["figure_panel"]), str(r["verdict"]))
        tally[group] = tally.get(group, 0) + 1
    return [{**r, "quantities": tally[(r["figure_panel"], r["verdict"])]} for r in done]


def _per_sizes(seq: GeneralizationSequence) -> list[Row]:
    """``|PER|`` of G0 under g1-g3 (``docs/theory/disclosure-sets.md#per``)."""
    rows = []
    per_rows: tuple[tuple[int, int | None], ...] = ((16, 16), (144, None), (432, None))
    for i, (spec_per, paper_per) in enumerate(per_rows):
        size = per_size(seq, i, signature(seq, i, G0))
        remark = "paper prints 2x2x1x2 = 16 (one factor 2 dropped)" if i == 0 else ""
        rows.append(
            _row("4.4", SIZES, f"|PER| G0 g{i + 1}", size, spec_per, paper_per, remark=remark)
        )
    return rows


_SPEC_DS = {  # (table, level): (|DS_incl|, max share incl, |DS_excl|, max share excl)
    ("G0", 0): (16, Fraction(1), 16, Fraction(1)),
    ("G0", 1): (16, Fraction(1), 16, Fraction(1)),
    ("G0", 2): (100, Fraction(19, 25), 68, Fraction(11, 17)),
    ("G_a", 0): (32, Fraction(1, 2), 32, Fraction(1, 2)),
    ("G_b", 0): (4, Fraction(1), 4, Fraction(1)),
    ("G_b", 1): (20, Fraction(4, 5), 20, Fraction(4, 5)),
    ("G_b", 2): (100, Fraction(19, 25), 68, Fraction(11, 17)),
}
_PAPER_DS: dict[tuple[str, int, str], tuple[Any, str | None]] = {
    ("G0", 1, "incl size"): (16, None),  # Example 2: DS_2 = the instances with E = F = c4
    ("G0", 1, "incl share"): (1, None),
    # Example 7 (wrong: docs/theory/disclosure-sets.md#err-example7)
    ("G0", 2, "incl size"): (120, None),
    ("G0", 2, "incl share"): (Fraction(4, 5), "0.8"),
    ("G0", 2, "excl size"): (68, "68 (20 + 24 + 24)"),  # Example 8
    ("G0", 2, "excl share"): (Fraction(11, 17), "0.647"),
    ("G_b", 2, "excl size"): (68, "68 (20 + 24 + 24)"),
    ("G_b", 2, "excl share"): (Fraction(11, 17), "0.647"),
}


def _disclosure_sets(seq: GeneralizationSequence, steps: dict[str, tuple[Step, ...]]) -> list[Row]:
    """The disclosure sets' sizes and largest value shares, both strategies, for
    G0, G_a and G_b (``steps``: the inclusive publisher's steps per table)."""
    rows = []
    for (name, i), (isz, ish, esz, esh) in _SPEC_DS.items():
        step = steps[name][i]
        esize, ecounts = exclusive_disclosure_set(seq, i, TABLES[name], PAPER_CHK)
        g = f"{name} g{i + 1}"
        quantities: tuple[tuple[str, Any, Any], ...] = (
            ("incl size", step.disclosure_size, isz),
            ("incl share", _max_share(step.counts, step.disclosure_size), ish),
            ("excl size", esize, esz),
            ("excl share", _max_share(ecounts, esize), esh),
        )
        for what, ours, spec in quantities:
            paper, ptext = _PAPER_DS.get((name, i, what), (None, None))
            strat = "DS_incl" if what.startswith("incl") else "DS_excl"
            label = f"|{strat}| {g}" if what.endswith("size") else f"max share {strat} {g}"
            remark = (
                "Example 7: the paper's 120 and 0.8 are wrong (case 2 is not empty)"
                if (name, i) == ("G0", 2) and what.startswith("incl")
                else ""
            )
            panel = SIZES if what.endswith("size") else SHARES
            rows.append(_row("4.4", panel, label, ours, spec, paper, ptext, remark))
    return rows


def _example_3(seq: GeneralizationSequence) -> list[Row]:
    """Example 3 (``docs/theory/disclosure-sets.md#worked-examples``): the g1-signatures inside
    ``PER(G_2)``, the ones passing CHK (the paper's circles) and the instances they remove."""
    per2 = enumerate_per(seq, 1, signature(seq, 1, G0))
    s1 = signatures(seq, 0, per2, int(per2.max()) + 1)
    uniq, inv = np.unique(s1.reshape(s1.shape[0], -1), axis=0, return_inverse=True)
    passing = np.asarray(PAPER_CHK.groups_pass(uniq.reshape((-1, *s1.shape[1:]))))
    inv = inv.ravel()
    return [
        _row("4.4", SIZES, "Ex. 3: g1-generalizations in PER(G_2)", uniq.shape[0], 9, 9),
        _row("4.4", SIZES, "Ex. 3: circles (those passing CHK)", int(passing.sum()), 8, 8),
        _row("4.4", SIZES, "Ex. 3: instances removed", int(passing[inv].sum()), 128),
        _row("4.4", SIZES, "Ex. 3: DS_2 left", int((~passing[inv]).sum()), 16),
    ]


_C2, _C4, _C6 = 1, 3, 5
"""The paper's labels c2, c4, c6 as engine codes."""


def _per3(co: ClassOutcomes) -> dict[str, np.ndarray]:
    """The instances of ``PER(G_3)`` in the class-wide run ``co`` (``tables``, their
    ``inclusive`` and ``naive`` released index) and the three sets Examples 7 and 8 split
    them into: E = F = c4, else C = D = c2, else G = H = c6."""
    lvl3 = co.levels[2]
    in_per3 = lvl3.signature == lvl3.signature[co.find(np.asarray(G0))]
    t = co.tables[in_per3].astype(np.int64)
    e, f = PEOPLE.index("E"), PEOPLE.index("F")
    set1 = (t[:, e] == _C4) & (t[:, f] == _C4)
    return {
        "tables": t,
        "inclusive": co.inclusive[in_per3],
        "naive": co.naive[in_per3],
        "set1": set1,
        "set2": ~set1 & (t[:, 2] == _C2) & (t[:, 3] == _C2),
        "set3": ~set1 & (t[:, 6] == _C6) & (t[:, 7] == _C6),
    }


def _example_7(co: ClassOutcomes) -> list[Row]:
    """Example 7: the inclusive strategy's split of ``PER(G_3)``; the paper's
    "no instance satisfies case 2" is wrong, which changes its printed 120 and 0.8."""
    p = _per3(co)
    t, incl, set1, set2, set3 = p["tables"], p["inclusive"], p["set1"], p["set2"], p["set3"]
    case1 = incl == 0
    case2 = incl == 1
    ds3 = ~case1 & ~case2
    share_e = Fraction(int((ds3 & (t[:, PEOPLE.index("E")] == _C4)).sum()), int(ds3.sum()))
    return [
        _row("4.5", SIZES, "Ex. 7: PER(G_3) case 1 (g1 PER passes)", int(case1.sum()), 312),
        _row(
            "4.5",
            SIZES,
            "Ex. 7: PER(G_3) case 2 (DS_incl of g2 passes)",
            int(case2.sum()),
            20,
            0,
            "0 ('no instance satisfies case 2')",
            "case 2 is not empty: e.g. A c1, B c2, C c3, D c6, E c4, F c4, G c2, H c6, I c5, J c7",
        ),
        _row("4.5", SIZES, "Ex. 7: DS_incl3 set 1 (E = F = c4)", int((ds3 & set1).sum()), 52, 72),
        _row("4.5", SIZES, "Ex. 7: DS_incl3 set 2 (C = D = c2)", int((ds3 & set2).sum()), 24, 24),
        _row("4.5", SIZES, "Ex. 7: DS_incl3 set 3 (G = H = c6)", int((ds3 & set3).sum()), 24, 24),
        _row(
            "4.5",
            SHARES,
            "Ex. 7: share E = c4 in DS_incl3",
            share_e,
            Fraction(19, 25),
            Fraction(4, 5),
            "0.8 = 96/120",
            "correct: 76/100",
        ),
    ]


def _example_8(co: ClassOutcomes) -> list[Row]:
    """Example 8: the exclusive strategy's disclosure set of ``G_3``."""
    p = _per3(co)
    t, set1, set2, set3 = p["tables"], p["set1"], p["set2"], p["set3"]
    dse = p["naive"] == 2
    d, gg, e = PEOPLE.index("D"), PEOPLE.index("G"), PEOPLE.index("E")
    return [
        _row(
            "4.6",
            SIZES,
            "Ex. 8: set 1 with D = c2, G = c6",
            int((set1 & (t[:, d] == _C2) & (t[:, gg] == _C6)).sum()),
            36,
            36,
        ),
        _row("4.6", SIZES, "Ex. 8: DS_excl3 set 1", int((dse & set1).sum()), 20, 20),
        _row("4.6", SIZES, "Ex. 8: DS_excl3 sets 2 + 3", int((dse & (set2 | set3)).sum()), 48, 48),
        _row(
            "4.6",
            SHARES,
            "Ex. 8: share E = c4 in DS_excl3",
            Fraction(int((dse & (t[:, e] == _C4)).sum()), int(dse.sum())),
            Fraction(11, 17),
            Fraction(11, 17),
            "0.647 = 44/68",
        ),
    ]


def _person_shares(seq: GeneralizationSequence, incl3: Step) -> list[Row]:
    """Per-person largest shares of the two ``DS_3`` (the ratio tables of Examples 7 and 8),
    A..J; ``incl3`` is the inclusive publisher's third step on G0."""
    spec_incl = tuple(Fraction(v, 25) for v in (9, 9, 11, 15, 19, 19, 15, 11, 9, 9))
    spec_excl = tuple(Fraction(v, 17) for v in (7, 7, 11, 11, 11, 11, 11, 11, 7, 7))
    esize, ecounts = exclusive_disclosure_set(seq, 2, G0, PAPER_CHK)
    rows = []
    for sec, label, counts, size, spec_t in (
        (
            "4.5",
            "DS_incl3 max share per person A..J",
            incl3.counts,
            incl3.disclosure_size,
            spec_incl,
        ),
        ("4.6", "DS_excl3 max share per person A..J", ecounts, esize, spec_excl),
    ):
        ours_t = tuple(Fraction(int(c), size) for c in np.asarray(counts).max(axis=1))
        row = _row(sec, SHARES, label, max(ours_t), max(spec_t))
        row["ours_text"] = " ".join(_fmt(v) for v in ours_t)
        row["spec_text"] = " ".join(_fmt(v) for v in spec_t)
        row["verdict"] = (
            "matches our verified value" if ours_t == spec_t else "DIFFERS from our verified value"
        )
        rows.append(row)
    return rows


_SPEC_OUT = {  # table: (naive, inclusive, exclusive), 1-based index, 0 = nothing
    "G0": (2, 0, 0),
    "G_a": (1, 1, 1),
    "G_b": (3, 0, 3),
    "X1": (2, 3, 0),
    "X4": (3, 3, 0),
}
_PAPER_OUT: dict[tuple[str, str], tuple[int, str]] = {
    ("G0", "naive"): (2, "g2 (section 1: E and F certainly c4)"),
    ("G0", "inclusive"): (0, "nothing (Example 7)"),
    ("G0", "exclusive"): (0, "nothing (Example 6)"),
    ("G_a", "inclusive"): (1, "g1 (Example 4: case 1)"),
    ("G_b", "inclusive"): (0, "nothing"),
    ("G_b", "exclusive"): (3, "g3 (Example 8)"),
}


def _outcomes(seq: GeneralizationSequence) -> list[Row]:
    """The outcomes table (what each strategy releases for each table), with the
    naive release's true knowledge on G0 and the disclosure sets of X1 and X4."""
    rows = []
    for name, expect in _SPEC_OUT.items():
        outs: dict[str, Outcome] = {
            "naive": naive(seq, TABLES[name], PAPER_CHK),
            "inclusive": inclusive(seq, TABLES[name], PAPER_CHK),
            "exclusive": exclusive(seq, TABLES[name], PAPER_CHK),
        }
        for strat, spec in zip(("naive", "inclusive", "exclusive"), expect, strict=True):
            paper, ptext = _PAPER_OUT.get((name, strat), (None, None))
            code = outcome_code(outs[strat].released)
            rows.append(_row("4.7", OUTCOMES, f"{name} {strat}", code, spec, paper, ptext))
        if name == "G0":
            nv = outs["naive"]
            rows.append(_row("4.7", SIZES, "G0 naive: true knowledge", nv.disclosure_size, 16))
            rows.append(_row("4.7", SHARES, "G0 naive: max share", max(nv.max_share), 1, 1))
        if name in ("X1", "X4"):
            rows += _inclusive_only(name, outs["inclusive"], outs["exclusive"])
    return rows


def _inclusive_only(name: str, inc: Outcome, exc: Outcome) -> list[Row]:
    """Our X1 and X4 (released only by the inclusive strategy): both disclosure
    sets' sizes and largest shares."""
    spec_inc = {"X1": (216, Fraction(5, 9)), "X4": (160, Fraction(13, 20))}[name]
    spec_exc = {"X1": (16, Fraction(1)), "X4": (144, Fraction(13, 18))}[name]
    return [
        _row("4.7", SIZES, f"{name}: |DS_incl3|", inc.disclosure_size, spec_inc[0]),
        _row("4.7", SHARES, f"{name}: max share DS_incl3", max(inc.max_share), spec_inc[1]),
        _row("4.7", SIZES, f"{name}: |DS_excl| (deciding)", exc.disclosure_size, spec_exc[0]),
        _row("4.7", SHARES, f"{name}: max share DS_excl", max(exc.max_share), spec_exc[1]),
    ]


_SPEC_JOINT = {
    (0, 0, 0): 322_560,
    (1, 1, 1): 7_200,
    (2, 2, 2): 31_104,
    (-1, 2, 2): 2_448,
    (-1, -1, 1): 15_264,
    (-1, -1, 2): 8_640,
    (-1, -1, -1): 66_384,
}
"""Our exhaustive vector (verified by enumeration): tables per (inclusive, exclusive, naive)
outcome."""


def _exhaustive(co: ClassOutcomes) -> list[Row]:
    """The outcome counts over every table with G0's sensitive multiset (the
    class-wide run ``co``)."""
    joint = co.joint_counts()
    rows = [_row("4.7", EXHAUSTIVE, "all tables", int(co.tables.shape[0]), 453_600)]
    for key, spec in _SPEC_JOINT.items():
        label = "/".join(outcome_name(outcome_code(k)) for k in key)
        rows.append(_row("4.7", EXHAUSTIVE, f"(incl/excl/naive) {label}", joint.get(key, 0), spec))
    others = sum(v for k, v in joint.items() if k not in _SPEC_JOINT)
    rows.append(_row("4.7", EXHAUSTIVE, "any other (incl/excl/naive)", others, 0))
    unsafe = int(co.naive_unsafe.sum())
    rows.append(_row("4.7", EXHAUSTIVE, "naive release unsafe", unsafe, 23_904))
    return rows


def _figure_panel(row: Row) -> str:
    item, section = str(row["item"]), str(row["section"])
    if row["panel"] == EXHAUSTIVE:
        return "all 453,600 tables"
    if item.startswith(("X1", "X4")):
        return "X1, X4"
    if section == "4.7":
        return "outcomes"
    if item.startswith(("Ex.", "DS_")):
        return "Ex. 3, 7, 8"
    if "G_a" in item or "G_b" in item:
        return "G_a, G_b"
    return "G0"


def _ratio(value: float, spec: float, outcome: bool) -> float:
    if math.isnan(value):
        return float("nan")
    if outcome or spec == 0:
        return 1.0 if value == spec else 0.0
    return value / spec


def _finish(row: Row) -> Row:
    """Adds the plot's columns: ``figure_panel`` and the paper's and our value as a ratio to our
    verified one (the ``spec`` column, ``*_vs_spec``; outcomes and zero values: 1 = same, 0 =
    not)."""
    outcome = str(row["panel"]).startswith("outcome")
    return {
        **row,
        "figure_panel": _figure_panel(row),
        "paper_vs_spec": _ratio(row["paper"], row["spec"], outcome),
        "ours_vs_spec": _ratio(row["ours"], row["spec"], outcome),
    }
