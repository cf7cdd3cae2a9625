"""The groups an insider coalition's records fit in more than one way, decided with what the
coalition knows besides its records: that the release passed its recorded m-privacy check
(paper 003, Goryczka, Xiong, Fung, "m-Privacy for Collaborative Data Publishing", section II,
Definition 2.1; the attack is :mod:`kerckhoffs.attacks.insider.attack`).

From the published files a coalition places its own records by QI box and SA value together
(:mod:`kerckhoffs.attacks.insider.placement`); when several maximum placements remain and they
remove different numbers of rows from a group, it cannot tell its rows there from the others'. A
group is then **settled** when every removal that can occur there leaves a remainder that keeps
the promise (no placement, the true one included, discloses a row of it): the removals of the
group's SA values vary independently (a record of value ``v`` only goes to cells of value
``v``), each over its whole range, so every combination is a possible removal.

**The recorded check.** The adversary also has the release's metadata (Kerckhoffs's
principle), and ``release.json`` records the independent checks the release passed before it
was written, among them ``m-privacy=M`` w.r.t. a constraint C: whatever coalition of at most
``M`` providers removes its records from a group, the rest satisfies C or is empty. A coalition
of at most ``M`` providers therefore knows that its true placement leaves every group
satisfying C; a placement that would break C somewhere is not a possible world for it. Its
posterior is a mixture over the placements that remain, so when every one of them keeps the
promise in a group, the mixture does too, and the group is settled (``by_claim``). Only a
coalition whose size is known can rely on this (``[coalition] providers``, ``m``, or the
distinct values of the provider column of its records file, read with the schema that names
it), and only on a check covering it (``M`` at least its size); the records are taken to be all
of the coalition's published records, as the insider of paper 003 knows them.

**A claim the records contradict.** If no maximum placement keeps C in every group at once,
the recorded claim is false for this coalition (a release edited and resealed, or made by a
faulty tool): it is not relied on and the verdict says so, never SAFE. Deciding that is a
search: for each ambiguous group the removals that keep C (at most :data:`~kerckhoffs.attacks.
insider_claim.MAX_PLACEMENTS`), chosen group by group and each partial choice checked by two
maximum flows (:meth:`~kerckhoffs.attacks.insider.placement.Placement.realizable`); groups whose
records cannot move between them (different parts of the placement) are searched apart. When
the search needs more than :data:`MAX_SEARCH` such checks, the claim is not relied on either
(the line says why). A false claim that some placement agrees with cannot be told from the
files: such a verdict says it relied on the recorded check, which ``kerckhoffs check DIR
--model m-privacy=M --providers FILE`` re-verifies with the private providers file.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from kerckhoffs.attacks.insider.placement import Placement
from kerckhoffs.attacks.knowledge import Coalition
from kerckhoffs.data.hierarchy import format_value
from kerckhoffs.data.schema import Schema
from kerckhoffs.errors import KerckhoffsError
from kerckhoffs.models import MPrivacy
from kerckhoffs.models.base import PrivacyModel

__all__ = [
    "MAX_PLACEMENTS",
    "MAX_SEARCH",
    "RecordedCheck",
    "Settlement",
    "coalition_size",
    "recorded_check",
    "settle",
]

MAX_PLACEMENTS = 4096
"""Most removals of one group evaluated (above that the group stays undecided)."""
MAX_SEARCH = 10_000
"""Most partial placements the search for one keeping the recorded check everywhere tries."""

Violates = Callable[[np.ndarray], np.ndarray]
"""Remaining counts (rows x SA values) -> bool per row: the remainder violates the models."""


# -- what the release records ---------------------------------------------------------------
@dataclass(frozen=True)
class RecordedCheck:
    """The release's passed m-privacy checks, as far as they bear on one coalition: ``text``
    names them (``the release's recorded m-privacy=2 check``); ``models`` is the constraint
    the covering ones guarantee after the coalition's removal (empty when none can be relied
    on); ``reason`` says why not."""

    text: str
    models: tuple[PrivacyModel, ...] = ()
    reason: str = ""

    @property
    def usable(self) -> bool:
        return bool(self.models)


def _passed_m_privacy(meta: dict[str, Any] | None) -> list[MPrivacy]:
    """The m-privacy checks ``release.json`` records as passed (with their constraint)."""
    checks = meta.get("checks") if isinstance(meta, dict) else None
    out: list[MPrivacy] = []
    for entry in checks if isinstance(checks, list) else []:
        if not isinstance(entry, dict) or entry.get("satisfied") is not True:
            continue
        spec = entry.get("spec")
        if not isinstance(spec, dict) or spec.get("model") != MPrivacy.name:
            continue
        try:
            model = PrivacyModel.from_dict(spec)
        except (KerckhoffsError, TypeError, ValueError, OverflowError):
            continue  # the reader refuses a malformed spec first; never rely on one
        if isinstance(model, MPrivacy):
            out.append(model)
    return out


def coalition_size(coalition: Coalition, schema: Schema | None) -> int | None:
    """How many providers the coalition is, from everything that says it: its provider ids,
    its ``m``, the distinct values of the provider column (the schema's) of its records file
    (a blank cell makes that column say nothing). The largest of them (relying on a check
    needs the size at most ``M``: the larger, the fewer checks qualify); None when nothing
    says."""
    sizes = []
    if coalition.providers:
        sizes.append(len(set(coalition.providers)))
    if coalition.m is not None:
        sizes.append(int(coalition.m))
    column = schema.provider if schema is not None else None
    records = coalition.records
    if records is not None and column is not None and column.name in records.columns:
        values = records[column.name]
        text = [format_value(v).strip() for v in values.tolist()]
        if len(text) and not values.isna().any() and all(text):
            sizes.append(len(set(text)))
    return max(sizes) if sizes else None


def recorded_check(
    meta: dict[str, Any] | None, coalition: Coalition, schema: Schema | None
) -> RecordedCheck | None:
    """The release's recorded m-privacy checks (``meta``: its ``release.json`` as read; None
    for a release made in this process) as they bear on ``coalition``; None when it records
    none (then there is nothing to rely on and nothing to say)."""
    claims = _passed_m_privacy(meta)
    if not claims:
        return None
    names = " and ".join(f"m-privacy={c.m}" for c in claims)
    text = f"the release's recorded {names} check"
    size = coalition_size(coalition, schema)
    if size is None:
        return RecordedCheck(
            text,
            reason="the coalition's number of providers is not known; give [coalition] "
            "providers = [...] or m = N, or a provider column in its records file and the "
            "schema that names it",
        )
    covering = [c for c in claims if c.m >= size and c.models]
    if not covering:
        top = max(c.m for c in claims)
        return RecordedCheck(
            text,
            reason=f"it covers coalitions of up to {top} provider(s); this one has {size}",
        )
    models: list[PrivacyModel] = []
    for c in covering:
        for x in c.models:
            if all(x.to_dict() != y.to_dict() for y in models):
                models.append(x)
    return RecordedCheck(text, tuple(models))


# -- the groups -----------------------------------------------------------------------------
@dataclass
class Settlement:
    """Per group (bool arrays): ``safe`` the ambiguous groups that keep the promise in every
    placement; ``by_claim`` those settled only by the recorded check (every placement it
    allows keeps the promise). ``status``: ``"none"`` (no check recorded), ``"relied"``,
    ``"false"`` (no placement keeps it everywhere) or ``"not relied"``; ``reason`` the why
    of the last two."""

    safe: np.ndarray
    by_claim: np.ndarray
    status: str = "none"
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)


def _removals(low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Every removal vector of one group (rows) whose values lie in ``low..high``, and the
    values that vary; None above :data:`MAX_PLACEMENTS`."""
    spread = np.flatnonzero(high > low)
    if math.prod(int(high[v] - low[v] + 1) for v in spread) > MAX_PLACEMENTS:
        return None
    axes = [np.arange(low[v], high[v] + 1) for v in spread.tolist()]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, spread.size)
    removed = np.repeat(low[None, :], grid.shape[0], axis=0)
    removed[:, spread] = grid
    return removed, spread


