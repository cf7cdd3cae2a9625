"""The negative-association attack on MASK (paper 000 section 8.2.1, the "PhD-25" attack;
``docs/theory/asap.md#negative-association``; MASK: paper 001 Algorithm 1,
``docs/theory/minimality.md#mask``, and ``docs/theory/asap.md#mask``).

MASK publishes a k-anonymous grouping and, in every group that violates m-confidentiality
(more than ``floor(|G| / m)`` rows of a sensitive set), replaces sensitive values by other
values. A rule the adversary knows, "at most a share ``X`` of the people like this have value
``v``" (few people aged 25 or less hold a Ph.D.), exposes the groups it was done to: a group
whose published cells lie inside the rule's population and whose *published* share of ``v``
exceeds ``X`` cannot be original, so MASK perturbed it, so it violated m-confidentiality. Paper
000: "the education level of each individual in that group can be inferred [with] more than
1/m probability to be below high school"; it never saw a false positive.

**Rules.** :class:`~kerckhoffs.attacks.knowledge.DistributionRule`: ``where`` (conditions on QI
columns: a list of values, or ``{min, max}`` for a numeric column), ``value``, ``share``. The
rule is read per group (the paper's reading): every group inside ``where`` holds at most
``floor(share * |G|)`` rows of ``value``. A group is *inside* when every value its published
cells cover satisfies ``where`` (our reading of the paper's "a group aged 25 or less": the upper end
of the group's age interval is at most 25, ``docs/theory/asap.md#err-phd25``): a
numeric cell ``[lo-hi]`` when ``min <= lo`` and ``hi <= max``; a categorical cell (a value or a
hierarchy node) when every leaf under it is listed (a listed node stands for its leaves). For
a bucketized release, which publishes exact QIs, when every row of the group satisfies
``where``. A group is *flagged* when its published count of ``value`` exceeds
``share * |G|`` (exact rational comparison).

**Posterior (MASK).** A flagged group ``G`` was perturbed, hence violated: its original count
``c`` of the sensitive set ``S`` is at least ``cap + 1`` with ``cap = floor(|G| / m)``. MASK only
turns rows of ``S`` into other values, so every rule value ``w`` outside ``S`` that appears more
often than its rule allows received at least ``pub_w - floor(X_w |G|)`` rows from ``S`` (the
tightest rule per value). Hence

    c >= L(G) = max(cap + 1, pub_S + sum_w max(0, pub_w - floor(X_w |G|))),

and every row of ``G`` is in ``S`` with probability ``E[c] / |G| >= L(G) / |G| > 1/m``: in the
random-worlds model each group's original multiset is laid uniformly on its rows (generalized
or bucketized, the row-to-value link inside a group is not published), so a row's posterior is
the expected share. ``L(G) / |G|`` is reported as the posterior: a lower bound on what the
adversary learns from the flag and the rules (paper 000's Table 2 example,
``docs/theory/asap.md#worked-examples``: Tom's group, 4 rows, ``m = 2``,
rule "Japanese rarely have heart disease": ``L = max(3, 1 + 1) = 3``, posterior ``>= 3/4``).
With several sensitive sets (``each`` mode, or every value sensitive) the flag says that *some*
set violated; sets whose value the rules show gained rows are excluded (MASK only takes rows
away from a violating set). When one set remains the bound applies to it; otherwise no single
value is provably above ``1/m``: the tuples are reported with the bound for "one of" the
candidate sets and not breached.

**MASK+ and MASK++.** MASK+ decides to perturb by its look-ahead on counts it keeps published
(Theorem 5.4, ``docs/theory/asap.md#mask-plus``; ``mask_plus_lookahead`` re-run on the published
counts gives the same decision), so a perturbed group need not have violated m-confidentiality and
the flag tells the adversary nothing the release does not: the tuples of flagged groups are reported
with their group's published share of the sensitive set (at most ``1/m``), not breached. MASK++
splits MASK+ groups by stratified pick-up without changing values, so the same holds.

**Precision.** For an in-process release (its table still holds the original values) the
ground truth is the set of groups MASK actually changed (``sa_published != table.sa``):
``details`` reports precision (flagged groups that were perturbed) and recall (perturbed
groups flagged); a flagged group that was not perturbed means the rule is false there.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from kerckhoffs.algorithms.registry import lookup
from kerckhoffs.attacks.knowledge import DistributionRule, Knowledge
from kerckhoffs.attacks.registry import register_attack
from kerckhoffs.attacks.result import AttackResult, tuple_table
from kerckhoffs.data.cells import label_ranges, numeric_cell
from kerckhoffs.data.hierarchy import Hierarchy, format_value
from kerckhoffs.data.schema import Kind, SensitiveMode
from kerckhoffs.errors import CannotRun, ParameterError
from kerckhoffs.release import Release, Scheme

__all__ = ["negative_association_attack", "rule_flags"]

ATTACK = "negative-association"
SAFE_REASON = (
    "{alg} decides to perturb from counts it publishes (paper 000 Theorem 5.4, Algorithm 3 "
    "(MASK+)): a perturbed group need not have violated m-confidentiality, so the flag adds "
    "nothing to the published share"
)


# -- which groups a rule covers -------------------------------------------------------------------
def _leaves_under(h: Hierarchy, label: str) -> set[str] | None:
    """The leaf labels under every node labelled ``label`` (None: no such node), read with
    the shared cell reader's node table (:func:`kerckhoffs.data.cells.label_ranges`)."""
    ranges = label_ranges(h).get(label)
    if not ranges:
        return None
    leaves = h.leaves
    return {str(leaves[i]) for a, b in ranges for i in range(int(a), int(b) + 1)}


