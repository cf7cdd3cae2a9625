"""The registry that lets ``kerckhoffs attack NAME`` and ``kerckhoffs audit`` name attacks.

Every attack has the same shape, ``(releases, knowledge, **options) -> AttackResult``:
``releases`` is the attacked release first, then any other releases it composes with;
``knowledge`` is the adversary's external knowledge (:class:`Knowledge`, possibly empty).
``reads`` declares which kinds of knowledge the attack takes into account
(:data:`KNOWLEDGE_KINDS`): knowledge that no attack that ran reads was not tested, so the audit
cannot call the release SAFE against it.

``applies(releases, knowledge)`` sorts a release into one of three answers, and the audit's
verdict depends on which:

- ``None``: the attack applies; the audit runs it.
- a one-line reason (a ``str``): the attack **does not apply**. Its adversary does not fit
  this release (another algorithm, scheme or publishing strategy than the one the attack
  reverses; a single release where it needs several), or the knowledge given lacks what its
  adversary is assumed to know (the population's QIs, a coalition, a rule): the audit tests
  the adversary the knowledge describes, and lists the attack as not run, with the reason.
- it raises :class:`~kerckhoffs.errors.CannotRun` (or another
  :class:`~kerckhoffs.errors.KerckhoffsError`): the attack's adversary fits the release and
  the knowledge, but the attack **could not run** on this input (the files lack what it
  reads, the schema is missing, its engine does not handle the release's model, the release
  is too large to decide). That is a gap in the audit: its verdict is INCOMPLETE, never SAFE
  (:func:`applicable` catches the error and returns it).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kerckhoffs.attacks.knowledge import Knowledge
from kerckhoffs.attacks.result import AttackResult
from kerckhoffs.errors import CannotRun, KerckhoffsError, ParameterError
from kerckhoffs.release import Release


class Attack(Protocol):
    """What an attack looks like to the registry."""

    def __call__(
        self, releases: Sequence[Release], knowledge: Knowledge, **options: Any
    ) -> AttackResult: ...


Applies = Callable[[Sequence[Release], Knowledge], str | None]
"""``None`` (the attack applies), a reason it does not apply, or it raises
:class:`~kerckhoffs.errors.CannotRun` (module docstring)."""

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

ATTACK_MODULES = (
    "kerckhoffs.attacks.composition.dp_intersection",
    "kerckhoffs.attacks.composition.intersection",
    "kerckhoffs.attacks.disclosure_set.attack",
    "kerckhoffs.attacks.hilb.order",
    "kerckhoffs.attacks.insider.attack",
    "kerckhoffs.attacks.minimality.attack",
    "kerckhoffs.attacks.negative_association",
    "kerckhoffs.attacks.seed_replay",
)
"""The modules whose import registers an attack (each calls :func:`register_attack`). They
import this module, so it names them as data and imports them by name when an attack is looked
up (:func:`register_all`), the way a plug-in registry reads its entry points."""


def register_all() -> None:
    """Import every module of :data:`ATTACK_MODULES` (each registers its attacks); a lookup
    (:func:`get_attack`, :func:`applicable`) calls it first."""
    for name in ATTACK_MODULES:
        importlib.import_module(name)


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
    register_all()

    try:
        return ATTACKS[name]
    except KeyError:
        known = ", ".join(sorted(ATTACKS)) or "none yet"
        raise ParameterError(f"unknown attack {name!r} (known: {known})") from None


def applicable(
    releases: Sequence[Release], knowledge: Knowledge
) -> list[tuple[AttackInfo, str | KerckhoffsError | None]]:
    """Every registered attack with what its ``applies`` says: ``None`` (it applies), a
    reason it does not apply (``str``), or the :class:`~kerckhoffs.errors.KerckhoffsError` it
    raised (it applies, but could not run on this input:
    :class:`~kerckhoffs.errors.CannotRun`, or a problem of
    the input it found while judging). Any other exception is a bug and propagates."""
    register_all()
    out: list[tuple[AttackInfo, str | KerckhoffsError | None]] = []
    for _, info in sorted(ATTACKS.items()):
        try:
            out.append((info, info.applies(releases, knowledge)))
        except KerckhoffsError as exc:
            out.append((info, exc))
    return out


__all__ = [
    "ATTACKS",
    "ATTACK_MODULES",
    "KNOWLEDGE_KINDS",
    "Applies",
    "Attack",
    "AttackInfo",
    "CannotRun",
    "applicable",
    "get_attack",
    "register_all",
    "register_attack",
]
