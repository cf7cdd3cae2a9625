"""Attacking a release: the pipelines behind :func:`kerckhoffs.attack` (one attack) and
:func:`kerckhoffs.audit` (every attack that applies, with a verdict), and behind
``kerckhoffs attack`` and ``kerckhoffs audit`` on the command line.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

import pandas as pd

from kerckhoffs.attacks.knowledge import Knowledge
from kerckhoffs.attacks.result import AttackResult
from kerckhoffs.data.schema import Schema
from kerckhoffs.errors import InputError, KerckhoffsError, ParameterError
from kerckhoffs.models.scope import sensitive_values
from kerckhoffs.release import Release

KnowledgeLike: TypeAlias = Knowledge | pd.DataFrame | str | Path | None


def knowledge_of(
    knowledge: KnowledgeLike,
    schema: Schema | str | Path | None,
    others: Iterable[Release | str | Path],
) -> Knowledge:
    if knowledge is None:
        know = Knowledge()
    elif isinstance(knowledge, Knowledge):
        know = knowledge
    elif isinstance(knowledge, pd.DataFrame):
        know = Knowledge(population=knowledge.reset_index(drop=True))
    elif isinstance(knowledge, str | Path):
        know = Knowledge.from_path(knowledge)
    else:
        raise ParameterError(
            "knowledge is a Knowledge, a DataFrame of the population's QIs or a path (TOML or "
            f"CSV), got {type(knowledge).__name__}"
        )
    if schema is not None:
        sch = schema if isinstance(schema, Schema) else Path(schema)
        know = dataclasses.replace(know, schema=sch)
    extra = [r if isinstance(r, Release) else Path(r) for r in others]
    if extra:
        know = dataclasses.replace(know, releases=[*know.releases, *extra])
    return know


def attacked(release: Release | str | Path, know: Knowledge) -> Release:
    if isinstance(release, Release):
        return release
    if not Path(release).exists():
        raise InputError(f"release not found: {release}")
    return Release.from_published(release, know.load_schema())


def attack(
    release: Release | str | Path,
    name: str,
    *,
    knowledge: KnowledgeLike = None,
    schema: Schema | str | Path | None = None,
    others: Iterable[Release | str | Path] = (),
    options: Mapping[str, Any] | None = None,
) -> AttackResult:
    """Run the attack ``name`` (``kerckhoffs audit --list``: ``minimality``, ``hilb-order``,
    ``negative-association``, ``intersection``, ``seed-replay``) on a release and return what
    the adversary learns, tuple by tuple (:class:`~kerckhoffs.attacks.result.AttackResult`:
    ``.verdict()``, ``.safe``, ``.to_pandas()``).

    ``knowledge``: the adversary's knowledge: a DataFrame of the population's QIs, a path
    (a CSV of them, or a TOML knowledge file) or a
    :class:`~kerckhoffs.attacks.knowledge.Knowledge`. ``others``: other releases of
    overlapping populations (for the intersection attack). ``schema``: needed for a release
    read from files whose cells must be looked up in hierarchies. ``options``: the attack's
    own options (e.g. ``{"confidence": 0.9}`` for the intersection attack). An attack that
    does not apply raises :class:`~kerckhoffs.errors.ParameterError` saying why; one that
    applies but cannot run on this input raises :class:`~kerckhoffs.errors.CannotRun` (or
    the error it met) saying what it lacks.
    """
    from kerckhoffs.attacks.knowledge_check import check_knowledge
    from kerckhoffs.attacks.registry import get_attack

    info = get_attack(name)
    know = knowledge_of(knowledge, schema, others)
    rel = attacked(release, know)
    check_knowledge(know, rel)
    reason = info.applies([rel], know)
    if reason is not None:
        raise ParameterError(f"attack {name} does not apply: {reason}")
    return info.run([rel], know, **dict(options or {}))


@dataclass(eq=False)
class AuditReport:
    """The outcome of :func:`audit`: every attack that applied, with its result.

    ``results``: the attacks that ran. ``skipped``: (attack, why it does not apply).
    ``failed``: (attack, why it could not run). ``unused``: (knowledge, why no attack that ran
    takes it into account). ``sensitive``: the sensitive values the release protects, when
    its schema names a subset of the SA's values (empty otherwise).

    A verdict is a claim. ``unsafe``: some attack disclosed a row (UNSAFE holds whatever else
    could not run). ``safe``: some attack ran, none disclosed anything, and nothing was left
    out: every attack that applies ran on every target, and every piece of knowledge given
    was taken into account by one of them. Otherwise the verdict is INCOMPLETE (something was
    left out, and the line says what: an attack that could not run, even when none ran) or
    NO VERDICT (no attack applies).
    """

    results: list[AttackResult]
    skipped: list[tuple[str, str]]
    failed: list[tuple[str, str]]
    unused: list[tuple[str, str]] = field(default_factory=list)
    sensitive: str = ""

    @property
    def unsafe(self) -> bool:
        """Some attack disclosed a row (or found the release unsafe by its metadata)."""
        return any(r.disclosed for r in self.results)

    @property
    def gaps(self) -> list[str]:
        """What the audit left out, one phrase each: attacks that could not run, targets or
        knowledge an attack could not use, knowledge no attack that ran reads."""
        out = [f"{a} could not run: {why}" for a, why in self.failed]
        out += [f"{r.attack}: {gap}" for r in self.results for gap in r.coverage()]
        out += [f"{what} not used ({why})" for what, why in self.unused]
        return out

    @property
    def safe(self) -> bool:
        """Some attack ran, none found the release unsafe, and nothing was left out."""
        return bool(self.results) and not self.unsafe and not self.gaps

    @property
    def verdict(self) -> str:
        """One line a non-expert can read (what ``kerckhoffs audit`` ends with)."""
        scope = (
            f" (the release protects only the sensitive values {self.sensitive})"
            if self.sensitive
            else ""
        )
        if not self.results and self.failed:
            return (
                "INCOMPLETE: no attack ran to the end, so nothing was tested: "
                + "; ".join(self.gaps)
                + scope
            )
        if not self.results:
            left = "".join(f"; {gap}" for gap in self.gaps)
            return (
                f"NO VERDICT: none of the {len(self.skipped)} attacks applies to this release "
                "with this knowledge (each says why it does not; give the knowledge it needs)"
                + left
            )
        if self.unsafe:
            unsafe = [r for r in self.results if r.disclosed]
            worst = max(unsafe, key=lambda r: (r.compromised, r.finding is not None))
            also = [r.attack for r in unsafe if r is not worst]
            tail = f"; also UNSAFE by {', '.join(also)}" if also else ""
            return worst.verdict() + tail + scope
        ran = ", ".join(r.attack for r in self.results)
        relied = "".join(
            f"; {r.attack} relied on: {a}" for r in self.results for a in r.assumptions
        )
        if self.gaps:
            return (
                f"INCOMPLETE: no row disclosed by the {len(self.results)} attack(s) that ran "
                f"({ran}), but not everything was tested: " + "; ".join(self.gaps) + relied + scope
            )
        return (
            f"SAFE: no row disclosed by the {len(self.results)} attack(s) that apply "
            f"({ran})" + relied + scope
        )

    def to_pandas(self) -> pd.DataFrame:
        """One row per attack considered: its verdict and headline figures."""
        rows: list[dict[str, Any]] = [
            {
                "attack": r.attack,
                "ran": True,
                "safe": r.safe,
                "complete": r.complete,
                "compromised": r.compromised,
                "rows": r.n_rows,
                "not_located": r.not_located,
                "max_posterior": r.max_posterior,
                "verdict": r.verdict(),
            }
            for r in self.results
        ]
        rows += [
            {"attack": a, "ran": False, "verdict": f"could not run: {why}"}
            for a, why in self.failed
        ]
        rows += [
            {"attack": a, "ran": False, "verdict": f"not run: {why}"} for a, why in self.skipped
        ]
        rows += [
            {"attack": None, "ran": False, "verdict": f"{what} not used ({why})"}
            for what, why in self.unused
        ]
        return pd.DataFrame(rows)

    def __repr__(self) -> str:
        return f"AuditReport: {self.verdict}"


def audit(
    release: Release | str | Path,
    *,
    knowledge: KnowledgeLike = None,
    schema: Schema | str | Path | None = None,
    others: Iterable[Release | str | Path] = (),
    on_result: Callable[[str, AttackResult | None, str | None], None] | None = None,
) -> AuditReport:
    """Run every attack that applies to a release (judged from its algorithm, scheme and the
    knowledge given) and return an :class:`AuditReport` (``.safe``, ``.verdict``,
    ``.to_pandas()``). Arguments as :func:`attack`; ``on_result(attack, result, error)`` is
    called as each attack finishes (the command line prints from it). An attack that could
    not run (its own :class:`~kerckhoffs.errors.KerckhoffsError`, from judging whether it
    applies or from running: a release too large to decide, files that lack what it reads)
    is reported in ``failed`` and the other attacks still run; the verdict is then INCOMPLETE,
    or UNSAFE when another attack disclosed. Any other exception is a bug and propagates.

    Knowledge that cannot be used on this release (a rule naming a column it does not have,
    a population without its quasi-identifiers) is refused first
    (:func:`~kerckhoffs.attacks.knowledge_check.check_knowledge`); knowledge that is valid
    but that no attack that runs takes into account makes the verdict INCOMPLETE, never SAFE.
    """
    from kerckhoffs.attacks.knowledge_check import check_knowledge, given_knowledge
    from kerckhoffs.attacks.registry import applicable

    know = knowledge_of(knowledge, schema, others)
    rel = attacked(release, know)
    check_knowledge(know, rel)
    results: list[AttackResult] = []
    skipped: list[tuple[str, str]] = []
    failed: list[tuple[str, str]] = []

    def could_not_run(name: str, exc: KerckhoffsError) -> None:
        failed.append((name, str(exc).removeprefix(f"{name}: ")))
        if on_result is not None:
            on_result(name, None, exc.cli_message.removeprefix(f"{name}: "))

    considered = applicable([rel], know)
    for info, reason in considered:
        if isinstance(reason, KerckhoffsError):  # it applies, but this input lacks something
            could_not_run(info.name, reason)
            continue
        if reason is not None:
            skipped.append((info.name, reason))
            continue
        try:
            result = info.run([rel], know)
        except KerckhoffsError as exc:  # one attack failing must not hide the others
            could_not_run(info.name, exc)
            continue
        results.append(result)
        if on_result is not None:
            on_result(info.name, result, None)
    ran = {r.attack for r in results}
    unused = []  # knowledge given that no attack that ran takes into account
    for kind, what in given_knowledge(know).items():
        readers = {info.name for info, _ in considered if kind in info.reads}
        if readers & ran:
            continue
        reasons = [f"{a} does not apply: {r}" for a, r in skipped if a in readers]
        reasons += [f"{a} could not run" for a, _ in failed if a in readers]
        if len(reasons) > 1:  # each attack's own line says why
            reasons = [f"none of the attacks that read it ran: {', '.join(sorted(readers))}"]
        unused.append((what, "; ".join(reasons) or "no attack reads it"))
    return AuditReport(results, skipped, failed, unused, sensitive_values(rel.table))


__all__ = ["AuditReport", "KnowledgeLike", "attack", "attacked", "audit", "knowledge_of"]
