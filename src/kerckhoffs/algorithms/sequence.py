"""The registered ``sequence`` algorithm: the publisher of paper 002 over an explicit, public
sequence of candidate generalizations (Zhang, Wang, Jajodia and Brodsky, "Exclusive Strategy
for Generalization Algorithms in Micro-Data Disclosure", DBSec 2008;
``docs/theory/disclosure-sets.md#naive``, ``docs/theory/disclosure-sets.md#inclusive`` and
``docs/theory/disclosure-sets.md#exclusive``).

The candidates are given by QI values (a TOML file, option ``sequence``; format in
:mod:`kerckhoffs.disclosure.sequence_file`), best first, e.g. paper 002's Table 2 as age
ranges (``examples/disclosure/sequence_by_age.toml``). Unlike the ``lattice`` algorithm, the
candidates need not be nested: the running example's ``g2`` splits a group of ``g1``, which no
single hierarchy does, so this is the algorithm that publishes the running example.

Strategies (option ``disclosure``):

- ``naive`` (default, ``docs/theory/disclosure-sets.md#naive``; the paper's "traditional"
  publisher): release the first candidate whose groups pass the privacy check (the closed-form CHK
  on ``PER``). Unsafe: an adversary who knows the candidates learns that every earlier one failed;
  the ``disclosure-set`` attack computes what that reveals (running example: Ellen and Fen hold
  gastritis in every table that remains possible).
- ``exclusive`` (``docs/theory/disclosure-sets.md#exclusive``): stop at the naive choice; release it
  only if CHK holds on its disclosure set, else nothing.
- ``inclusive`` (``docs/theory/disclosure-sets.md#inclusive``): release the first candidate whose
  recursive disclosure set passes CHK, else nothing.

When no candidate before the naive choice could pass on any table (none at all, or each has
a group too small for the models), both safe strategies release the naive choice without
enumerating a table: its disclosure set is every consistent table, on which CHK is the naive
check itself (proof in :func:`_strategy`). That decides real tables; otherwise the disclosure
set is enumerated, refused in one line past ``limit``.

When a safe strategy releases nothing it raises :class:`~kerckhoffs.errors.NothingReleased`
(exit 1, nothing written); when no candidate passes even the naive check the models are
infeasible for these candidates (:class:`~kerckhoffs.errors.ParameterError`, as ``lattice``
does). The models are the share-rule CHKs (:func:`kerckhoffs.disclosure.chk_from_model`):
recursive (c,l)-diversity, l-diversity, distinct l-diversity, all of which must hold.

**Published.** Each group publishes its candidate's bins as cells (``[30-44]``, ``{F,M}``,
``*`` for a QI the candidate does not split). The provenance records the strategy, the
released candidate's index and name, and the candidate definitions as data (the bins: public
QI ranges, never row ids or counts), so the attack can re-apply them to a population.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from kerckhoffs.algorithms.lattice.disclosure import DISCLOSURES, min_group_size, models_chk
from kerckhoffs.algorithms.registry import refuse_others, register
from kerckhoffs.data.table import Table
from kerckhoffs.disclosure import (
    DEFAULT_LIMIT,
    GeneralizationSequence,
    TooManyInstances,
    ValueSequence,
    chk_generalization,
    exclusive,
    inclusive,
    read_value_sequence,
    signature,
)
from kerckhoffs.errors import NothingReleased, ParameterError
from kerckhoffs.models.base import PrivacyModel
from kerckhoffs.models.l_diversity import DistinctLDiversity, LDiversity, RecursiveCLDiversity
from kerckhoffs.randomness import Seed
from kerckhoffs.release import Partition, Provenance, Release, Scheme

NAME = "sequence"
CHK_MODELS = (RecursiveCLDiversity, LDiversity, DistinctLDiversity)
"""The models with a per-person share rule (the CHK of paper 002)."""

_OPTIONS = {
    "sequence": "the candidate generalizations by QI values, best first (TOML file, e.g. "
    "examples/disclosure/sequence_by_age.toml); required",
    "disclosure": "naive (default: release the first candidate that passes) | exclusive | "
    "inclusive (paper 002: release only if safe on the disclosure set; else nothing, exit 1)",
    "limit": f"largest set of possible tables enumerated by exclusive / inclusive (default "
    f"{DEFAULT_LIMIT:,})",
}


def candidates(sequence: str | Path | ValueSequence | None) -> ValueSequence:
    """The candidates of option ``sequence`` (a path or a :class:`ValueSequence`)."""
    if sequence is None or (isinstance(sequence, str) and not sequence):
        raise ParameterError(
            f"{NAME}: give the candidate generalizations with -O sequence=FILE (by QI values, "
            "e.g. examples/disclosure/sequence_by_age.toml)"
        )
    if isinstance(sequence, ValueSequence):
        return sequence
    return read_value_sequence(sequence)


@register(
    NAME,
    summary="paper 002's publisher over an explicit sequence of candidate generalizations by "
    "QI values: the first that passes (naive), or the exclusive / inclusive strategy",
    models=tuple(m.__name__ for m in CHK_MODELS),
    options=_OPTIONS,
)
def sequence(
    table: Table,
    models: list[PrivacyModel],
    *,
    seed: Seed = None,
    sequence: str | Path | ValueSequence | None = None,
    disclosure: str = "naive",
    limit: int = DEFAULT_LIMIT,
) -> Release:
    """Publish ``table`` at a candidate of ``sequence`` chosen by the ``disclosure`` strategy
    (module docstring). Deterministic: ``seed`` is not used. Raises
    :class:`~kerckhoffs.errors.NothingReleased` when a safe strategy releases nothing, a
    one-line :class:`~kerckhoffs.errors.ParameterError` for other models, bad options, no
    candidate passing the models, or a disclosure set larger than ``limit``.
    """
    if disclosure not in DISCLOSURES:
        raise ParameterError(
            f"{NAME}: disclosure must be one of {', '.join(DISCLOSURES)}, got {disclosure!r}"
        )
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ParameterError(f"{NAME}: limit must be a whole number >= 1")
    if not models:
        raise ParameterError(f"{NAME}: give a privacy model (recursive-cl, l or distinct-l)")
    refuse_others(models, CHK_MODELS, NAME)
    cands = candidates(sequence)
    unknown = [c for c in cands.columns if c not in table.qi_names]
    if unknown:
        raise ParameterError(
            f"{NAME}: the candidates split {unknown[0]!r}, which is not a quasi-identifier "
            f"(quasi-identifiers: {', '.join(table.qi_names)})"
        )
    seq = cands.on(table)
    passing = [i for i in range(len(seq)) if _passes(table, seq[i], models)]
    if not passing:
        raise ParameterError(
            f"{NAME}: no candidate of {len(seq)} satisfies {', '.join(m.parameter for m in models)}"
        )
    released = passing[0]
    if disclosure != "naive":
        released = _strategy(table, seq, models, passing[0], disclosure, limit)
    labels, per_group = cands.groups(released, table)
    params: dict[str, Any] = {
        "models": [m.to_dict() for m in models],
        "disclosure": disclosure,
        "released_index": released,
        "released": seq.names[released],
        "sequence": cands.to_data(),
    }  # never the checks' counts or which other candidates pass: what the adversary re-derives
    return Release(
        table,
        Partition(labels),  # ids 0..g-1 by bins, the order of the cells
        Scheme.GENERALIZATION,
        table.sa,
        Provenance(NAME, params),
        cells=cands.cells(released, per_group, table.qi_names),
    )


def can_pass(seq: GeneralizationSequence, least: int) -> np.ndarray:
    """Per candidate of ``seq``: does every group hold at least ``least`` rows (bool array)?
    A candidate with a smaller group fails the check on every table and every set of tables
    (:func:`~kerckhoffs.algorithms.lattice.disclosure.min_group_size`)."""
    return np.array([int(np.bincount(a).min()) >= least for a in seq], dtype=bool)


def _strategy(
    table: Table,
    seq: GeneralizationSequence,
    models: list[PrivacyModel],
    choice: int,
    disclosure: str,
    limit: int,
) -> int:
    """The candidate the ``exclusive`` or ``inclusive`` strategy releases, given the naive
    choice ``choice`` (the first candidate whose groups pass the models); raises
    :class:`~kerckhoffs.errors.NothingReleased` when it releases nothing.

    **Candidates that can never pass are dropped.** A candidate with a group of fewer rows
    than the models allow (:func:`~kerckhoffs.algorithms.lattice.disclosure.min_group_size`)
    fails on every table consistent with any signature, and on every set of such tables: it
    rules out no table from a disclosure set and is never released, so the outcome on the
    remaining candidates is the outcome on all of them.

    **Shortcut: nothing before the naive choice can pass.** Then, for every table ``X`` of
    ``PER(choice)``, every earlier candidate fails on ``X``: nothing is ruled out, so
    ``DS_excl = PER(choice)``, and for the inclusive strategy no earlier candidate is ever
    released, so ``DS_incl = PER(choice)`` too. CHK on ``PER`` is the closed form on the
    groups' value counts (each person takes each value with the group's share, paper 002
    section 2), which is the naive check that ``choice`` passed: both strategies release
    ``choice``, decided without enumerating a table. This is the case of the first candidate
    (no earlier one at all), and what decides real tables, whose ``|PER|`` has thousands of
    digits. Otherwise the disclosure sets are enumerated, bounded by ``limit``.
    """
    chk = models_chk(models, table, NAME)
    sa = table.sa.astype(np.int64)
    keep = can_pass(seq, min_group_size(models, table))
    keep[choice] = True
    earlier = [int(j) for j in np.flatnonzero(keep[:choice])]
    if not earlier and chk_generalization(chk, signature(seq, choice, sa, table.n_sa)):
        return choice
    later = [int(j) for j in np.flatnonzero(keep[choice + 1 :]) + choice + 1]
    kept = [*earlier, choice, *(later if disclosure == "inclusive" else [])]
    sub = GeneralizationSequence.from_labels([seq[j] for j in kept], [seq.names[j] for j in kept])
    run = exclusive if disclosure == "exclusive" else inclusive
    try:
        out = run(sub, sa, chk, limit=limit)
    except TooManyInstances as e:
        why = (
            f" (candidate {seq.names[earlier[0]]} comes before the naive choice "
            f"{seq.names[choice]} and could pass, so the exact shortcut does not apply)"
            if earlier
            else ""
        )
        raise ParameterError(f"{NAME}: cannot decide the disclosure set: {e}{why}") from None
    if out.released is not None:
        return kept[out.released]
    why = (
        f"the first passing candidate {seq.names[choice]} fails the models on its disclosure set"
        if disclosure == "exclusive"
        else "no candidate passes the models on its disclosure set"
    )
    top = max(out.max_share) if out.max_share else None
    share = f" (a person's value share reaches {top})" if top is not None else ""
    raise NothingReleased(f"{NAME} releases nothing: {why}{share}")


def _passes(table: Table, labels: np.ndarray, models: list[PrivacyModel]) -> bool:
    """The naive check: every model holds on the candidate's groups (the models' own check, which is
    CHK on ``PER`` in closed form, ``docs/theory/disclosure-sets.md#per``, and also covers a
    sensitive subset)."""
    release = Release(table, Partition(labels), Scheme.GENERALIZATION, table.sa)
    return all(r.satisfied for r in release.check(models))


__all__ = ["CHK_MODELS", "NAME", "can_pass", "candidates", "sequence"]
