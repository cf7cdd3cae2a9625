"""The registry that lets ``kerckhoffs attack NAME`` and ``kerckhoffs audit`` name attacks.

Every attack has the same shape, ``(releases, knowledge, **options) -> AttackResult``:
``releases`` is the attacked release first, then any other releases it composes with;
``knowledge`` is the adversary's external knowledge (:class:`Knowledge`, possibly empty).
``applies(releases, knowledge)`` returns ``None`` when the attack applies to those releases
(judged from their provenance, scheme and columns) or a one-line reason why it does not;
``kerckhoffs audit`` runs every attack that applies. ``reads`` declares which kinds of
knowledge the attack takes into account (:data:`KNOWLEDGE_KINDS`): knowledge that no attack
that ran reads was not tested, so the audit cannot call the release SAFE against it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kerckhoffs.attacks.knowledge import Knowledge
from kerckhoffs.attacks.result import AttackResult
from kerckhoffs.errors import ParameterError
from kerckhoffs.release import Release


class Attack(Protocol):
    """What an attack looks like to the registry."""

    def __call__(
        self, releases: Sequence[Release], knowledge: Knowledge, **options: Any
    ) -> AttackResult: ...


Applies = Callable[[Sequence[Release], Knowledge], str | None]

KNOWLEDGE_KINDS = ("population", "not_having", "rules", "releases", "coalition")
"""The kinds of adversary knowledge an attack may read (the fields of :class:`Knowledge`)."""


@dataclass(frozen=True)
class AttackInfo:
    """A registered attack."""

    name: str
    run: Attack
    summary: str
    applies: Applies
    reads: frozenset[str] = frozenset()
    """The kinds of knowledge (:data:`KNOWLEDGE_KINDS`) the attack takes into account."""


ATTACKS: dict[str, AttackInfo] = {}


def register_attack(
    name: str, *, summary: str, applies: Applies, reads: Sequence[str] = ()
) -> Callable[[Attack], Attack]:
    """Decorator adding an attack to :data:`ATTACKS` under ``name``; ``reads``: the kinds of
    knowledge it takes into account (:data:`KNOWLEDGE_KINDS`)."""
    unknown = sorted(set(reads) - set(KNOWLEDGE_KINDS))
    if unknown:
        raise ValueError(f"attack {name!r} reads unknown knowledge {unknown[0]!r}")

    def deco(fn: Attack) -> Attack:
        if name in ATTACKS:
            raise ValueError(f"attack {name!r} registered twice")
        ATTACKS[name] = AttackInfo(name, fn, summary, applies, frozenset(reads))
        return fn

    return deco


def get_attack(name: str) -> AttackInfo:
    """The attack called ``name``; an unknown name lists the known ones."""
    from kerckhoffs.attacks import register_all

    register_all()

    try:
        return ATTACKS[name]
    except KeyError:
        known = ", ".join(sorted(ATTACKS)) or "none yet"
        raise ParameterError(f"unknown attack {name!r} (known: {known})") from None


def applicable(
    releases: Sequence[Release], knowledge: Knowledge
) -> list[tuple[AttackInfo, str | None]]:
    """Every registered attack with ``None`` (it applies) or the reason it does not."""
    from kerckhoffs.attacks import register_all

    register_all()
    return [(info, info.applies(releases, knowledge)) for _, info in sorted(ATTACKS.items())]
