"""A per-person privacy budget across releases: the ledger (paper 004, Section 1 and its
discussion of composition).

OpenDP accounts for the queries of one analysis. Nobody accounts *across* releases: a
hospital that publishes a DP histogram this year and another next year, or two publishers
whose populations overlap, each stay within their own epsilon while the people in both pay
the sum. Paper 004's point is that differential privacy, unlike k-anonymity, *composes*: by
basic composition (Dwork, McSherry, Nissim and Smith 2006; Dwork and Roth 2014, Theorem
3.16), if release ``j`` is ``(eps_j, delta_j)``-DP, everyone's total loss over the releases
holding them is at most ``(sum eps_j, sum delta_j)``, even for releases chosen after seeing
earlier ones. People who are in only one release pay only that one.

The ledger is the file a publisher keeps to make that sum: one entry per release written
with its ``(epsilon, delta)``, its neighbour notion, its name and path, the SHA-256 integrity
digest of its ``release.json`` (so an entry names exactly the files it accounts for), the
time it was recorded, and who was in it. People are named by the values of the input's
identifier column (schema role ``identifier``) *as given*, not hashed: the ledger is the
publisher's private file, like the input data it was made from, and must never be published
(a hash of a name or an SSN is no protection: the identifier space is small enough to hash
every candidate). It is written readable by its owner only (mode 0600) and keeps the mode
it has when rewritten.

**Measures.** Each entry records the measure its guarantee was proved under
(:class:`~kerckhoffs.dp.loss.Measure`). A person's total is formed from every entry holding
them in three ways, each a composition theorem, and the smallest is charged
(:meth:`kerckhoffs.dp.composition.Spend.totals`):

* *basic*: the sum of every entry's ``(epsilon, delta)`` (Dwork and Roth 2014, Thm. 3.16);
* *zCDP + basic*: the zCDP entries (the Gaussian, AIM, MST) add their rho (Bun and Steinke,
  "Concentrated Differential Privacy", TCC 2016, Lemma 2.3), converted to ``(epsilon,
  delta_B)`` once at the budget's delta ``delta_B`` by OpenDP's conversion
  (:func:`~kerckhoffs.dp.composition.zcdp_epsilon`), plus the other entries by basic
  composition;
* *all zCDP*: the same with the pure entries counted as ``epsilon²/2``-zCDP (Bun and Steinke
  2016, Prop. 1.4).

Ten Gaussian releases at rho 0.0244 cost ``(10 x 1, 10 x 1e-5)`` by the first and
``(3.15, 1e-5)`` by the second. Without a budget delta (``spent()``, a pure budget) only basic
composition applies. Each theorem holds for releases whose privacy parameters were fixed
before they ran; the ledger (like any privacy filter) also lets later releases be chosen
after earlier ones, for which basic composition (Rogers et al., "Privacy Odometers and
Filters", NeurIPS 2016) and zCDP filters (Whitehouse et al., "Fully-Adaptive Composition in
Differential Privacy", ICML 2023) are each proved; taking the smaller of the two per person
is not covered by either proof.

**Several rows.** A release made for ``N`` rows per person (``contributions``,
:mod:`kerckhoffs.dp.contributions`) covers any change of up to ``N`` rows of one person. A
person with ``r`` rows in it pays for ``k = ceil(r / N)`` neighbouring steps (``r <= N``: once,
at the release's loss), under *group privacy* (Dwork and Roth 2014, Theorem 2.2, and its
``(eps, delta)`` form by induction): ``k eps`` and ``delta (1 + e^eps + ... + e^((k-1) eps))``;
a zCDP entry ``k² rho`` (Bun and Steinke 2016, Prop. 1.9).

**Neighbour notions.** A release is DP with respect to a notion of neighbouring tables:
*substitution* (one person's record changes, the number of rows ``n`` is public) or
*add-remove* (one person's record is added or removed, ``n`` is private). The ledger holds
one notion for its budget, stored in the file (substitution unless chosen when the ledger is
created), and every entry records its own. A substitution is a removal followed by an
addition, so by group privacy over those two steps an add-remove release at
``(eps, delta)`` costs ``(2 eps, (1 + e^eps) delta)`` under substitution; for a person with
``k`` rows, ``2k`` steps. The other way does not hold: a substitution release may publish
``n`` exactly, which no add-remove guarantee allows, so a substitution release is refused on
an add-remove ledger. A release DP under any other notion (a change of the sensitive value
only, "label DP") says nothing about what a whole record reveals and is refused on every
ledger.

**Saturation.** Totals are sums of non-negative terms computed so that nothing is ever NaN:
a zero delta costs 0 however many rows a person has, an overflow is ``inf`` (over any
budget), and an epsilon of 710 or more (``e^eps`` beyond a float) is handled in log space.

File format (JSON, one line, written atomically and sealed like ``release.json``)::

    {"format": "kerckhoffs-ledger", "version": 3, "composition": "basic+zcdp",
     "neighbours": "substitution",                    # the budget's notion
     "people": ["P001", "P002", ...],                 # every person ever recorded, as given
     "releases": [{"name": ..., "path": ..., "digest": "sha256:..." | null,
                   "epsilon": 1.0, "delta": 0.0, "neighbours": "add-remove",
                   "measure": "max-divergence" | "zero-concentrated" | "approximate",
                   "rho": 0.0244 | null, "contributions": 1,
                   "recorded": "2025-01-01T12:00:00Z",
                   "members": [0, 1, 1, 5, ...]}],   # indices into people, one per row
     "integrity": "sha256:..."}                       # SHA-256 of the file itself

Version 1 (written before entries recorded their notion) is still read: its budget is under
substitution and each of its entries, whose notion is unknown, is charged as an add-remove
release converted to substitution (the larger of the two possible charges); ``kerckhoffs
budget`` says so. The next release recorded rewrites the file as version 2, the old entries
marked ``"neighbours": "unknown"``. Version 2 (before entries recorded their measure) is read
with each entry pure when its delta is 0, approximate otherwise (basic composition, which
holds whatever the mechanism), one row per person; the next save writes version 3.

The self-digest refuses a ledger edited outside kerckhoffs (an edit that drops an entry would
silently give people budget back); like ``release.json``'s, it guards against accidents, not
against someone able to rewrite the file. A file re-sealed after an edit is still read
strictly: a key given twice (JSON's last-one-wins would hide the first), a member index that
is not an integer, a version that is not one, NaN or a number out of range are refused.
Decisions use a relative tolerance of :data:`TOLERANCE` so that spending ``0.1`` then ``0.2``
of a ``0.3`` budget is allowed (binary floating point would otherwise count it as over):
spending *exactly* the budget is allowed.

The file is found through symbolic links (``os.path.realpath``): the lock, the read and the
atomic rename act on the real file, so a ledger reached through a link and through its real
path is one ledger, and the link stays a link. Only a regular file is read: a FIFO or a
device given as a ledger is refused at once instead of hanging.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs.data import manifest
from kerckhoffs.data.io import atomic_file, remove_stale_temporaries
from kerckhoffs.dp.composition import (
    NOTIONS,
    SUBSTITUTION,
    UNKNOWN,
    BudgetExceeded,
    Spend,
    check_loss,
    entry_spend,
    exceeds,
    notion_text,
    parse_budget,
    parse_notion,
    steps_per_row,
)
from kerckhoffs.dp.ledger_file import (
    Malformed,
    ints,
    lock,
    loss_number,
    no_constant,
    no_duplicate_keys,
    read_regular_file,
    refuse_hard_links,
    sha_on_disk,
    text_field,
)
from kerckhoffs.dp.loss import Measure, PrivacyLoss
from kerckhoffs.dp.mechanisms import check_contributions
from kerckhoffs.errors import InputError, ParameterError

FORMAT = "kerckhoffs-ledger"
VERSION = 3
READABLE_VERSIONS = (1, 2, 3)
COMPOSITION = {1: "basic", 2: "basic", 3: "basic+zcdp"}
"""The ``composition`` each version's file states."""


