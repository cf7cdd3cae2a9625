"""The minimality attack on a whole release (Wong, Fu, Wang, Pei; paper 001 sections 4 and 7.1).

An anonymizer that follows the minimality principle (Definition 3) generalizes a set of
tuples only because publishing them less generalized would violate its requirement. An
adversary who knows the original QIDs of the population (``T^q``, Assumption 3) and that
principle learns that, in every generalized EC, at least one of the original classes (tuples
with identical ground QIDs) would have violated the requirement (Lemma 1), and reweighs the
possible assignments of the published sensitive values accordingly. :func:`minimality_attack`
is the whole-table driver used by the paper's section 7.1 experiment
(``docs/theory/minimality.md#attack-driver``):

1. **Classes and ECs.** The individuals' ground QIDs are grouped into classes ``C`` (size
   ``n_C``). Each published EC is a box of code ranges, one per QI (a numeric interval, or the
   leaf range of a hierarchy node: categorical codes follow the hierarchy's depth-first order).
   An EC whose box is a single point is *ungeneralized*: its tuples are the class with that
   QID (``n_{C,u}`` tuples, ``n_{C,u(s)}`` of them sensitive); the class's other ``n_{C,g} =
   n_C - n_{C,u}`` tuples sit in generalized ECs.
2. **Cover.** A generalized EC ``P`` covers the classes with ``n_{C,g} > 0`` inside its box.
   When a class is covered by several ECs, how its tuples split between them is unknown to
   the adversary (paper 001 section 4.2.2 gives no method for a class split over several ECs;
   ``docs/theory/minimality.md#err-split-class``) unless the counts force it:
   an EC with one undecided class holds the rest of its tuples from it, a class with one undecided
   EC puts the rest of its tuples there (repeated until nothing changes). Each EC whose split is
   known is attacked on its own: its specialization returns each class's part to the class's
   ungeneralized tuples, and that merged EC must have violated (Definition 3 per EC); with a single
   covering EC this is the whole class of our threshold reading
   (``docs/theory/minimality.md#err-local-thresholds``). The ECs linked by a split that stays
   unknown are *ambiguous*: each connected group of them gets the no-exclusion credibility of the
   group pooled (our resolution of the split class: reported as ambiguous, no-exclusion credibility,
   ``docs/theory/minimality.md#err-split-class``; flagged ``ambiguous_split``). Matching cardinality
   (Definition 9) is checked throughout: the ECs must hold exactly the covered classes' generalized
   tuples, else :class:`~kerckhoffs.errors.InputError`.
3. **Credibility** (paper 001 sections 4.1-4.2; ``docs/theory/minimality.md#attack-global`` and
   ``docs/theory/minimality.md#attack-local``). Per sensitive set ``s`` and generalized EC, class
   ``C`` (with ``g`` tuples in the EC) violates when the EC's specialization gives it more than
   ``tau_C = floor((n_{C,u} + g) / l) - n_{C,u(s)}`` sensitive tuples ("whole class": paper 001
   section 4.2.2's thresholds on the generalized part alone contradict its own examples, so we
   apply them to the whole class, ``docs/theory/minimality.md#err-local-thresholds``;
   ``local_mode="paper_literal"`` uses ``floor(g / l)``), or always when it has fewer than
   ``k`` tuples. The engine (:func:`~kerckhoffs.attacks.minimality.batch.expected_batch`)
   gives ``E[Y_C | some class of the EC violates]`` and ``cred(C, s) = (sum over its ECs of
   E[Y_C] + n_{C,u(s)}) / n_C``; an EC where no class can violate gives the no-exclusion value
   (the edge case "no class can violate", ``docs/theory/minimality.md#attack-edge-cases``; flagged
   ``no_inference``). Global recoding is the case ``n_{C,u} = 0``, so one driver
   serves both recodings.
4. **Report.** Every individual gets the credibility of its class for the set it is most
   credibly linked to; ``breached`` when it exceeds ``1/m``. The paper's figures (section 7.1;
   the paper does not say which tuples it counts, we read it as below:
   ``docs/theory/minimality.md#err-problematic``) are in ``details``: *problematic
   tuples* = sensitive tuples (their true value is in ``s``) whose class has ``cred(C, s) > 1/m``,
   their proportion among all sensitive tuples and their average credibility (the truth is the
   table's SA: the original for a release made in this process).

**Near-minimality** (Definition 4; ``docs/theory/minimality.md#near-minimality``): the requirement's
``l`` is the one the algorithm *enforces* (e.g. 3) and ``m`` the one it *promises* (e.g. 2):
:func:`near_minimality_attack`.

**Which requirement.** By Kerckhoffs's principle the adversary knows the algorithm, so the
requirement comes from the release's provenance (:func:`requirement_of`): ``local-recoding``
(``alpha``, ``k``: the minimal local recoding paper 001 attacks) and ``lattice`` (frequency
l-diversity, (alpha, k)-anonymity, m-confidentiality or k-anonymity: full-domain
generalization, read per EC as the paper does, although its section 4.1 ignores that raising a level
for one EC changes others: ``docs/theory/minimality.md#err-global-coupling``) generalize where the
requirement forces them to. MASK, MASK+ and MASK++ group on the QIs only (k-anonymity): their
requirement does not look at the SA, nothing can be excluded, and the credibility is the published
frequency, at most ``1/m`` (paper 001 Theorem 4, case 1). Mondrian is not in the list: it stops when
no *median* cut is allowed, which does not mean that a class violates (a skewed dimension may have
no strict median cut), so Lemma 1 does not hold for it; its adversary is the attack by mechanism
(:mod:`kerckhoffs.attacks.minimality.mechanism`). Any release can still be attacked under an
explicit :class:`Requirement`.

**Cost.** Everything is numpy over classes, boxes and (class, EC) pairs; the Python loops are
over QI dimensions (box containment), propagation rounds (splits, components), sensitive sets
(one on Adult) and, inside the engine, factor ranks and exponent bits. Adult (45,222 rows,
about 17,000 classes) takes a fraction of a second (``benchmarks/bench_minimality_attack.py``).

**Who is attacked.** For a release made in this process (or a bucketized release read back),
the individuals are the rows of ``release.table`` and ``T^q`` is their QIs. A generalized
release read back from files holds only its published cells: pass the population's original
QIs (``population``, e.g. ``Knowledge.population``) and a ``schema`` whose hierarchies say what
each published cell covers; the individuals are then the population's rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs.algorithms.registry import lookup, names_where
from kerckhoffs.attacks.locate import population_table
from kerckhoffs.attacks.minimality.batch import expected_batch
from kerckhoffs.attacks.minimality.credibility import LOCAL_MODES
from kerckhoffs.attacks.minimality.structure import (
    Structure,
    cells_boxes,
    published_boxes,
    structure,
)
from kerckhoffs.attacks.result import AttackResult, tuple_table
from kerckhoffs.data.schema import Schema, SensitiveMode
from kerckhoffs.data.table import Table
from kerckhoffs.errors import ParameterError
from kerckhoffs.models import AlphaKAnonymity, KAnonymity, LDiversity, MConfidentiality
from kerckhoffs.release import Partition, Release, Scheme

__all__ = [
    "Requirement",
    "credibility_sets",
    "minimality_attack",
    "near_minimality_attack",
    "requirement_of",
]

NAME = "minimality"
EPS = 1e-9
NEVER = np.iinfo(np.int32).max


@dataclass(frozen=True)
class Requirement:
    """What the adversary assumes the anonymizer enforced on every class (the requirements of
    paper 001, ``docs/theory/minimality.md#requirements``): at least
    ``k`` tuples and, unless ``l`` is None, at most ``floor(n / l)`` tuples of each sensitive
    set (simplified l-diversity; ``(alpha, k)``-anonymity is ``l = 1/alpha``; per-group
    m-confidentiality is ``l = m``). ``l = None``: the requirement ignores the SA."""

    l: float | None = None  # noqa: E741
    k: int = 1

    def __post_init__(self) -> None:
        if self.l is not None and not self.l >= 1:
            raise ParameterError(f"minimality: l must be at least 1, got {self.l}")
        if int(self.k) != self.k or self.k < 1:
            raise ParameterError(f"minimality: k must be a positive integer, got {self.k}")

    def limit(self, n: np.ndarray) -> np.ndarray:
        """The most sensitive tuples of one set a class of ``n`` tuples may hold."""
        n = np.asarray(n, dtype=np.int64)
        if self.l is None:
            return np.full(n.shape, NEVER, dtype=np.int64)
        if float(self.l).is_integer():
            return n // int(self.l)
        return np.floor(n / self.l + EPS).astype(np.int64)

    def describe(self) -> str:
        parts = [] if self.l is None else [f"l={_num(self.l)}"]
        if self.k > 1 or self.l is None:
            parts.append(f"k={self.k}")
        return ", ".join(parts)


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.6g}"


def _l_of_alpha(alpha: float) -> float | None:
    if alpha >= 1:
        return None
    inv = 1.0 / alpha
    return float(round(inv)) if abs(inv - round(inv)) < 1e-9 else inv


def requirement_of(release: Release) -> tuple[Requirement, float | None] | str:
    """The requirement the release's algorithm enforced and the ``m`` it promises, from its
    provenance and the algorithm's registry entry (:class:`AlgorithmInfo` ``minimal`` and
    ``sa_blind``), or a one-line reason why the attack does not apply (module docstring)."""
    prov = release.provenance
    alg, params = prov.algorithm, prov.parameters or {}
    info = lookup(alg)
    if info is not None and info.sa_blind:
        m = params.get("m")
        return Requirement(None, int(params.get("k", 1))), float(m) if m is not None else None
    if info is None or not info.minimal:
        minimal = ", ".join(names_where(lambda a: a.minimal))
        blind = ", ".join(names_where(lambda a: a.sa_blind))
        return (
            f"{alg!r} is not a minimal-generalization algorithm (the attack assumes the "
            f"anonymizer generalizes only where its requirement forces it: {minimal}; {blind} "
            "are attacked as SA-blind)"
        )
    models = prov.models()
    if not models:  # local recoding records its parameters as numbers
        k = int(params.get("k", 1))
        l = _l_of_alpha(float(params.get("alpha", 1.0)))  # noqa: E741
        return Requirement(l, k), l
    l_vals: list[float] = []
    k = 1
    m_promise: float | None = None
    for model in models:
        if isinstance(model, LDiversity):
            l_vals.append(model.l)
        elif isinstance(model, KAnonymity):
            k = max(k, model.k)
        elif isinstance(model, AlphaKAnonymity):
            la = _l_of_alpha(model.alpha)
            if la is not None:
                l_vals.append(la)
            k = max(k, model.k)
        elif isinstance(model, MConfidentiality):
            l_vals.append(float(model.m))
            m_promise = float(model.m)
        else:
            return (
                f"{alg} release enforcing {model.name} ({model.parameter}): the minimality "
                "attack's engine needs frequency l-diversity, (alpha,k)-anonymity, m or k "
                "(use kerckhoffs.attacks.minimality.possible_worlds for other models)"
            )
    l = max(l_vals) if l_vals else None  # noqa: E741
    return Requirement(l, k), m_promise if m_promise is not None else l


# -- sensitive sets -------------------------------------------------------------------------------
def credibility_sets(table: Table, published: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """The sensitive sets (label, bool mask over SA codes) the credibility is computed for:
    the schema's subset as one set (``set`` mode), or each sensitive value present on its own
    (``each`` mode, or every value sensitive)."""
    present = np.bincount(published, minlength=table.n_sa) > 0
    present |= np.bincount(table.sa, minlength=table.n_sa) > 0
    labels = [str(x) for x in table.sa_column.labels.tolist()]
    codes = np.arange(table.n_sa)
    sens = table.sensitive & present
    if not table.sensitive.all() and table.schema.sensitive_mode == SensitiveMode.SET:
        if not sens.any():
            return []
        names = [labels[c] for c in np.flatnonzero(table.sensitive)]
        return [("{" + ", ".join(names) + "}", table.sensitive.copy())]
    return [(labels[c], codes == c) for c in np.flatnonzero(sens)]


# -- the attack -----------------------------------------------------------------------------------
def minimality_attack(
    release: Release,
    requirement: Requirement | None = None,
    *,
    m: float | None = None,
    local_mode: str = "whole_class",
    population: pd.DataFrame | None = None,
    schema: Schema | None = None,
) -> AttackResult:
    """Run the minimality attack on ``release`` (module docstring) and report every individual.

    ``requirement``: what the anonymizer enforced (default: from the provenance,
    :func:`requirement_of`; a release whose algorithm is not minimal raises
    :class:`~kerckhoffs.errors.ParameterError` unless one is given). ``m``: the bound ``1/m``
    a credibility must not exceed (default: the promise found in the provenance, else the
    requirement's ``l``). ``local_mode``: ``"whole_class"`` (default) or ``"paper_literal"``
    (the two readings of paper 001 section 4.2.2:
    ``docs/theory/minimality.md#err-local-thresholds``). ``population`` + ``schema``: the
    individuals' original QIs, for a generalized release read back from files.

    Returns an :class:`AttackResult` named ``"minimality"``: one tuple per individual (``row``,
    ``sa_value`` = the sensitive set, ``posterior`` = credibility, ``breached`` = credibility
    ``> 1/m``, plus ``group``, ``class_size``, ``generalized`` = the class's tuples in
    generalized ECs, ``flag``), and in ``details`` the problematic tuples, their proportion and
    average credibility (paper section 7.1), and counts of generalized / no-inference /
    ambiguous ECs.
    """
    if local_mode not in LOCAL_MODES:
        raise ParameterError(
            f"minimality: local_mode must be one of {', '.join(LOCAL_MODES)}, got {local_mode!r}"
        )
    promise: float | None = None
    if requirement is None:
        found = requirement_of(release)
        if isinstance(found, str):
            raise ParameterError(f"minimality: {found}; pass a Requirement to attack it anyway")
        requirement, promise = found
    if m is None:
        m = promise if promise is not None else requirement.l
    if m is not None and not m >= 1:
        raise ParameterError(f"minimality: m must be at least 1, got {m}")
    bound = 1.0 / m if m is not None else None

    table = release.table
    part = release.partition
    sizes = part.sizes.astype(np.int64)
    sa_pub = np.asarray(release.sa_published)
    own_rows = population is None
    st = _class_structure(release, sizes, population, schema)

    sets = credibility_sets(table, sa_pub)
    n_ind = st.cls.shape[0]
    n_cls = st.n_c.shape[0]
    truth = table.sa if own_rows else None
    creds, no_inf_groups, fallbacks, tally = _credibilities(
        release, st, sets, requirement, local_mode, truth, bound
    )
    sensitive_tuples, problematic, problematic_cred = tally

    if sets:
        best = np.argmax(creds, axis=0)
        cred_cls = creds[best, np.arange(n_cls)]
        set_labels = np.array([lab for lab, _ in sets], dtype=object)[best]
    else:
        cred_cls = np.zeros(n_cls)
        set_labels = np.full(n_cls, "", dtype=object)
    posterior = cred_cls[st.cls]
    breached = posterior > bound + EPS if bound is not None else np.zeros(n_ind, dtype=bool)
    flag_cls = np.full(n_cls, "", dtype=object)
    flag_cls[st.n_g == 0] = "ungeneralized"
    inf_cls = np.zeros(n_cls, dtype=bool)
    inf_cls[st.item_class[no_inf_groups[st.item_group]]] = True
    flag_cls[inf_cls] = "no_inference"
    flag_cls[st.amb_class] = "ambiguous_split"
    group_col = part.group if own_rows else np.full(n_ind, -1, dtype=np.int32)
    tuples = tuple_table(
        np.arange(n_ind),
        set_labels[st.cls],
        posterior,
        breached,
        group=group_col,
        class_size=st.n_c[st.cls],
        generalized=st.n_g[st.cls],
        flag=flag_cls[st.cls],
    )
    gen = st.generalized
    details: dict[str, Any] = {
        "requirement": requirement.describe(),
        "m": m,
        "local_mode": local_mode,
        "sensitive_sets": [lab for lab, _ in sets],
        "classes": n_cls,
        "groups": int(part.n_groups),
        "generalized_groups": int(gen.sum()),
        "no_inference_groups": int(no_inf_groups.sum()),
        "ambiguous_groups": int(st.ambiguous_groups.sum()),
        "forced_splits": st.forced_splits,
        "exact_fallbacks": fallbacks,
    }
    if truth is not None and bound is not None:
        details.update(
            sensitive_tuples=sensitive_tuples,
            problematic_tuples=problematic,
            problematic_proportion=problematic / sensitive_tuples if sensitive_tuples else 0.0,
            average_credibility=problematic_cred / problematic if problematic else None,
            tuples_of_breached_classes=int(breached.sum()),
        )
    return AttackResult(NAME, tuples, n_ind, bound, details)


def _credibilities(
    release: Release,
    st: Structure,
    sets: list[tuple[str, np.ndarray]],
    requirement: Requirement,
    local_mode: str,
    truth: np.ndarray | None,
    bound: float | None,
) -> tuple[np.ndarray, np.ndarray, int, tuple[int, int, float]]:
    """Per sensitive set, each class's credibility (steps 3-4 of the module docstring): the
    ``[sets, classes]`` credibilities, the groups with no inference, the ECs decided by the
    exact fallback, and, when the true values are known, (sensitive tuples, problematic tuples,
    their summed credibility)."""
    part = release.partition
    sizes = part.sizes.astype(np.int64)
    sa_pub = np.asarray(release.sa_published)
    n_cls = st.n_c.shape[0]
    # a resolved EC's specialization returns its part of a class to the class's
    # ungeneralized tuples: that merged EC is what must have violated (Definition 3;
    # docs/theory/minimality.md#attack-local)
    merged = st.n_u[st.item_class] + st.item_slots
    small = merged < requirement.k
    ec_ids, ec_index = np.unique(st.item_group, return_inverse=True)
    ec_index = np.asarray(ec_index).reshape(-1)
    creds = np.zeros((len(sets), n_cls))
    no_inf_groups = np.zeros(part.n_groups, dtype=bool)
    fallbacks = 0
    sensitive_tuples = problematic = 0
    problematic_cred = 0.0
    for si, (_, mask) in enumerate(sets):
        s_row = mask[sa_pub]
        s_group = np.bincount(part.group, weights=s_row, minlength=part.n_groups).astype(np.int64)
        u_s = np.bincount(st.ungen_class, weights=s_group[st.ungen_group], minlength=n_cls).astype(
            np.int64
        )
        if local_mode == "whole_class":
            tau = requirement.limit(merged) - u_s[st.item_class]
        else:
            tau = requirement.limit(st.item_slots)
        tau = np.where(small, -1, np.maximum(tau, -1))
        ey = np.zeros(n_cls)
        if ec_ids.size:
            res = expected_batch(ec_index, st.item_slots, tau, s_group[ec_ids])
            ey += np.bincount(st.item_class, weights=res.expected, minlength=n_cls)
            no_inf_groups[ec_ids[res.no_inference]] = True
            fallbacks += res.exact_fallbacks
        if st.amb_class.size:
            amb = st.ambiguous_groups
            comp_s = np.bincount(
                st.comp_of_group[amb], weights=s_group[amb], minlength=part.n_groups
            )
            comp_n = np.bincount(st.comp_of_group[amb], weights=sizes[amb], minlength=part.n_groups)
            ey[st.amb_class] += st.amb_slots * comp_s[st.amb_comp] / comp_n[st.amb_comp]
        creds[si] = (ey + u_s) / st.n_c
        if truth is not None and bound is not None:
            sens_rows = mask[truth]
            hit = sens_rows & (creds[si][st.cls] > bound + EPS)
            sensitive_tuples += int(sens_rows.sum())
            problematic += int(hit.sum())
            problematic_cred += float(creds[si][st.cls][hit].sum())
        elif truth is not None:
            sensitive_tuples += int(mask[truth].sum())
    return creds, no_inf_groups, fallbacks, (sensitive_tuples, problematic, problematic_cred)


def _class_structure(
    release: Release, sizes: np.ndarray, population: pd.DataFrame | None, schema: Schema | None
) -> Structure:
    """The classes of the individuals' original QIs and the published ECs covering them
    (:func:`~kerckhoffs.attacks.minimality.structure.structure`): from the release's own rows,
    or from ``population`` laid on a generalized release read back from files."""
    if release.scheme == Scheme.BUCKETIZATION:
        if population is not None:
            raise ParameterError(
                "minimality: a bucketized release shows the original QIs; no population needed"
            )
        quasi = release.table.qi
        row_cls = Partition.from_columns(quasi).group.astype(np.int64)
        return structure(quasi, sizes, None, None, (row_cls, release.partition.group))
    if population is None:
        lo, hi = published_boxes(release)
        return structure(release.table.qi, sizes, lo, hi)
    if schema is None:
        raise ParameterError(
            "minimality: attacking a generalized release through a population needs the "
            "schema whose hierarchies say what each published cell covers"
        )
    pop = population_table(population, schema, release)
    lo, hi = cells_boxes(release.generalized_cells(), pop.qi_columns)
    return structure(pop.qi, sizes, lo, hi)


def near_minimality_attack(
    release: Release, l_enforced: float, m: float, *, k: int = 1, **options: Any
) -> AttackResult:
    """The near-to-minimality attack (Definition 4; ``docs/theory/minimality.md#near-minimality``):
    the algorithm enforces the
    stronger ``l_enforced`` (the adversary reasons with it) but promises only ``1/m`` (the
    breach test)."""
    return minimality_attack(release, Requirement(l_enforced, k), m=m, **options)
