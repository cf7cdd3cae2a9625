"""The disclosure-set attack (paper 002, Zhang, Wang, Jajodia and Brodsky; spec
``exclusive.md`` 2.5, 2.6, 3.7): what the release of a **naive** publisher really discloses to
an adversary who knows its algorithm.

The naive publisher releases the first candidate generalization whose groups pass the privacy
check. Its candidates are public (the algorithm and the schema's hierarchies), so the
adversary knows every earlier candidate *failed*: of the tables consistent with the release
(``PER``, every arrangement of each group's SA multiset over its rows), only those on which no
earlier candidate passes remain, the **disclosure set** (spec 2.8 key observation:
``{X in PER(G_i) : naive(X) = i}``). Every table of it is equally likely (spec [AMB-19]), so
person ``r``'s posterior for value ``v`` is the share of the set in which ``r`` has ``v``.
The attack reports, per person, the value of largest share and that share; a person is
breached when the release's CHK fails on their row of the set (the running example: the
naive ``g2`` release leaves only tables in which Ellen and Fen both have gastritis, share 1).

The candidates come from the release's provenance for the ``lattice`` algorithm (its
generalization sequence, :mod:`kerckhoffs.algorithms.lattice.disclosure`) and the ``sequence``
algorithm (its candidates by QI values, :mod:`kerckhoffs.algorithms.sequence`), or are given as
a sequence (a TOML file, :func:`kerckhoffs.disclosure.read_sequence`, or a
:class:`~kerckhoffs.disclosure.GeneralizationSequence`) for any other naive publisher.

**The exact shortcut.** A candidate with a group smaller than the check allows
(:func:`~kerckhoffs.disclosure.least_group_size`) fails on every table, so it rules nothing
out and is dropped. When no earlier candidate remains, nothing is ruled out: the disclosure
set is all of ``PER``, in which each person takes each value with their group's share, so the
shares are the group shares and the check is the naive check the release passed. The attack
then reports them without enumerating a table (``details["shortcut"]``), which is what
decides releases of real tables, whose ``|PER|`` has thousands of digits. Otherwise the set
is enumerated by the disclosure engine (:mod:`kerckhoffs.disclosure`), bounded: a release
with more possible tables than ``limit`` is refused in one line (its size as ``about 10^N``),
and ``audit`` counts the attack as failed, never as passed.

**A release read from files** (spec 3.7: the adversary has the release and public knowledge
only). Its rows are in published order, so candidates given by row positions mean nothing
there; candidates given by QI values do. For a ``sequence`` release the adversary takes the
people it knows (the knowledge's population: names and QIs, e.g. a voter list), places each
person in every candidate from their QI values and the candidate bins recorded in the
provenance, matches the released candidate's groups to the published groups by their cells
(each must hold as many people as published rows, else the population is not the released
one: refused in one line), and lays each published group's SA multiset on its people in any
order: the disclosure set depends only on that multiset (``DS_excl(i, s)``, spec 3.6), so
any such table gives the same set. The tuples are the population's rows; the verdict names
the breached people by the population's identifier column (``name`` in
``examples/disclosure/people.csv``).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs.attacks.knowledge import Knowledge
from kerckhoffs.attacks.registry import register_attack
from kerckhoffs.attacks.result import AttackResult, tuple_table
from kerckhoffs.disclosure import (
    DEFAULT_LIMIT,
    Chk,
    GeneralizationSequence,
    Step,
    TooManyInstances,
    ValueSequence,
    chk_from_model,
    chk_generalization,
    disclosure_set,
    least_group_size,
    magnitude,
    naive,
    per_size,
    read_sequence,
    signature,
)
from kerckhoffs.errors import ParameterError
from kerckhoffs.models import LDiversity, parse_model
from kerckhoffs.release import Release, Scheme

ATTACK = "disclosure-set"
OPTIONS = ("chk", "limit", "sequence")
_FROM_FILES = (
    "a lattice release read from files: its candidates are lattice nodes over the original QI "
    "values, which the files do not hold (attack the release in the process that made it)"
)

__all__ = ["ATTACK", "disclosure_set_attack", "lattice_candidates", "sequence_candidates"]


def lattice_candidates(release: Release) -> tuple[GeneralizationSequence, Chk]:
    """The candidates an adversary re-runs for a naive ``lattice`` release: the nodes before
    the published one that some table could make pass, then the published partition, and the
    CHK of the recorded models (:mod:`kerckhoffs.algorithms.lattice.disclosure`)."""
    from kerckhoffs.algorithms.lattice import Lattice, generalization_sequence
    from kerckhoffs.algorithms.lattice.disclosure import (
        min_group_size,
        models_chk,
        passable_before,
    )

    prov = release.provenance
    table = release.table
    if release.published_metadata is not None:
        raise ParameterError(f"{ATTACK}: {_FROM_FILES}")
    models = prov.models()
    lat = Lattice.of(table)
    levels = prov.parameters.get("levels", {})
    node = lat.check_node({k: int(v) for k, v in levels.items()})
    order = [lat.index(n) for n in generalization_sequence(table, prov.parameters["metric"])]
    pos = order.index(lat.index(node))
    earlier = passable_before(lat, order, pos, min_group_size(models, table), first_only=False)
    labels = [lat.partition(lat.node(i)).group for i in earlier]
    names = [str(lat.node(i)) for i in earlier]
    seq = GeneralizationSequence.from_labels(
        [*labels, release.partition.group], [*names, str(node)]
    )
    return seq, models_chk(models, table, ATTACK)


def sequence_candidates(
    release: Release, population: pd.DataFrame | None = None
) -> tuple[GeneralizationSequence, int, np.ndarray, Chk]:
    """What the adversary re-derives for a ``sequence`` release: the candidates laid on the
    people (the population's rows, or the release's own rows for a release made in this
    process), the released candidate's index, an SA code per person consistent with the
    published groups (module docstring) and the CHK of the recorded models."""
    from kerckhoffs.algorithms.lattice.disclosure import models_chk

    prov = release.provenance
    cands = ValueSequence.from_data(prov.parameters.get("sequence"), f"{ATTACK}: provenance")
    index = prov.parameters.get("released_index")
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(cands):
        raise ParameterError(f"{ATTACK}: the provenance records no released candidate")
    chk = models_chk(prov.models(), release.table, ATTACK)
    if population is None:
        if release.published_metadata is not None:
            raise ParameterError(
                f"{ATTACK}: a release read from files needs the population's QIs as knowledge"
            )
        seq = cands.on(release.table)
        if _find(seq, release) != index:
            raise ParameterError(f"{ATTACK}: the release is not its recorded candidate")
        return seq, index, np.asarray(release.sa_published, dtype=np.int64), chk
    seq = cands.on(population)
    people = seq[index]
    _, per_group = cands.groups(index, population)
    want = cands.cells(index, per_group, release.table.qi_names)
    part = release.partition
    first = part.order()[part.starts()]
    published = pd.DataFrame(
        {c: release.table.decode_qi(j, release.table.qi[first, j]) for j, c in enumerate(want)}
    ).astype(str)
    key_pub = pd.MultiIndex.from_frame(published)
    key_want = pd.MultiIndex.from_frame(want.astype(str))
    to_file = key_pub.get_indexer(key_want)  # candidate group -> published group
    lost = np.flatnonzero(to_file < 0)
    if lost.size:
        cell = ", ".join(want.iloc[int(lost[0])])
        raise ParameterError(
            f"{ATTACK}: the population does not match the release: people fall in group "
            f"{cell}, which the release does not publish"
        )
    rows_pub = part.sizes[to_file]
    rows_pop = np.bincount(people, minlength=len(to_file))
    bad = np.flatnonzero(rows_pub != rows_pop)
    if bad.size or len(to_file) != part.n_groups:
        g = int(bad[0]) if bad.size else 0
        raise ParameterError(
            f"{ATTACK}: the population does not match the release: group "
            f"{', '.join(want.iloc[g])} holds {int(rows_pub[g])} published rows and "
            f"{int(rows_pop[g])} people of the population"
            if bad.size
            else f"{ATTACK}: the population does not match the release: some published "
            "groups hold none of its people"
        )
    # lay each published group's SA multiset on its people, in any order (module docstring)
    from_file = np.empty(part.n_groups, dtype=np.int64)
    from_file[to_file] = np.arange(len(to_file))
    file_rows = np.argsort(from_file[part.group], kind="stable")
    sa = np.empty(people.shape[0], dtype=np.int64)
    sa[np.argsort(people, kind="stable")] = np.asarray(release.sa_published)[file_rows]
    return seq, index, sa, chk


def disclosure_set_attack(
    release: Release,
    sequence: GeneralizationSequence | str | Path | None = None,
    chk: Chk | str | None = None,
    *,
    limit: int = DEFAULT_LIMIT,
    population: pd.DataFrame | None = None,
    names: np.ndarray | Sequence[str] | None = None,
) -> AttackResult:
    """Per person, the largest value share over the naive release's disclosure set (module
    docstring). ``sequence``: the publisher's candidates (the release's partition must be one
    of them; default: the lattice's or the ``sequence`` algorithm's, from the provenance);
    ``chk``: the privacy check (a :class:`~kerckhoffs.disclosure.Chk` or a model string such
    as ``recursive-cl=2,2``; default: the recorded models'). ``population``: the people the
    adversary knows, with their QIs (needed for a ``sequence`` release read from files);
    ``names``: one display name per person, used in the verdict. Raises a one-line
    ParameterError when the set is larger than ``limit``.

    Returns an :class:`AttackResult` with one tuple per person: ``sa_value`` (the value of
    largest share), ``posterior`` (that share), ``breached`` (CHK fails on the person's row),
    ``group``, ``group_share`` (the value's share in the group, all the naive check saw).
    When someone is breached, its ``finding`` names them (``Ellen and Fen (rows 4 and 5) hold
    gastritis with share 1 ...``).
    """
    if release.scheme != Scheme.GENERALIZATION:
        raise ParameterError(f"{ATTACK}: attacks generalized releases")
    default_chk: Chk | None = None
    by_values = sequence is None and release.provenance.algorithm == "sequence"
    if by_values:
        seq, index, sa, default_chk = sequence_candidates(release, population)
    elif sequence is None:
        seq, default_chk = lattice_candidates(release)
        index = len(seq) - 1
        sa = np.asarray(release.sa_published, dtype=np.int64)
    else:
        seq = (
            sequence
            if isinstance(sequence, GeneralizationSequence)
            else read_sequence(sequence, release.table.n)
        )
        index = _find(seq, release)
        sa = np.asarray(release.sa_published, dtype=np.int64)
    if isinstance(chk, str):
        chk = chk_from_model(parse_model(chk))
    if chk is None:
        if default_chk is None:
            models = release.provenance.models()
            if len(models) != 1:
                raise ParameterError(f"{ATTACK}: give the privacy check (option chk)")
            default_chk = chk_from_model(models[0])
        chk = default_chk
    n_sa = release.table.n_sa
    sig = signature(seq, index, sa, n_sa)
    least = least_group_size(chk)
    earlier = [j for j in range(index) if int(np.bincount(seq[j]).min()) >= least]
    if not earlier:  # the exact shortcut: the disclosure set is PER (module docstring)
        if not chk_generalization(chk, sig):
            raise ParameterError(
                f"{ATTACK}: the naive publisher would not release this partition "
                f"({seq.names[index]}): its groups fail {chk.name}"
            )
        size = per_size(seq, index, sig)
        counts = sig[seq[index]]
        extra = {"per_size": _count(size), "disclosure_size": _count(size), "shortcut": True}
        return _result(release, seq, index, sa, chk, counts, counts.sum(axis=1), extra, names)
    size = per_size(seq, index, sig)
    if size > limit:
        raise ParameterError(
            f"{ATTACK}: the release has {magnitude(size)} possible tables, more than the bound "
            f"{magnitude(limit)}, and candidate {seq.names[earlier[0]]} comes before it and "
            "could pass (so they are not all possible): too large to enumerate"
        )
    kept = [*earlier, index]
    prefix = GeneralizationSequence.from_labels(
        [seq[j] for j in kept], [seq.names[j] for j in kept]
    )
    last = len(kept) - 1
    step: Step | None
    try:
        if by_values:  # the adversary's own table is any consistent one: DS_excl directly
            step = disclosure_set(prefix, sa, last, chk, "exclusive", limit=limit)
            released: int | None = last if step.disclosure_size else None
        else:
            out = naive(prefix, sa, chk, limit=limit)
            released, step = out.released, (out.steps[-1] if out.steps else None)
    except TooManyInstances as e:
        raise ParameterError(f"{ATTACK}: {e}") from None
    if released != last or step is None:
        raise ParameterError(
            f"{ATTACK}: the naive publisher would not release this partition "
            f"({seq.names[index]}) from these candidates"
        )
    extra = {
        "per_size": _count(step.per_size),
        "disclosure_size": _count(step.disclosure_size),
        "shortcut": False,
    }
    size_per_row = np.full(seq.n, step.disclosure_size, dtype=np.int64)
    return _result(release, seq, index, sa, chk, step.counts, size_per_row, extra, names)


def _count(n: int) -> int | str:
    """A set size for the result's details: the int while JSON readers keep it exact (below
    2^53), else its order of magnitude (``about 10^39562``)."""
    return int(n) if n < 2**53 else magnitude(n)


def _result(
    release: Release,
    seq: GeneralizationSequence,
    index: int,
    sa: np.ndarray,
    chk: Chk,
    counts: np.ndarray,
    sizes: np.ndarray,
    extra_details: dict[str, Any],
    names: np.ndarray | Sequence[str] | None,
) -> AttackResult:
    """The tuple table (one row per person of ``seq``) and the verdict's figures, from each
    person's value counts over the tables that remain possible (``counts [n, values]``) and
    the number of those tables (``sizes [n]``; with the shortcut, each person's group size
    and group counts, the same shares)."""
    n_sa = release.table.n_sa
    k = counts.shape[1]
    full = np.zeros((counts.shape[0], max(k, n_sa)), dtype=np.int64)
    full[:, :k] = counts
    top = full.argmax(axis=1)
    rows = np.arange(full.shape[0])
    share = full[rows, top] / sizes
    ok = np.asarray(chk.people_pass(full[:, None, :])).reshape(-1)
    group = seq[index]
    g_counts = signature(seq, index, sa, full.shape[1])
    g_sizes = g_counts.sum(axis=1)
    group_share = g_counts[group, top] / g_sizes[group]
    values = release.table.sa_column.decode(top)
    extra: dict[str, Any] = {"group": group, "group_share": group_share}
    if names is not None:
        extra["person"] = np.asarray(names, dtype=object)
    tuples = tuple_table(rows, values, share, ~ok, **extra)
    ls = [m.l for m in release.provenance.models() if isinstance(m, LDiversity)]
    bound = 1.0 / max(ls) if ls else None
    # the largest share, exact: distinct fractions with denominators <= n differ by more
    # than float rounding, so the float argmax is the exact one
    r = int(np.argmax(share)) if share.size else 0
    top_share = Fraction(int(full[r, top[r]]), int(sizes[r])) if share.size else Fraction(0)
    details: dict[str, Any] = {
        "candidates": index + 1,
        "released": seq.names[index],
        **extra_details,
        "check": chk.name,
        "max_share": str(top_share),
    }
    finding = _named_breaches(full, top, sizes, ~ok, values, names)
    return AttackResult(ATTACK, tuples, seq.n, bound, details, finding=finding)


def _named_breaches(
    counts: np.ndarray,
    top: np.ndarray,
    sizes: np.ndarray,
    breached: np.ndarray,
    values: np.ndarray,
    names: np.ndarray | Sequence[str] | None,
    most: int = 6,
) -> str | None:
    """``Ellen and Fen (rows 4 and 5) hold gastritis with share 1 in the tables that remain
    possible``: the breached people (at most ``most`` named), grouped by value and share."""
    hit = np.flatnonzero(breached)
    if not hit.size:
        return None
    parts: dict[tuple[str, Fraction], list[int]] = {}
    for r in hit[:most].tolist():  # a few people named: a loop over them, not over rows
        frac = Fraction(int(counts[r, top[r]]), int(sizes[r]))
        parts.setdefault((str(values[r]), frac), []).append(r)
    said = []
    for (value, frac), people in parts.items():
        who = [str(names[r]) for r in people] if names is not None else []
        pos = [str(r) for r in people]
        rows = f"row{'s' if len(pos) > 1 else ''} {_and(pos)}"
        subject = f"{_and(who)} ({rows})" if who else rows.capitalize()
        verb = "hold" if len(people) > 1 else "holds"
        said.append(f"{subject} {verb} {value} with share {frac}")
    more = f"; {hit.size - most:,} more" if hit.size > most else ""
    return "; ".join(said) + more + " in the tables that remain possible"


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _find(seq: GeneralizationSequence, release: Release) -> int:
    """The candidate whose partition is the release's (same groups, any numbering)."""
    pub = release.partition.group
    for i in range(len(seq)):
        a = seq[i]
        pairs = np.unique(np.stack([a, pub]), axis=1)
        if pairs.shape[1] == seq.groups(i) == release.partition.n_groups:
            return i
    raise ParameterError(f"{ATTACK}: the release's partition is none of the candidates")


def _applies(releases: Sequence[Release], knowledge: Knowledge) -> str | None:
    if len(releases) != 1:
        return "attacks one release at a time"
    rel = releases[0]
    prov = rel.provenance
    naive_release = prov.parameters.get("disclosure", "naive") == "naive"
    if prov.algorithm not in ("lattice", "sequence") or not naive_release:
        return "attacks releases of the naive lattice or sequence publisher (paper 002)"
    if prov.algorithm == "sequence":
        if rel.published_metadata is not None and knowledge.population is None:
            return (
                "needs the people's QIs as knowledge (--knowledge people.csv) to place them "
                "in the candidates"
            )
        return None
    if float(prov.parameters.get("suppression", 0.0)) != 0.0:
        return "the release suppressed rows (outside paper 002's model)"
    if prov.parameters.get("strategy") == "samarati":
        return "a samarati search does not publish the first passing node"
    if rel.published_metadata is not None:
        return _FROM_FILES
    return None


@register_attack(
    ATTACK,
    summary="paper 002: the disclosure set of a naive publisher's release, per person the "
    "largest value share over the tables on which every earlier candidate fails",
    applies=_applies,
    reads=("population",),
)
def _run(releases: Sequence[Release], knowledge: Knowledge, **options: Any) -> AttackResult:
    """Registry adapter: options ``sequence`` (TOML path), ``chk`` (a model string) and
    ``limit``."""
    if not releases:
        raise ParameterError(f"{ATTACK}: no release to attack")
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ParameterError(
            f"{ATTACK}: unknown option {unknown[0]!r} (known: {', '.join(OPTIONS)})"
        )
    limit = options.get("limit", DEFAULT_LIMIT)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ParameterError(f"{ATTACK}: limit must be a whole number >= 1")
    rel = releases[0]
    population = None
    names = None
    by_people = rel.published_metadata is not None or options.get("sequence") is None
    if rel.provenance.algorithm == "sequence" and knowledge.population is not None and by_people:
        population = knowledge.population
        names = _person_names(population, knowledge)
    return disclosure_set_attack(
        rel,
        options.get("sequence"),
        options.get("chk"),
        limit=limit,
        population=population,
        names=names,
    )


def _person_names(population: pd.DataFrame, knowledge: Knowledge) -> np.ndarray | None:
    """Each person's display name: the population's identifier column (the schema's
    identifier, else ``id``, else ``name``), None when it has none."""
    schema = knowledge.load_schema()
    ids = [c.name for c in schema.identifiers] if schema is not None else []
    for col in [*ids, "id", "name"]:
        if col in population.columns:
            return population[col].astype(str).to_numpy(dtype=object)
    return None