def settle(
    counts: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    placement: Placement,
    promise: Violates,
    check: RecordedCheck | None,
    claim: Violates | None,
) -> Settlement:
    """Decide the ambiguous groups (module docstring). ``counts`` (groups x SA values) are
    the published counts; ``low``/``high`` the fewest and most records any maximum
    placement removes from each cell; ``promise`` and ``claim`` say which remainders break
    the promise and the recorded check's constraint (``claim`` None: no usable check)."""
    n_groups, n_sa = counts.shape
    undecided = (high > low).any(axis=1)
    safe = np.zeros(n_groups, dtype=bool)
    claim_ok = np.zeros(n_groups, dtype=bool)
    domains: dict[int, tuple[list[int], np.ndarray]] = {}
    too_many = 0
    for g in np.flatnonzero(undecided).tolist():  # a loop over the ambiguous groups
        found = _removals(low[g], high[g])
        if found is None:
            too_many += 1
            continue
        removed, spread = found
        rem = counts[g][None, :] - removed
        left = rem.sum(axis=1)
        bad = promise(rem) & (removed.sum(axis=1) > 0) & (left > 0)
        safe[g] = not bad.any()
        if claim is not None:
            keep = ~(claim(rem) & (left > 0))
            cells = (g * n_sa + spread).tolist()
            domains[g] = (cells, removed[keep][:, spread])
            claim_ok[g] = bool(keep.any()) and not (bad & keep).any()
    none = np.zeros(n_groups, dtype=bool)
    if check is None:
        return Settlement(safe, none)
    if claim is None:
        return Settlement(safe, none, "not relied", check.reason)
    # the groups the records fit one way must keep the claim as they are
    fixed = ~undecided
    rem = counts[fixed] - low[fixed]
    broken = claim(rem) & (rem.sum(axis=1) > 0)
    if broken.any():
        why = f"{int(broken.sum()):,} group(s) its records fit one way break {_names(check)}"
        return Settlement(safe, none, "false", _false(check, why))
    empty = [g for g, (_, opts) in domains.items() if not len(opts)]
    if empty:
        why = f"{len(empty):,} group(s) break {_names(check)} whichever way its records fit"
        return Settlement(safe, none, "false", _false(check, why))
    if too_many:
        return Settlement(
            safe,
            none,
            "not relied",
            f"{too_many:,} group(s) have more than {MAX_PLACEMENTS:,} possible removals, too "
            "many to confirm that some placement keeps it",
        )
    found_one, tried = _search(domains, placement)
    details = {"placements_tried": tried}
    if found_one is None:
        return Settlement(
            safe,
            none,
            "not relied",
            f"no placement keeping it in every group found within {MAX_SEARCH:,} steps "
            "(none ruled out either)",
            details,
        )
    if not found_one:
        why = f"no placement of its records keeps {_names(check)} in every group at once"
        return Settlement(safe, none, "false", _false(check, why), details)
    return Settlement(safe, claim_ok & ~safe, "relied", "", details)