# -- entries -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Entry:
    """One recorded release: its loss and neighbour notion, where it is, and who was in it
    (``members``: indices into :attr:`Ledger.people`, one per row, so a person with two rows
    appears twice)."""

    name: str
    epsilon: float
    delta: float
    members: np.ndarray
    path: str | None = None
    digest: str | None = None
    recorded: str = ""
    neighbours: str = SUBSTITUTION
    measure: Measure = Measure.PURE
    rho: float | None = None
    contributions: int = 1

    def to_dict(self) -> dict[str, Any]:
        """The entry as stored in the ledger file."""
        return {
            "name": self.name,
            "path": self.path,
            "digest": self.digest,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "neighbours": self.neighbours,
            "measure": self.measure.value,
            "rho": self.rho,
            "contributions": self.contributions,
            "recorded": self.recorded,
            "members": self.members.tolist(),
        }

    def spend(self, n: int, ledger_neighbours: str) -> Spend:
        """What each of the ledger's ``n`` people pays for this entry (:class:`Spend`)."""
        rows = np.bincount(self.members, minlength=n)
        return entry_spend(
            rows,
            self.epsilon,
            self.delta,
            self.neighbours,
            ledger_neighbours,
            measure=self.measure,
            rho=self.rho,
            contributions=self.contributions,
        )


