"""The seed-replay attack: a release whose metadata reveals the seed of a randomized algorithm.

Randomized algorithms (stratified pick-up in the ++ variants, Anatomy's pick, MASK's
perturbation) are algorithm-safe only because the adversary cannot tell which random choices
were made (paper 000, sections 6-7: Theorem 7.2 averages over the pick-up's uniformly random
choices). An adversary who knows the algorithm, which is our premise, and its seed re-runs it
with that seed on every candidate table and keeps only the candidates that reproduce the
release: the random choices are then fixed, and the algorithm is exactly as leaky as a
deterministic one (``kerckhoffs audit-algorithm ... `` shows it on small tables with the seed
known). kerckhoffs 0.1 wrote the seed into ``release.json`` (``"seed": 0`` by default); releases
made since never do (:mod:`kerckhoffs.randomness`).

The attack reads only the published metadata (:attr:`Release.published_metadata`): the seed
under ``provenance.seed`` or any provenance parameter named like one
(:data:`kerckhoffs.release.SEED_KEYS`). A seed of a randomized algorithm, or of an algorithm
kerckhoffs does not know (it cannot rule out randomness), makes the release UNSAFE with the
reason; a seed of a deterministic algorithm reveals nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from kerckhoffs.attacks.knowledge import Knowledge
from kerckhoffs.attacks.registry import register_attack
from kerckhoffs.attacks.result import AttackResult, tuple_table
from kerckhoffs.errors import ParameterError
from kerckhoffs.release import SEED_KEYS, Release

ATTACK = "seed-replay"


def published_seed(metadata: dict[str, Any]) -> tuple[str, Any] | None:
    """Where the metadata reveals a seed and its value (None when it does not)."""
    prov = metadata.get("provenance")
    if not isinstance(prov, dict):
        return None
    if prov.get("seed") is not None:
        return "provenance.seed", prov["seed"]
    params = prov.get("parameters")
    if isinstance(params, dict):
        for key in sorted(params):
            if key.lower() in SEED_KEYS and params[key] is not None:
                return f"provenance.parameters.{key}", params[key]
    return None


def seed_replay_attack(release: Release) -> AttackResult:
    """UNSAFE when ``release``'s published metadata reveals the seed of a randomized (or
    unknown) algorithm; SAFE otherwise (module docstring). No row-level posterior: the
    finding concerns the whole release."""
    from kerckhoffs import algorithms  # noqa: F401  (importing registers every algorithm)
    from kerckhoffs.algorithms.registry import REGISTRY

    empty = np.empty(0, dtype=np.int64)
    tuples = tuple_table(empty, [], np.empty(0), np.empty(0, dtype=bool))
    meta = release.published_metadata or {}
    found = published_seed(meta)
    prov = meta.get("provenance")
    algorithm = (
        str(prov.get("algorithm"))
        if isinstance(prov, dict) and prov.get("algorithm")
        else (release.provenance.algorithm)
    )
    details: dict[str, Any] = {"algorithm": algorithm}
    if found is None:
        details["reason"] = "the metadata publishes no seed"
        return AttackResult(ATTACK, tuples, release.table.n, None, details)
    where, seed = found
    details |= {"seed_at": where, "seed": seed}
    info = REGISTRY.get(algorithm)
    if info is not None and not info.randomized:
        details["reason"] = (
            f"the metadata publishes a seed ({where} = {seed!r}), but {algorithm} is "
            "deterministic: it draws nothing from it"
        )
        return AttackResult(ATTACK, tuples, release.table.n, None, details)
    kind = "a randomized algorithm" if info is not None else "an algorithm kerckhoffs does not know"
    finding = (
        f"release.json publishes the seed ({where} = {seed!r}) of {algorithm}, {kind}: an "
        "adversary who knows the algorithm re-runs it with that seed and undoes its random "
        "choices, so the release is as leaky as a deterministic algorithm's"
    )
    return AttackResult(ATTACK, tuples, release.table.n, None, details, finding=finding)


def _applies(releases: Sequence[Release], knowledge: Knowledge) -> str | None:
    if len(releases) != 1:
        return "attacks one release at a time"
    meta = releases[0].published_metadata
    if meta is None:
        return "reads the published metadata; this release was not read from files"
    if published_seed(meta) is None:
        return "the metadata publishes no seed"
    return None


@register_attack(
    ATTACK,
    summary="a published seed of a randomized algorithm lets the adversary undo its random choices",
    applies=_applies,
)
def _run(releases: Sequence[Release], knowledge: Knowledge, **options: Any) -> AttackResult:
    """Registry adapter: ``releases[0]`` attacked with :func:`seed_replay_attack` (no
    options)."""
    if not releases:
        raise ParameterError(f"{ATTACK}: no release to attack")
    if options:
        raise ParameterError(f"{ATTACK}: unknown option {sorted(options)[0]!r} (it has none)")
    return seed_replay_attack(releases[0])


__all__ = ["published_seed", "seed_replay_attack"]