def _false(check: RecordedCheck, why: str) -> str:
    return (
        f"the coalition's records contradict {check.text} ({why}): the check is false, "
        "or the records are not all of the coalition's; not relied on"
    )


def _names(check: RecordedCheck) -> str:
    return ", ".join(m.parameter for m in check.models)


# -- is there a placement keeping the claim everywhere? ------------------------------------
def _search(
    domains: dict[int, tuple[list[int], np.ndarray]], placement: Placement
) -> tuple[bool | None, int]:
    """Whether some maximum placement gives every ambiguous group one of its ``domains``
    removals (its cells, and its options: rows of loads on them); None when the search ran
    out of :data:`MAX_SEARCH` flow checks. Also the checks made.

    A constraint search: the parts of the placement (records move only inside one) are
    independent once each cell has a range, so whether a part can hold its cells' ranges is
    two small flows (:meth:`~kerckhoffs.attacks.insider.placement.Placement.realizable`). An option
    of a group is dropped when some part of its cells cannot hold it with the other groups'
    cells in the range of their options; the groups sharing a part with a group that lost an
    option are revised again (arc consistency, AC-3). Then a group with several options left
    is tried option by option (the one the placement found first), each followed by the
    same revision. When every group has one option left and every part holds them, that is
    a placement."""
    current = placement.load
    if all((opts == current[cs][None, :]).all(axis=1).any() for cs, opts in domains.values()):
        return True, 0  # the placement found keeps it: nothing to search
    search = _Search(domains, placement)
    try:
        found = search.solve({g: search.state(g, opts) for g, (_, opts) in domains.items()})
    except _OutOfSteps:
        return None, search.steps
    return found, search.steps


