"""What the adversary of the disclosure-set attack re-derives from a naive publisher's release
(paper 002, Zhang, Wang, Jajodia and Brodsky, Definition 1 and section 3): the publisher's
candidate generalizations laid on the people, the released candidate's index, an SA value per
person consistent with the published groups, and the privacy check (CHK) of the recorded models.

**The candidates** are public: the adversary knows the algorithm. For the ``lattice``
algorithm they are the lattice nodes in the order of
:func:`~kerckhoffs.algorithms.lattice.generalization_sequence` (paper 001 Definition 7
information loss, ties lexicographic), which depends on the table's QIs alone (the schema's
hierarchies and the values present), never on its sensitive values. Nodes before the published
one with a group too small for the check to pass are dropped (they rule nothing out). For the
``sequence`` algorithm they are the bins by QI values its provenance records.

**The people.** For a release made in this process they are its rows. For a release read from
files (whose rows hold cells, not QIs) they are the population the adversary knows (the
knowledge's QIs, e.g. a voter list, with the schema): the adversary encodes their QIs as the
anonymizer did, lays every candidate on them, matches the released candidate's groups to the
published groups by their cells (each must hold as many people as published rows, else the
population is not the released one: a one-line ParameterError), and lays each published
group's SA multiset on its people in any order. The disclosure set depends only on those
multisets (Definition 1: it is a subset of the tables that publish the same groups), so any
such order gives the same set; the tuples are then the population's rows, and a release read
from files is attacked exactly as the one in memory.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kerckhoffs.data.schema import Schema
from kerckhoffs.disclosure import Chk, GeneralizationSequence, ValueSequence
from kerckhoffs.errors import ParameterError
from kerckhoffs.release import Release

ATTACK = "disclosure-set"

Candidates = tuple[GeneralizationSequence, int, np.ndarray, Chk]
"""The candidates on the people, the released index, an SA code per person, the CHK."""

__all__ = ["Candidates", "candidate_of", "lattice_candidates", "sequence_candidates"]


def lattice_candidates(
    release: Release, population: pd.DataFrame | None = None, schema: Schema | None = None
) -> Candidates:
    """The candidates an adversary re-runs for a naive ``lattice`` release (module docstring):
    the nodes before the published one that some table could make pass, then the published
    node. On the release's rows (a release made in this process), or on the ``population``'s
    rows with ``schema`` (needed for a release read from files)."""
    from kerckhoffs.algorithms.lattice import Lattice, full_domain_cells, generalization_sequence
    from kerckhoffs.algorithms.lattice.disclosure import (
        min_group_size,
        models_chk,
        passable_before,
    )

    prov = release.provenance
    models = prov.models()
    chk = models_chk(models, release.table, ATTACK)
    if population is None:
        if release.published_metadata is not None:
            raise ParameterError(
                f"{ATTACK}: a lattice release read from files needs the population's QIs as "
                "knowledge (its candidates are lattice nodes over the original QI values)"
            )
        table = release.table
    else:
        from kerckhoffs.attacks.locate import population_table

        if schema is None:
            raise ParameterError(
                f"{ATTACK}: placing the population in a lattice release needs the schema "
                "whose hierarchies the lattice was built from"
            )
        table = population_table(population, schema, release)
    lat = Lattice.of(table)
    levels = prov.parameters.get("levels")
    if not isinstance(levels, dict) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in levels.values()
    ):
        raise ParameterError(f"{ATTACK}: the provenance records no lattice node (levels)")
    node = lat.check_node(levels)
    metric = prov.parameters.get("metric", "loss")  # the lattice algorithm's default
    order = [lat.index(n) for n in generalization_sequence(table, str(metric))]
    pos = order.index(lat.index(node))
    least = min_group_size(models, release.table)  # the models read the release's SA domain
    earlier = passable_before(lat, order, pos, least, first_only=False)
    people = lat.partition(node)
    seq = GeneralizationSequence.from_labels(
        [*(lat.partition(lat.node(i)).group for i in earlier), people.group],
        [*(str(lat.node(i)) for i in earlier), str(node)],
    )
    if population is None:
        if not people.same_as(release.partition):
            raise ParameterError(
                f"{ATTACK}: the release's groups are not those of its recorded node {node}"
            )
        return seq, len(seq) - 1, np.asarray(release.sa_published, dtype=np.int64), chk
    want = full_domain_cells(table, people, node)
    return seq, len(seq) - 1, _laid_sa(release, people.group, want), chk


def sequence_candidates(release: Release, population: pd.DataFrame | None = None) -> Candidates:
    """What the adversary re-derives for a ``sequence`` release (module docstring): the
    candidates by QI values laid on the people (the population's rows, or the release's own
    rows for a release made in this process given none)."""
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
        if candidate_of(seq, release) != index:
            raise ParameterError(f"{ATTACK}: the release is not its recorded candidate")
        return seq, index, np.asarray(release.sa_published, dtype=np.int64), chk
    seq = cands.on(population)
    _, per_group = cands.groups(index, population)
    want = cands.cells(index, per_group, release.table.qi_names)
    return seq, index, _laid_sa(release, seq[index], want), chk


def _laid_sa(release: Release, people: np.ndarray, want: pd.DataFrame) -> np.ndarray:
    """An SA code per person: each published group's SA multiset laid, in file order, on the
    people of the candidate group whose cells (``want``, one row per group of ``people``) it
    publishes. Refused in one line when the population is not the released one."""
    part = release.partition
    # the cells every published group shows (for a release made in this process too: its
    # table holds the original QIs, its cells are what it publishes)
    published = release.generalized_cells()[list(want.columns)].astype(str)
    key_pub = pd.MultiIndex.from_frame(published)
    if not key_pub.is_unique:
        raise ParameterError(
            f"{ATTACK}: two published groups show the same cells "
            f"({', '.join(published.iloc[int(np.argmax(key_pub.duplicated()))])}), so the "
            "population cannot be placed in them"
        )
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
    if bad.size:
        g = int(bad[0])
        raise ParameterError(
            f"{ATTACK}: the population does not match the release: group "
            f"{', '.join(want.iloc[g])} holds {int(rows_pub[g])} published rows and "
            f"{int(rows_pop[g])} people of the population"
        )
    if len(to_file) != part.n_groups:
        raise ParameterError(
            f"{ATTACK}: the population does not match the release: some published groups "
            "hold none of its people"
        )
    # lay each published group's SA multiset on its people, in any order (module docstring)
    from_file = np.empty(part.n_groups, dtype=np.int64)
    from_file[to_file] = np.arange(len(to_file))
    file_rows = np.argsort(from_file[part.group], kind="stable")
    sa = np.empty(people.shape[0], dtype=np.int64)
    sa[np.argsort(people, kind="stable")] = np.asarray(release.sa_published)[file_rows]
    return sa


def candidate_of(seq: GeneralizationSequence, release: Release) -> int:
    """The candidate whose partition is the release's (same groups, any numbering)."""
    pub = release.partition.group
    for i in range(len(seq)):
        a = seq[i]
        pairs = np.unique(np.stack([a, pub]), axis=1)
        if pairs.shape[1] == seq.groups(i) == release.partition.n_groups:
            return i
    raise ParameterError(f"{ATTACK}: the release's partition is none of the candidates")
