"""Who made a release and how (:class:`Provenance`), never with the seed of a randomized
algorithm (:data:`SEED_KEYS`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kerckhoffs.models.base import PrivacyModel, model_classes
from kerckhoffs.version import __version__

SEED_KEYS = frozenset({"seed", "random_state", "rng", "random_seed"})
"""Names under which metadata could reveal a seed (refused on write, reported by audit)."""


def _version() -> str:
    return __version__


@dataclass(frozen=True)
class Provenance:
    """Who made a release and how: algorithm, its parameters, library version.

    Never the seed of a randomized algorithm: an adversary who knows the algorithm and its
    seed re-runs it on each candidate table and undoes the random choices
    (``docs/theory/choices.md#secret-randomness``; :mod:`kerckhoffs.randomness`).
    """

    algorithm: str
    parameters: dict[str, Any] = field(default_factory=dict)
    version: str = field(default_factory=_version)

    def __post_init__(self) -> None:
        seeds = sorted(k for k in self.parameters if k.lower() in SEED_KEYS)
        if seeds:
            raise ValueError(f"provenance must not carry a seed (parameter {seeds[0]!r})")

    def models(self) -> list[PrivacyModel]:
        """The privacy models the algorithm recorded as data: ``parameters["models"]``, a
        list of :meth:`PrivacyModel.to_dict` records (a one-line ParameterError if one is
        malformed). Releases written before models were recorded as data (release.json
        format_version 2) held one ``{model name: display string}`` parameter per model, e.g.
        ``"k-anonymity": "k=5"``; those are read by :meth:`PrivacyModel.from_legacy`. Empty
        when the algorithm recorded no models (most record their own numeric parameters)."""
        recorded = self.parameters.get("models")
        if isinstance(recorded, list):
            return [PrivacyModel.from_dict(m) for m in recorded]
        known = model_classes()
        return [
            PrivacyModel.from_legacy(name, text)
            for name, text in self.parameters.items()
            if name in known and isinstance(text, str)
        ]

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for the JSON metadata."""
        return {
            "algorithm": self.algorithm,
            "parameters": self.parameters,
            "version": self.version,
        }


def published_provenance(meta: dict[str, Any]) -> Provenance:
    """The provenance ``release.json`` records, any seed-like parameter dropped."""
    prov = meta.get("provenance") or {}
    params = {k: v for k, v in (prov.get("parameters") or {}).items() if k.lower() not in SEED_KEYS}
    return Provenance(prov.get("algorithm", "unknown"), params, prov.get("version", "unknown"))


__all__ = ["SEED_KEYS", "Provenance", "published_provenance"]