@dataclass(frozen=True)
class BudgetCheck:
    """The answer of :meth:`Ledger.would_exceed`: true (``bool(check)``) when someone would go
    over. ``over`` lists them (index: person) with the totals they would reach."""

    exceeds: bool
    over: pd.DataFrame
    budget: tuple[float, float]

    def __bool__(self) -> bool:
        return self.exceeds

    def message(self, release: str = "the release") -> str:
        """One line saying who would go over and by how much (for refusals)."""
        eps_b, delta_b = self.budget
        worst = self.over.sort_values(["epsilon", "delta"], ascending=False)
        first = worst.index[0]
        row = worst.iloc[0]
        return (
            f"{release} would take {len(worst):,} person(s) over the budget "
            f"epsilon={eps_b:g}, delta={delta_b:g} (e.g. {first}: epsilon {row['epsilon']:.6g}, "
            f"delta {row['delta']:.3g}); nothing recorded"
        )


# -- reading a ledger file -------------------------------------------------------------------------
# -- the ledger --------------------------------------------------------------------------------
@dataclass
class Ledger:
    """Who has paid how much privacy loss, over every release recorded (module docstring).

    ``Ledger(path)`` is a new, empty ledger that :meth:`save` writes to ``path``;
    :meth:`load` reads one back. ``neighbours``: the notion of its budget. Example::

        >>> led = Ledger()
        >>> _ = led.record("2024", 0.5, 0.0, ["ann", "bob"])
        >>> _ = led.record("2025", 0.25, 0.0, ["bob", "cid"])
        >>> led.spent()["epsilon"].to_dict()
        {'ann': 0.5, 'bob': 0.75, 'cid': 0.25}
        >>> bool(led.would_exceed(["bob"], 0.25, 0.0, budget=1.0))
        False
        >>> _ = led.record("2026", 0.25, 0.0, ["cid"], neighbours="add-remove")
        >>> float(led.spent().loc["cid", "epsilon"])  # 0.25 + 2 * 0.25 under substitution
        0.75
    """

    path: Path | None = None
    people: list[str] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)
    neighbours: str = SUBSTITUTION
    legacy: bool = False
    """Read from a version-1 file: its entries' notions were not recorded."""
    _loaded_sha: str | None = field(default=None, repr=False)
    """SHA-256 of the file's bytes as read (or last written): a save refuses a file that
    changed since."""

    def __post_init__(self) -> None:
        self.neighbours = parse_notion(self.neighbours)

    # -- reading ---------------------------------------------------------------------------
    @classmethod
    def load(
        cls, path: str | Path, *, create: bool = False, neighbours: str | None = None
    ) -> Ledger:
        """Read the ledger at ``path`` (symbolic links followed); with ``create`` a missing
        file is a new, empty ledger (written by the first :meth:`record`) under
        ``neighbours`` (default substitution). Given for an existing ledger, ``neighbours``
        must be its notion. A damaged, edited or foreign file, or one that is not a regular
        file, is a one-line :class:`~kerckhoffs.errors.InputError`."""
        path = Path(path)
        raw = read_regular_file(Path(os.path.realpath(path)), path)
        if raw is None:
            if create:
                return cls(path, neighbours=neighbours or SUBSTITUTION)
            raise InputError(f"ledger {path}: no such file")
        led = cls._parse(raw, path)
        if neighbours is not None and parse_notion(neighbours) != led.neighbours:
            raise ParameterError(
                f"ledger {path} keeps its budget under {led.neighbours} neighbours, not "
                f"{parse_notion(neighbours)} (a ledger's notion is chosen when it is created)"
            )
        return led

    @classmethod
    def _parse(cls, raw: bytes, path: Path) -> Ledger:
        try:
            doc = json.loads(
                raw.decode("utf-8"),
                object_pairs_hook=no_duplicate_keys,
                parse_constant=no_constant,
            )
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise InputError(f"ledger {path}: not valid JSON (damaged or not a ledger)") from None
        except RecursionError:
            raise InputError(f"ledger {path}: nested too deeply to be a ledger") from None
        except Malformed as exc:
            raise InputError(f"ledger {path}: {exc}; refusing it") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise InputError(f"ledger {path}: not a kerckhoffs ledger (no format {FORMAT!r})")
        version = doc.get("version")
        if type(version) is not int or version not in READABLE_VERSIONS:
            raise InputError(
                f"ledger {path}: format version {version!r} is not supported "
                f"(this kerckhoffs reads versions {', '.join(map(str, READABLE_VERSIONS))})"
            )
        digest = doc.get("integrity")
        if not isinstance(digest, str) or raw.count(digest.encode()) != 1:
            raise InputError(f"ledger {path}: the integrity record is missing; refusing it")
        blank = raw.replace(digest.encode(), manifest.PLACEHOLDER.encode(), 1)
        if f"sha256:{hashlib.sha256(blank).hexdigest()}" != digest:
            raise InputError(
                f"ledger {path}: changed outside kerckhoffs (its SHA-256 does not match the one "
                "it records); refusing it"
            )
        try:
            led = cls._read_doc(doc, version, path)
        except Malformed as exc:
            raise InputError(f"ledger {path}: {exc}; refusing it") from None
        led._loaded_sha = hashlib.sha256(raw).hexdigest()
        return led

    @classmethod
    def _read_doc(cls, doc: dict[str, Any], version: int, path: Path) -> Ledger:
        if doc.get("composition") != COMPOSITION[version]:
            raise Malformed(f"its composition is not {COMPOSITION[version]!r}")
        if version == 1:
            notion = SUBSTITUTION
        else:
            notion = notion_text(text_field(doc.get("neighbours"), "'neighbours'"))
            if notion not in NOTIONS:
                raise Malformed(f"its budget's neighbour notion {notion!r} is not one a ledger has")
        people = doc.get("people")
        if not isinstance(people, list) or not set(map(type, people)) <= {str}:
            raise Malformed("'people' must be a list of texts")
        if len(set(people)) != len(people):
            raise Malformed("a person is listed twice")
        releases = doc.get("releases")
        if not isinstance(releases, list):
            raise Malformed("'releases' must be a list")
        entries = []
        for i, e in enumerate(releases):  # a loop over releases, not rows
            where = f"release entry {i + 1}"
            if not isinstance(e, dict):
                raise Malformed(f"{where} is not an object")
            members = ints(e.get("members"), f"{where}: members")
            if members.size and (members.min() < 0 or members.max() >= len(people)):
                raise Malformed(f"{where}: a member index is not a person of the ledger")
            eps = loss_number(e.get("epsilon"), f"{where}: epsilon")
            delta = loss_number(e.get("delta"), f"{where}: delta")
            try:
                eps, delta = check_loss(eps, delta)
            except ParameterError as exc:
                raise Malformed(f"{where}: {exc}") from None
            if version == 1:
                entry_notion = UNKNOWN
            else:
                entry_notion = notion_text(text_field(e.get("neighbours"), f"{where}: neighbours"))
                if entry_notion not in (*NOTIONS, UNKNOWN):
                    raise Malformed(f"{where}: neighbours {entry_notion!r} is not accounted for")
                try:
                    steps_per_row(entry_notion, notion)
                except ParameterError:
                    raise Malformed(
                        f"{where} is under {entry_notion} neighbours, which a ledger under "
                        f"{notion} cannot hold"
                    ) from None
            measure, rho, rows = _accounting(e, delta, version, where)
            entries.append(
                Entry(
                    name=str(text_field(e.get("name"), f"{where}: name")),
                    epsilon=eps,
                    delta=delta,
                    members=members,
                    path=text_field(e.get("path"), f"{where}: path", optional=True),
                    digest=text_field(e.get("digest"), f"{where}: digest", optional=True),
                    recorded=str(text_field(e.get("recorded", ""), f"{where}: recorded")),
                    neighbours=entry_notion,
                    measure=measure,
                    rho=rho,
                    contributions=rows,
                )
            )
        return cls(path, list(people), entries, notion, legacy=version == 1)

    # -- accounting ------------------------------------------------------------------------
    def _indices(self, people: Iterable[Any], *, add: bool) -> np.ndarray:
        ids = _as_ids(people)
        known = pd.Index(self.people)
        idx = known.get_indexer(ids) if len(known) else np.full(len(ids), -1, dtype=np.int64)
        new = idx < 0
        if new.any() and add:
            fresh = pd.unique(ids[new])
            start = len(self.people)
            self.people.extend(fresh.tolist())
            idx[new] = start + pd.Index(fresh).get_indexer(ids[new])
        return np.asarray(idx, dtype=np.int64)

    def _spend(self) -> tuple[Spend, np.ndarray]:
        n = len(self.people)
        spend, releases = Spend.zeros(n), np.zeros(n, dtype=np.int64)
        for e in self.entries:  # a loop over releases, not rows
            spend = spend + e.spend(n, self.neighbours)
            releases += np.bincount(e.members, minlength=n) > 0
        return spend, releases

    def spend_of(self, people: np.ndarray) -> Spend:
        """What each of ``people`` (distinct ids) has spent so far, by composition rule (0 for
        someone the ledger does not know)."""
        ids = np.asarray(people, dtype=object)
        if not self.people or not len(ids):
            return Spend.zeros(len(ids))
        spend, _ = self._spend()
        return spend.take(np.asarray(pd.Index(self.people).get_indexer(ids), dtype=np.int64))

    def totals_of(
        self, people: np.ndarray, delta: float | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The totals ``(epsilon, delta)`` spent so far by each of ``people`` (distinct ids;
        0 for someone the ledger does not know), zCDP entries converted at ``delta`` (module
        docstring; None: basic composition only)."""
        return self.spend_of(people).totals(delta)

    def spent(self, delta: float | None = None) -> pd.DataFrame:
        """Each person's total loss under the ledger's notion: a DataFrame indexed by
        ``person`` with columns ``epsilon``, ``delta`` (the smallest valid total, zCDP entries
        converted at ``delta``; basic composition when it is None; ``inf`` when beyond a
        float), ``rho`` (the zCDP entries' rho, group privacy included) and ``releases`` (how
        many releases hold them)."""
        spend, releases = self._spend()
        eps, dlt = spend.totals(delta)
        return pd.DataFrame(
            {"epsilon": eps, "delta": dlt, "rho": spend.rho, "releases": releases},
            index=pd.Index(self.people, name="person", dtype=object),
        )

    def would_exceed(
        self,
        people: Iterable[Any],
        epsilon: float,
        delta: float,
        budget: float | str | tuple[float, float],
        *,
        neighbours: str = SUBSTITUTION,
        measure: Measure | str = Measure.PURE,
        rho: float | None = None,
        contributions: int = 1,
    ) -> BudgetCheck:
        """Whether a release with ``(epsilon, delta)`` under ``neighbours`` (``measure``,
        ``rho`` and ``contributions`` as for :meth:`record`) over ``people`` (one id per row)
        would take anyone's total over ``budget`` (``epsilon`` or ``(epsilon, delta)``; zCDP
        converted at its delta; module docstring for the tolerance). Reaching the budget
        exactly is allowed."""
        eps, d = check_loss(epsilon, delta)
        b_eps, b_delta = parse_budget(budget)
        ids = _as_ids(people)
        codes, uniq = pd.factorize(ids)
        k = np.bincount(codes, minlength=len(uniq))
        uniq = np.asarray(uniq, dtype=object)
        m, r, n = _loss_fields(measure, rho, contributions)
        added = entry_spend(
            k, eps, d, parse_notion(neighbours), self.neighbours, measure=m, rho=r, contributions=n
        )
        after_eps, after_delta = (self.spend_of(uniq) + added).totals(b_delta)
        over = exceeds(after_eps, b_eps) | exceeds(after_delta, b_delta)
        table = pd.DataFrame(
            {"epsilon": after_eps[over], "delta": after_delta[over]},
            index=pd.Index(uniq[over], name="person", dtype=object),
        )
        return BudgetCheck(bool(over.any()), table, (b_eps, b_delta))

    def record(
        self,
        release_name: str,
        epsilon: float,
        delta: float,
        people: Iterable[Any],
        *,
        neighbours: str = SUBSTITUTION,
        measure: Measure | str = Measure.PURE,
        rho: float | None = None,
        contributions: int = 1,
        path: str | Path | None = None,
        digest: str | None = None,
        budget: float | str | tuple[float, float] | None = None,
        allow_empty: bool = False,
    ) -> Entry:
        """Add a release over ``people`` (one id per row) with loss ``(epsilon, delta)``
        under ``neighbours`` (``substitution`` or ``add-remove``; module docstring for how
        it is charged on this ledger, and what is refused). ``measure``: what the guarantee was
        proved under (a zCDP release gives its ``rho``); ``contributions``: the rows per person
        its map was computed for (:meth:`record_loss` takes all of it from a
        :class:`~kerckhoffs.dp.loss.PrivacyLoss`).

        With ``budget`` the release is refused (:class:`BudgetExceeded`, nothing changed) if
        it would take anyone over. A ledger with a :attr:`path` is saved atomically at once,
        so the file never lags behind what was published. ``allow_empty``: record a release
        charging nobody (everyone in it was left out by an individual filter) instead of
        refusing it as a mistake.
        """
        eps, d = check_loss(epsilon, delta)
        notion = parse_notion(neighbours)
        steps_per_row(notion, self.neighbours)
        m, r, n = _loss_fields(measure, rho, contributions)
        if not str(release_name).strip():
            raise ParameterError("release_name: give the release a name")
        if budget is not None:
            check = self.would_exceed(
                people, eps, d, budget, neighbours=notion, measure=m, rho=r, contributions=n
            )
            if check:
                raise BudgetExceeded(check.message(f"release {release_name!r}"))
        before = len(self.people)
        members = self._indices(people, add=True)
        if members.size == 0 and not allow_empty:
            del self.people[before:]
            raise ParameterError(f"release {release_name!r}: no people (an empty release)")
        entry = Entry(
            name=str(release_name),
            epsilon=eps,
            delta=d,
            members=members,
            path=None if path is None else str(path),
            digest=digest,
            recorded=dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            neighbours=notion,
            measure=m,
            rho=r,
            contributions=n,
        )
        self.entries.append(entry)
        if self.path is not None:
            try:
                self.save()
            except BaseException:
                self.entries.pop()
                del self.people[before:]
                raise
        return entry

    def record_loss(
        self, release_name: str, loss: PrivacyLoss, people: Iterable[Any], **kw: Any
    ) -> Entry:
        """:meth:`record` of a release's :class:`~kerckhoffs.dp.loss.PrivacyLoss` (what
        ``release.accounting()`` returns): its epsilon, delta, neighbours, measure, rho and
        contributions. Other keywords as for :meth:`record`."""
        return self.record(
            release_name,
            loss.epsilon,
            loss.delta,
            people,
            neighbours=loss.neighbours,
            measure=loss.measure,
            rho=loss.rho,
            contributions=loss.contributions,
            **kw,
        )

    # -- writing ---------------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        """The ledger file's bytes, sealed with its own SHA-256 (module docstring)."""
        doc = {
            "format": FORMAT,
            "version": VERSION,
            "composition": COMPOSITION[VERSION],
            "neighbours": self.neighbours,
            "people": self.people,
            "releases": [e.to_dict() for e in self.entries],
            "integrity": manifest.PLACEHOLDER,
        }
        raw = (json.dumps(doc, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")
        digest = f"sha256:{hashlib.sha256(raw).hexdigest()}"
        return raw.replace(manifest.PLACEHOLDER.encode(), digest.encode(), 1)

    def save(self, path: str | Path | None = None) -> Path:
        """Write the ledger atomically (a temporary file renamed over the real file, links
        followed), under the ledger's lock, readable by its owner only when new (a file it
        replaces keeps its mode), refusing if the file changed since it was loaded (another
        process recorded a release meanwhile: load again and retry). Temporary files a killed
        writer left beside it are removed."""
        target = Path(path) if path is not None else self.path
        if target is None:
            raise ParameterError("this ledger has no path: give save(path)")
        real = Path(os.path.realpath(target))
        own = self.path is not None and real == Path(os.path.realpath(self.path))
        with lock(real):
            with contextlib.suppress(FileNotFoundError):
                refuse_hard_links(os.stat(real), target)
            if own and sha_on_disk(real) != self._loaded_sha:
                raise InputError(
                    f"ledger {target}: changed by another process since it was read; "
                    "nothing recorded (run again)"
                )
            raw = self.to_bytes()
            remove_stale_temporaries(real)
            with atomic_file(real, private=True) as tmp:
                tmp.write_bytes(raw)
            if own:
                self._loaded_sha = hashlib.sha256(raw).hexdigest()
        return target

    def releases(self) -> pd.DataFrame:
        """One row per recorded release: name, epsilon, delta, neighbours, measure, rho,
        contributions, people (distinct), rows, recorded (UTC), path, digest."""
        return pd.DataFrame(
            {
                "name": [e.name for e in self.entries],
                "epsilon": [e.epsilon for e in self.entries],
                "delta": [e.delta for e in self.entries],
                "neighbours": [e.neighbours for e in self.entries],
                "measure": [e.measure.value for e in self.entries],
                "rho": [e.rho for e in self.entries],
                "contributions": [e.contributions for e in self.entries],
                "people": [int(np.unique(e.members).size) for e in self.entries],
                "rows": [int(e.members.size) for e in self.entries],
                "recorded": [e.recorded for e in self.entries],
                "path": [e.path for e in self.entries],
                "digest": [e.digest for e in self.entries],
            }
        )


def _loss_fields(
    measure: Measure | str, rho: float | None, contributions: object
) -> tuple[Measure, float | None, int]:
    """``measure``, ``rho`` and ``contributions`` of a release checked: a zCDP release needs a
    rho that is a finite number >= 0 (other measures keep none); one-line ParameterError."""
    try:
        m = Measure(getattr(measure, "value", measure))
    except ValueError:
        known = ", ".join(x.value for x in Measure)
        raise ParameterError(f"measure {measure!r}: expected one of {known}") from None
    if m != Measure.ZCDP:
        return m, None, check_contributions(contributions)
    if isinstance(rho, bool) or not isinstance(rho, int | float) or not 0 <= rho < math.inf:
        raise ParameterError(f"rho {rho!r}: a zCDP release needs a finite rho >= 0")
    return m, float(rho), check_contributions(contributions)


def _accounting(
    e: dict[str, Any], delta: float, version: int, where: str
) -> tuple[Measure, float | None, int]:
    """An entry's measure, rho and contributions as read (defaults before version 3: pure
    when delta is 0, else approximate; one row per person)."""
    if version < 3:
        return (Measure.PURE if delta == 0 else Measure.APPROXIMATE), None, 1
    rho = e.get("rho")
    if rho is not None:
        rho = loss_number(rho, f"{where}: rho")
    try:
        return _loss_fields(text_field(e.get("measure"), f"{where}: measure") or "", rho,
                            e.get("contributions"))  # fmt: skip
    except ParameterError as exc:
        raise Malformed(f"{where}: {exc}") from None


def _as_ids(people: Iterable[Any]) -> np.ndarray:
    """People as an object array of id texts; a missing id is an error (it cannot be
    accounted for)."""
    s = pd.Series(list(people) if not isinstance(people, pd.Series | np.ndarray) else people)
    if s.isna().any():
        first = int(np.argmax(s.isna().to_numpy())) + 1
        raise InputError(f"person ids: {int(s.isna().sum())} missing (first: row {first})")
    return s.astype(str).to_numpy(dtype=object)


__all__ = ["FORMAT", "VERSION", "BudgetCheck", "Entry", "Ledger"]