def _allowed_leaves(values: list[Any], h: Hierarchy | None) -> set[str]:
    """The listed values, with listed hierarchy nodes expanded to their leaves."""
    out: set[str] = set()
    for v in values:
        key = format_value(v)
        out.add(key)
        if h is not None:
            out.update(_leaves_under(h, key) or ())
    return out


def _inside_groups(
    release: Release, rule: DistributionRule, index: int
) -> tuple[np.ndarray, np.ndarray]:
    """bool per group: every value its published cells cover satisfies ``rule.where``; and
    bool per group: some cell of it could not be read (a number range over a cell that is no
    interval, a label its column's hierarchy does not have), so whether it is inside is not
    known (it is not counted inside)."""
    t = release.table
    names = t.qi_names
    n_groups = release.partition.n_groups
    inside = np.ones(n_groups, dtype=bool)
    unread = np.zeros(n_groups, dtype=bool)
    outside = np.zeros(n_groups, dtype=bool)  # outside by a column that could be read
    for col_name, cond in rule.where.items():
        if col_name not in names:
            raise ParameterError(
                f"{ATTACK}: rule[{index}] names column {col_name!r}, which is not a "
                f"quasi-identifier of the release ({', '.join(names)})"
            )
        j = names.index(col_name)
        col = t.qi_columns[j]
        if release.scheme == Scheme.BUCKETIZATION:
            try:
                ok_row = _rows_satisfy(col.decode(t.qi[:, j]), col.hierarchy, cond)
            except (TypeError, ValueError):
                raise ParameterError(
                    f"{ATTACK}: rule[{index}] gives column {col_name!r} a numeric range, but "
                    "its values are not numbers"
                ) from None
            bad = np.bincount(release.partition.group, weights=~ok_row, minlength=n_groups)
            inside &= bad == 0
            outside |= bad > 0
            continue
        cells = release.generalized_cells()[col_name].astype(str).to_numpy()
        distinct, back = np.unique(cells, return_inverse=True)
        found = [_cell_inside(c, col.hierarchy, col.kind, cond) for c in distinct.tolist()]
        # (a loop over distinct published cells, not over rows)
        inside &= np.array([f is True for f in found], dtype=bool)[back]
        unread |= np.array([f is None for f in found], dtype=bool)[back]
        outside |= np.array([f is False for f in found], dtype=bool)[back]
    return inside, unread & ~outside  # a group outside by a column it could read is decided


