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
generalization sequence, :mod:`kerckhoffs.algorithms.lattice.disclosure`), or are given as a
sequence (a TOML file, :func:`kerckhoffs.disclosure.read_sequence`, or a
:class:`~kerckhoffs.disclosure.GeneralizationSequence`) for any other naive publisher. The
set is enumerated by the disclosure engine (:mod:`kerckhoffs.disclosure`), bounded: a release
with more possible tables than ``limit`` is refused in one line (``audit``: not run).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from kerckhoffs.attacks.knowledge import Knowledge
from kerckhoffs.attacks.registry import register_attack
from kerckhoffs.attacks.result import AttackResult, tuple_table
from kerckhoffs.disclosure import (
    DEFAULT_LIMIT,
    Chk,
    GeneralizationSequence,
    TooManyInstances,
    chk_from_model,
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

__all__ = ["ATTACK", "disclosure_set_attack", "lattice_candidates"]


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
    if any(c.hierarchy is None and c.widths is None for c in table.schema.quasi):
        raise ParameterError(
            f"{ATTACK}: needs the release's original QIs with their hierarchies "
            "(a release made in this process)"
        )
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


def disclosure_set_attack(
    release: Release,
    sequence: GeneralizationSequence | str | Path | None = None,
    chk: Chk | str | None = None,
    *,
    limit: int = DEFAULT_LIMIT,
) -> AttackResult:
    """Per person, the largest value share over the naive release's disclosure set (module
    docstring). ``sequence``: the publisher's candidates (the release's partition must be one
    of them; default: the lattice's, from the provenance); ``chk``: the privacy check (a
    :class:`~kerckhoffs.disclosure.Chk` or a model string such as ``recursive-cl=2,2``;
    default: the recorded models'). Raises a one-line ParameterError when the set is larger
    than ``limit``.

    Returns an :class:`AttackResult` with one tuple per person: ``sa_value`` (the value of
    largest share), ``posterior`` (that share), ``breached`` (CHK fails on the person's row),
    ``group``, ``group_share`` (the value's share in the group, all the naive check saw).
    """
    if release.scheme != Scheme.GENERALIZATION:
        raise ParameterError(f"{ATTACK}: attacks generalized releases")
    if sequence is None:
        seq, default_chk = lattice_candidates(release)
        index = len(seq) - 1
    else:
        seq = (
            sequence
            if isinstance(sequence, GeneralizationSequence)
            else read_sequence(sequence, release.table.n)
        )
        index = _find(seq, release)
        default_chk = None
    if isinstance(chk, str):
        chk = chk_from_model(parse_model(chk))
    if chk is None:
        if default_chk is None:
            models = release.provenance.models()
            if len(models) != 1:
                raise ParameterError(f"{ATTACK}: give the privacy check (option chk)")
            default_chk = chk_from_model(models[0])
        chk = default_chk
    sa = np.asarray(release.sa_published, dtype=np.int64)
    n_sa = release.table.n_sa
    size = per_size(seq, index, signature(seq, index, sa, n_sa))
    if size > limit:
        raise ParameterError(
            f"{ATTACK}: the release has {size:,} possible tables, more than the bound "
            f"{limit:,}: too large to enumerate"
        )
    prefix = GeneralizationSequence.from_labels(
        [seq[i] for i in range(index + 1)], seq.names[: index + 1]
    )
    try:
        out = naive(prefix, sa, chk, limit=limit)
    except TooManyInstances as e:
        raise ParameterError(f"{ATTACK}: {e}") from None
    if out.released != index:
        raise ParameterError(
            f"{ATTACK}: the naive publisher would not release this partition "
            f"({seq.names[index]}) from these candidates"
        )
    step = out.steps[-1]
    counts = step.counts
    k = counts.shape[1]
    full = np.zeros((counts.shape[0], max(k, n_sa)), dtype=np.int64)
    full[:, :k] = counts
    top = full.argmax(axis=1)
    rows = np.arange(full.shape[0])
    share = full[rows, top] / step.disclosure_size
    ok = np.asarray(chk.people_pass(full[:, None, :])).reshape(-1)
    group = seq[index]
    g_counts = signature(seq, index, sa, full.shape[1])
    g_sizes = g_counts.sum(axis=1)
    group_share = g_counts[group, top] / g_sizes[group]
    tuples = tuple_table(
        rows,
        release.table.sa_column.decode(top),
        share,
        ~ok,
        group=group,
        group_share=group_share,
    )
    ls = [m.l for m in release.provenance.models() if isinstance(m, LDiversity)]
    bound = 1.0 / max(ls) if ls else None
    details: dict[str, Any] = {
        "candidates": len(prefix),
        "released": seq.names[index],
        "per_size": int(step.per_size),
        "disclosure_size": int(step.disclosure_size),
        "check": chk.name,
        "max_share": str(max(out.max_share, default=Fraction(0))),
    }
    return AttackResult(ATTACK, tuples, release.table.n, bound, details)


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
    if prov.algorithm != "lattice" or prov.parameters.get("disclosure", "naive") != "naive":
        return "attacks releases of the naive lattice publisher (paper 002)"
    if float(prov.parameters.get("suppression", 0.0)) != 0.0:
        return "the release suppressed rows (outside paper 002's model)"
    if prov.parameters.get("strategy") == "samarati":
        return "a samarati search does not publish the first passing node"
    if any(c.hierarchy is None and c.widths is None for c in rel.table.schema.quasi):
        return "needs the release's original QIs with their hierarchies (an in-process release)"
    seq = GeneralizationSequence.from_labels([rel.partition.group])
    size = per_size(seq, 0, signature(seq, 0, rel.sa_published, rel.table.n_sa))
    if size > DEFAULT_LIMIT:
        return (
            f"the release has about 10^{len(str(size)) - 1} possible tables, more than "
            f"{DEFAULT_LIMIT:,}: too large to enumerate"
        )
    return None


@register_attack(
    ATTACK,
    summary="paper 002: the disclosure set of a naive publisher's release, per person the "
    "largest value share over the tables on which every earlier candidate fails",
    applies=_applies,
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
    return disclosure_set_attack(
        releases[0], options.get("sequence"), options.get("chk"), limit=limit
    )