class _OutOfSteps(Exception):
    """The search made :data:`MAX_SEARCH` flow checks."""


class _Search:
    def __init__(
        self, domains: dict[int, tuple[list[int], np.ndarray]], placement: Placement
    ) -> None:
        self.placement = placement
        self.cells = {g: cs for g, (cs, _) in domains.items()}
        self.steps = 0
        self.cache: dict[tuple[int, tuple[int, ...], tuple[int, ...]], bool] = {}
        # per group: its parts, each with the positions of its cells there; per part: groups
        self.parts: dict[int, dict[int, list[int]]] = {}
        self.members: dict[int, list[int]] = {}
        for g, cs in self.cells.items():
            mine: dict[int, list[int]] = {}
            for i, part in enumerate(placement.parts(cs)):
                mine.setdefault(part, []).append(i)
            self.parts[g] = mine
            for part in mine:
                self.members.setdefault(part, []).append(g)
        current = placement.load
        self.first = {g: current[cs] for g, cs in self.cells.items()}

    def state(self, g: int, opts: np.ndarray) -> _Options:
        """Group ``g`` with options ``opts``: them, and per part the range of its cells."""
        ranges = {
            part: (opts[:, at].min(axis=0).tolist(), opts[:, at].max(axis=0).tolist())
            for part, at in self.parts[g].items()
        }
        return _Options(opts, ranges)

    def _holds(self, part: int, dom: dict[int, _Options], g: int, option: np.ndarray) -> bool:
        """Part ``part`` can hold group ``g`` at ``option`` and its other groups within the
        range of their options."""
        cells: list[int] = []
        lo: list[int] = []
        hi: list[int] = []
        for h in self.members[part]:
            at = self.parts[h][part]
            cells += [self.cells[h][i] for i in at]
            if h == g:
                exact = option[at].tolist()
                lo += exact
                hi += exact
            else:
                a, b = dom[h].ranges[part]
                lo += a
                hi += b
        key = (part, tuple(lo), tuple(hi))
        ok = self.cache.get(key)
        if ok is None:
            self.steps += 1
            if self.steps > MAX_SEARCH:
                raise _OutOfSteps
            bounds = dict(zip(cells, lo, strict=True)), dict(zip(cells, hi, strict=True))
            ok = self.placement.realizable(*bounds)
            self.cache[key] = ok
        return ok

    def _revise(self, dom: dict[int, _Options], queue: set[int]) -> bool:
        """Arc consistency from the groups of ``queue``; False when a group has no option."""
        while queue:
            g = min(queue)
            queue.discard(g)
            opts = dom[g].options
            keep = [
                i
                for i in range(len(opts))
                if all(self._holds(p, dom, g, opts[i]) for p in self.parts[g])
            ]
            if not keep:
                return False
            if len(keep) < len(opts):
                dom[g] = self.state(g, opts[keep])
                for p in self.parts[g]:
                    queue.update(h for h in self.members[p] if h != g)
        return True

    def solve(self, dom: dict[int, _Options]) -> bool:
        if not self._revise(dom, set(dom)):
            return False
        return self._branch(dom)

    def _branch(self, dom: dict[int, _Options]) -> bool:
        open_ = [g for g in dom if len(dom[g].options) > 1]
        if not open_:
            return True  # one option each, and every part holds them: a placement
        g = min(open_, key=lambda h: (len(dom[h].options), h))
        opts = dom[g].options
        same = (opts == self.first[g][None, :]).all(axis=1)
        for i in np.argsort(~same, kind="stable").tolist():
            trial = dict(dom)
            trial[g] = self.state(g, opts[i : i + 1])
            queue = {h for p in self.parts[g] for h in self.members[p] if h != g}
            if self._revise(trial, queue) and self._branch(trial):
                return True
        return False


class _Options(NamedTuple):
    """A group's options left (rows of loads on its cells) and, per part, the smallest and
    largest load of each of its cells there."""

    options: np.ndarray
    ranges: dict[int, tuple[list[int], list[int]]]