def _cell_inside(cell: str, h: Hierarchy | None, kind: Kind, cond: Any) -> bool | None:
    """Whether every value the published ``cell`` covers satisfies ``cond`` (None: the cell
    could not be read)."""
    if isinstance(cond, dict):
        # the shared reader: a value, an interval (ours, ARX's half-open ones), a comparison,
        # a digit mask, '*', or a node of the column's hierarchy
        span = numeric_cell(cell, h)
        if span is None:
            return None
        return span[0] >= cond.get("min", -math.inf) and span[1] <= cond.get("max", math.inf)
    allowed = _allowed_leaves(list(cond), h if kind == Kind.CATEGORICAL else None)
    if cell in allowed:
        return True
    if h is None or kind != Kind.CATEGORICAL:
        return False  # a value not listed (a column without hierarchy publishes values)
    leaves = _leaves_under(h, cell)
    if leaves is None:
        return None  # a label the column's hierarchy does not have
    return leaves <= allowed


def _rows_satisfy(values: np.ndarray, h: Hierarchy | None, cond: Any) -> np.ndarray:
    if isinstance(cond, dict):
        v = np.asarray(values, dtype=float)
        return (v >= cond.get("min", -math.inf)) & (v <= cond.get("max", math.inf))
    allowed = _allowed_leaves(list(cond), h)
    return np.isin(np.array([format_value(x) for x in values], dtype=object), list(allowed))


# -- the attack ------------------------------------------------------------------------------------
def _share_fraction(rule: DistributionRule, index: int) -> Fraction:
    share = rule.share
    if isinstance(share, bool) or not isinstance(share, int | float) or not 0 <= share <= 1:
        raise ParameterError(f"{ATTACK}: rule[{index}]: share must be in [0, 1], got {share!r}")
    return Fraction(share).limit_denominator(10**9)


def _value_code(release: Release, rule: DistributionRule, index: int) -> int | None:
    """The SA code of the rule's value (None: a value of the SA's hierarchy that no row of the
    release holds, so no group publishes more of it than the rule allows: the rule flags
    nothing). A value the SA does not have is a one-line error."""
    col = release.table.sa_column
    labels = [str(x) for x in col.labels.tolist()]
    key = format_value(rule.value)
    if key in labels:
        return labels.index(key)
    h = col.hierarchy
    if h is not None and key in {format_value(x) for x in h.leaves.tolist()}:
        return None
    raise ParameterError(
        f"{ATTACK}: rule[{index}]: value {key!r} is not a value of "
        f"{release.table.sa_name!r} in the release"
    )


def rule_flags(release: Release, rules: Sequence[DistributionRule]) -> tuple[np.ndarray, ...]:
    """Per rule: bool per group, the group lies inside the rule's ``where`` and publishes more
    of its value than its share allows (paper 000 section 8.2.1's "problematic" groups)."""
    return tuple(flags for flags, _ in _rule_flags(release, rules))


