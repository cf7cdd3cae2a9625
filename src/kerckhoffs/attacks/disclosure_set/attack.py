"""The disclosure-set attack (paper 002, Zhang, Wang, Jajodia and Brodsky;
``docs/theory/disclosure-sets.md#disclosure-set``, ``docs/theory/disclosure-sets.md#naive`` and
``docs/theory/disclosure-sets.md#naive-algorithm``): what the release of a **naive** publisher
really discloses to an adversary who knows its algorithm.

The naive publisher releases the first candidate generalization whose groups pass the privacy
check. Its candidates are public (the algorithm and the schema's hierarchies), so the
adversary knows every earlier candidate *failed*: of the tables consistent with the release
(``PER``, every arrangement of each group's SA multiset over its rows), only those on which no
earlier candidate passes remain, the **disclosure set** (the observation behind the exclusive
strategy, ``docs/theory/disclosure-sets.md#exclusive``: ``{X in PER(G_i) : naive(X) = i}``). Every
table of it is equally likely (the paper leaves the uniform weighting of instances implicit; we make
it explicit: ``docs/theory/disclosure-sets.md#err-uniform``), so person ``r``'s posterior for value
``v`` is the share of the set in which ``r`` has ``v``. The attack reports, per person, the value of
largest share and that share; a person is breached when the release's CHK fails on their row of the
set (the running example: the naive ``g2`` release leaves only tables in which Ellen and Fen both
have gastritis, share 1).

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

**A release read from files** (the adversary has the release and public knowledge only).
Its rows hold published cells, in published order, so the adversary re-derives the candidates
on the people it knows (the knowledge's population: names and QIs, e.g. a voter list): a
``sequence`` release's bins by QI values from its provenance, a ``lattice`` release's nodes from
the population's QIs and the schema's hierarchies, as the anonymizer built them. It places
the people in the published groups by their cells and lays each group's SA multiset on them
in any order, which gives the same disclosure set
(:mod:`~kerckhoffs.attacks.disclosure_set.candidates`). The tuples are then the population's
rows, the verdict names the breached people by the population's identifier column (``name``
in ``examples/disclosure/people.csv``), and the attack finds what it finds on the release
in the process that made it. Without a population the attack does not apply to a release
read from files (no one can be placed); a population that is not the released one is
refused in one line, and ``audit`` counts the attack as could not run.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs.attacks.disclosure_set.candidates import (
    candidate_of,
    lattice_candidates,
    sequence_candidates,
)
from kerckhoffs.attacks.knowledge import Knowledge
from kerckhoffs.attacks.registry import register_attack
from kerckhoffs.attacks.result import AttackResult, tuple_table
from kerckhoffs.data.schema import Schema
from kerckhoffs.disclosure import (
    DEFAULT_LIMIT,
    Chk,
    GeneralizationSequence,
    Step,
    TooManyInstances,
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
from kerckhoffs.errors import CannotRun, ParameterError
from kerckhoffs.models import LDiversity, parse_model
from kerckhoffs.release import Release, Scheme

ATTACK = "disclosure-set"
OPTIONS = ("chk", "limit", "sequence")

__all__ = ["ATTACK", "disclosure_set_attack", "lattice_candidates", "sequence_candidates"]


def disclosure_set_attack(
    release: Release,
    sequence: GeneralizationSequence | str | Path | None = None,
    chk: Chk | str | None = None,
    *,
    limit: int = DEFAULT_LIMIT,
    population: pd.DataFrame | None = None,
    names: np.ndarray | Sequence[str] | None = None,
    schema: Schema | None = None,
) -> AttackResult:
    """Per person, the largest value share over the naive release's disclosure set (module
    docstring). ``sequence``: the publisher's candidates (the release's partition must be one
    of them; default: the lattice's or the ``sequence`` algorithm's, from the provenance);
    ``chk``: the privacy check (a :class:`~kerckhoffs.disclosure.Chk` or a model string such
    as ``recursive-cl=2,2``; default: the recorded models'). ``population``: the people the
    adversary knows, with their QIs (needed for a release read from files; the tuples are then
    its rows, :mod:`~kerckhoffs.attacks.disclosure_set.candidates`); ``schema``: the hierarchies
    the lattice was built from (needed to place a population in a lattice release read from
    files; a release made in this process has its own); ``names``: one display name per
    person, used in the verdict. Raises a one-line ParameterError when the set is larger than
    ``limit``.

    Returns an :class:`AttackResult` with one tuple per person: ``sa_value`` (the value of
    largest share), ``posterior`` (that share), ``breached`` (CHK fails on the person's row),
    ``group``, ``group_share`` (the value's share in the group, all the naive check saw).
    When someone is breached, its ``finding`` names them (``Ellen and Fen (rows 4 and 5) hold
    gastritis with share 1 ...``).
    """
    if release.scheme != Scheme.GENERALIZATION:
        raise ParameterError(f"{ATTACK}: attacks generalized releases")
    default_chk: Chk | None = None
    # the SA per person is any table consistent with the release (not the original) when the
    # people are a population, and for the sequence algorithm's candidates by QI values
    any_consistent = sequence is None and (
        population is not None or release.provenance.algorithm == "sequence"
    )
    if sequence is None and release.provenance.algorithm == "sequence":
        seq, index, sa, default_chk = sequence_candidates(release, population)
    elif sequence is None:
        if schema is None and release.published_metadata is None:
            schema = release.table.schema  # made in this process: the lattice's own schema
        seq, index, sa, default_chk = lattice_candidates(release, population, schema)
    else:
        seq = (
            sequence
            if isinstance(sequence, GeneralizationSequence)
            else read_sequence(sequence, release.table.n)
        )
        index = candidate_of(seq, release)
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
        if any_consistent:  # the adversary's own table is any consistent one: DS_excl directly
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


def _applies(releases: Sequence[Release], knowledge: Knowledge) -> str | None:
    if len(releases) != 1:
        return "attacks one release at a time"
    rel = releases[0]
    prov = rel.provenance
    naive_release = prov.parameters.get("disclosure", "naive") == "naive"
    if prov.algorithm not in ("lattice", "sequence") or not naive_release:
        return "attacks releases of the naive lattice or sequence publisher (paper 002)"
    from_files = rel.published_metadata is not None
    if from_files and knowledge.population is None:  # the adversary the knowledge describes
        # cannot place anyone: its rows hold published cells, not QIs
        return (
            "needs the people's QIs as knowledge (--knowledge people.csv) to place them "
            "in the candidates"
        )
    if prov.algorithm == "sequence":
        return None
    if float(prov.parameters.get("suppression", 0.0)) != 0.0:
        return "the release suppressed rows (outside paper 002's model)"
    if prov.parameters.get("strategy") == "samarati":
        return "a samarati search does not publish the first passing node"
    if from_files and knowledge.schema is None:  # a naive lattice release all the same
        raise CannotRun(
            f"{ATTACK}: placing the population in a lattice release read from files needs the "
            "schema whose hierarchies the lattice was built from (--schema)"
        )
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
    if knowledge.population is not None and by_people:  # the people the adversary knows
        population = knowledge.population
        names = _person_names(population, knowledge, rel)
    return disclosure_set_attack(
        rel,
        options.get("sequence"),
        options.get("chk"),
        limit=limit,
        population=population,
        names=names,
        schema=knowledge.load_schema(),
    )


def _person_names(
    population: pd.DataFrame, knowledge: Knowledge, release: Release
) -> np.ndarray | None:
    """Each person's display name: the population's identifier column (the identifier of the
    knowledge's schema, else of the release's own schema, else ``id``, else ``name``), None
    when it has none."""
    schema = knowledge.load_schema() or release.table.schema
    ids = [c.name for c in schema.identifiers]
    for col in [*ids, "id", "name"]:
        if col in population.columns:
            return population[col].astype(str).to_numpy(dtype=object)
    return None