def _rule_flags(
    release: Release, rules: Sequence[DistributionRule]
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per rule: :func:`rule_flags`'s flags, and bool per group: it publishes more of the
    rule's value than the share allows but some cell of it could not be read, so the rule
    was not tested on it."""
    counts = release.histogram().counts
    sizes = counts.sum(axis=1)
    out = []
    for i, rule in enumerate(rules):
        share = _share_fraction(rule, i)
        code = _value_code(release, rule, i)
        inside, unread = _inside_groups(release, rule, i)
        if code is None:
            over = np.zeros(sizes.shape[0], dtype=bool)
        else:
            over = counts[:, code] * share.denominator > share.numerator * sizes
        out.append((inside & over, unread & over))
    return out


def _sensitive_sets(release: Release) -> tuple[list[np.ndarray], list[str]]:
    """The sets MASK bounds (as in :func:`kerckhoffs.algorithms.mask.sensitive_sets`, over the
    whole SA domain) and their labels."""
    t = release.table
    labels = [str(x) for x in t.sa_column.labels.tolist()]
    sens = np.asarray(t.sensitive, dtype=bool)
    codes = np.arange(t.n_sa)
    if sens.all():
        return [codes == c for c in codes], labels
    if t.schema.sensitive_mode == SensitiveMode.SET:
        return [sens.copy()], ["|".join(labels[c] for c in np.flatnonzero(sens))]
    return [codes == c for c in np.flatnonzero(sens)], [labels[c] for c in np.flatnonzero(sens)]


def negative_association_attack(
    release: Release,
    rules: Sequence[DistributionRule],
    *,
    m: int | None = None,
    algorithm: str | None = None,
) -> AttackResult:
    """The PhD-25 attack (module docstring) on a MASK-family release.

    ``m`` defaults to the release's recorded ``m``; ``algorithm`` (default: the provenance)
    picks the posterior: ``mask`` (and anything outside the family) reads a flag as "this
    group violated m-confidentiality"; ``mask+`` / ``mask++`` as "perturbed by look-ahead".
    One tuple per row of a flagged group: ``row``, ``sa_value`` (the sensitive set, or "one
    of ..."), ``posterior``, ``breached`` (above ``1/m``), ``group``, ``rule`` (the first rule
    flagging it) and, for in-process releases, ``perturbed`` (the group was changed).
    """
    if not rules:
        raise ParameterError(f"{ATTACK}: needs at least one rule (value, share, where)")
    alg = algorithm if algorithm is not None else release.provenance.algorithm
    m = _m_of(release, m)
    hist = release.histogram().counts
    sizes = hist.sum(axis=1)
    n_groups = sizes.shape[0]
    tested = _rule_flags(release, rules)
    flags = tuple(f for f, _ in tested)
    gaps = [
        f"rule[{i}] not tested on {_groups(int(u.sum()))} whose cells could not be read"
        for i, (_, u) in enumerate(tested)
        if u.any()
    ]
    flagged = np.zeros(n_groups, dtype=bool)
    first_rule = np.full(n_groups, -1, dtype=np.int64)
    for i, f in enumerate(flags):
        first_rule = np.where(f & (first_rule < 0), i, first_rule)
        flagged |= f
    sets, set_labels = _sensitive_sets(release)
    set_counts = np.stack([hist[:, s].sum(axis=1) for s in sets], axis=1)  # [groups, sets]
    cap = sizes // m
    info = lookup(alg)  # MASK+ and MASK++ refine MASK: their perturbation reads published counts
    safe = info is not None and info.perturbs_sa and info.base is not None

    # rows moved out of S into each rule value w, at least: max over rules on w, summed over w
    codes, gained = _gains(release, rules, flags, hist, sizes)
    excess = np.zeros(n_groups)
    candidates = np.ones((n_groups, len(sets)), dtype=bool)
    for code, g in zip(codes, gained, strict=True):
        in_set = np.array([bool(s[code]) for s in sets])
        candidates[:, in_set] &= (g == 0)[:, None]  # a violating set only loses rows
    for code, g in zip(codes, gained, strict=True):
        outside_all = not any(bool(s[code]) for s in sets)
        if outside_all or len(sets) > 1:
            excess += g
    n_cand = candidates.sum(axis=1)
    single = n_cand == 1
    which = np.argmax(candidates, axis=1)
    pub_s = set_counts[np.arange(n_groups), which]
    lower = np.where(single, np.maximum(cap + 1, pub_s + excess), cap + 1)
    bound = np.minimum(lower, sizes) / np.maximum(sizes, 1)
    share_pub = (set_counts.max(axis=1) / np.maximum(sizes, 1)).astype(float)
    label_pub = np.asarray(set_labels, dtype=object)[np.argmax(set_counts, axis=1)]
    if safe:
        post_g = share_pub
        label_g = label_pub
        breach_g = np.zeros(n_groups, dtype=bool)
    else:
        post_g = bound
        one_of = np.array(
            [
                "one of " + "|".join(set_labels[s] for s in np.flatnonzero(c))
                if c.sum() > 1
                else set_labels[int(np.argmax(c))]
                for c in candidates[flagged]
            ],
            dtype=object,
        )  # a loop over flagged groups, for their labels
        label_g = np.empty(n_groups, dtype=object)
        label_g[flagged] = one_of
        breach_g = single & (post_g * m > 1 + 1e-12)

    group = release.partition.group
    rows = np.flatnonzero(flagged[group])
    g_rows = group[rows]
    extra: dict[str, Any] = {"group": g_rows, "rule": first_rule[g_rows]}
    details: dict[str, Any] = {
        "m": m,
        "model": alg,
        "rules": len(rules),
        "flagged_groups": int(flagged.sum()),
        "flagged_rows": int(rows.size),
        "per_rule_groups": [int(f.sum()) for f in flags],
    }
    in_process = release.sa_published is not release.table.sa
    if in_process:
        changed = np.bincount(group, weights=release.perturbed, minlength=n_groups) > 0
        hit = int((flagged & changed).sum())
        extra["perturbed"] = changed[g_rows]
        details |= {
            "perturbed_groups": int(changed.sum()),
            "true_positive_groups": hit,
            "false_positive_groups": int((flagged & ~changed).sum()),
            "precision": hit / int(flagged.sum()) if flagged.any() else None,
            "recall": hit / int(changed.sum()) if changed.any() else None,
        }
    if safe:
        details["reason"] = SAFE_REASON.format(alg=alg)
    tuples = tuple_table(
        rows,
        label_g[g_rows] if rows.size else [],
        post_g[g_rows],
        breach_g[g_rows],
        **extra,
    )
    return AttackResult(ATTACK, tuples, release.table.n, 1 / m, details, gaps=gaps)


def _m_of(release: Release, m: Any) -> int:
    """``m`` given, else the release's recorded ``m``: a whole number >= 1."""
    if m is None:
        m = release.provenance.parameters.get("m")
    try:
        ok = not isinstance(m, bool) and float(m).is_integer() and float(m) >= 1
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ParameterError(f"{ATTACK}: m must be a whole number >= 1 (got {m!r}); pass m=")
    return int(float(m))


def _groups(n: int) -> str:
    return f"{n:,} group" + ("" if n == 1 else "s")


def _gains(
    release: Release,
    rules: Sequence[DistributionRule],
    flags: tuple[np.ndarray, ...],
    hist: np.ndarray,
    sizes: np.ndarray,
) -> tuple[list[int], list[np.ndarray]]:
    """Per rule value ``w``: the rows it provably received in each group, ``max(0, pub_w -
    floor(X |G|))`` maximized over the rules on ``w`` that cover the group (0 elsewhere)."""
    per_code: dict[int, np.ndarray] = {}
    for i, (rule, flag) in enumerate(zip(rules, flags, strict=True)):
        code = _value_code(release, rule, i)
        if code is None:  # a value no row holds gains nothing
            continue
        share = _share_fraction(rule, i)
        allowed = (share.numerator * sizes) // share.denominator
        g = np.where(flag, np.maximum(hist[:, code] - allowed, 0), 0)
        per_code[code] = np.maximum(per_code.get(code, 0), g)
    return list(per_code), list(per_code.values())


# -- registry adapter ------------------------------------------------------------------------------
def _applies(releases: Sequence[Release], knowledge: Knowledge) -> str | None:
    if len(releases) != 1:
        return "attacks one release at a time"
    alg = releases[0].provenance.algorithm
    info = lookup(alg)
    if info is None or not info.perturbs_sa:
        return f"the release was made by {alg}, not by MASK, MASK+ or MASK++"
    if not knowledge.rules:
        return 'needs a rule in the knowledge ("at most share X of people like this have v")'
    if releases[0].provenance.parameters.get("m") is None:  # a MASK release all the same
        raise CannotRun(
            f"{ATTACK}: the release does not record m, which the attack re-runs MASK with"
        )
    return None


@register_attack(
    ATTACK,
    summary="paper 000 section 8.2.1 (PhD-25): rules expose the groups MASK perturbed",
    applies=_applies,
    reads=("rules",),
)
def _run(releases: Sequence[Release], knowledge: Knowledge, **options: Any) -> AttackResult:
    """Registry adapter: ``releases[0]`` attacked with :func:`negative_association_attack` and
    the knowledge's rules. Options: ``m``, ``algorithm``."""
    if not releases:
        raise ParameterError(f"{ATTACK}: no release to attack")
    unknown = sorted(set(options) - {"m", "algorithm"})
    if unknown:
        raise ParameterError(f"{ATTACK}: unknown option {unknown[0]!r} (known: algorithm, m)")
    return negative_association_attack(
        releases[0], knowledge.rules, m=options.get("m"), algorithm=options.get("algorithm")
    )
