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

**Several rows.** A person with ``k`` rows in one release (several visits) pays under *group
privacy* over ``k`` neighbouring steps (Dwork and Roth 2014, Theorem 2.2, and its
``(eps, delta)`` form by induction): ``k eps`` and ``delta (1 + e^eps + ... + e^((k-1) eps))``.

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

    {"format": "kerckhoffs-ledger", "version": 2, "composition": "basic",
     "neighbours": "substitution",                    # the budget's notion
     "people": ["P001", "P002", ...],                 # every person ever recorded, as given
     "releases": [{"name": ..., "path": ..., "digest": "sha256:..." | null,
                   "epsilon": 1.0, "delta": 0.0, "neighbours": "add-remove",
                   "recorded": "2025-01-01T12:00:00Z",
                   "members": [0, 1, 1, 5, ...]}],   # indices into people, one per row
     "integrity": "sha256:..."}                       # SHA-256 of the file itself

Version 1 (written before entries recorded their notion) is still read: its budget is under
substitution and each of its entries, whose notion is unknown, is charged as an add-remove
release converted to substitution (the larger of the two possible charges); ``kerckhoffs
budget`` says so. The next release recorded rewrites the file as version 2, the old entries
marked ``"neighbours": "unknown"``.

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
    charge,
    check_loss,
    exceeds,
    notion_text,
    parse_budget,
    parse_notion,
    saturated_sum,
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
from kerckhoffs.errors import InputError, ParameterError

FORMAT = "kerckhoffs-ledger"
VERSION = 2
READABLE_VERSIONS = (1, 2)


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

    def to_dict(self) -> dict[str, Any]:
        """The entry as stored in the ledger file."""
        return {
            "name": self.name,
            "path": self.path,
            "digest": self.digest,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "neighbours": self.neighbours,
            "recorded": self.recorded,
            "members": self.members.tolist(),
        }


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
        if doc.get("composition") != "basic":
            raise Malformed("its composition is not 'basic'")
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

    def _totals(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = len(self.people)
        eps, delta, releases = np.zeros(n), np.zeros(n), np.zeros(n, dtype=np.int64)
        for e in self.entries:  # a loop over releases, not rows
            k = np.bincount(e.members, minlength=n)
            e_eps, e_delta = charge(k, e.epsilon, e.delta, e.neighbours, self.neighbours)
            with np.errstate(over="ignore"):  # a sum beyond a float saturates at inf
                eps += e_eps
                delta += e_delta
            releases += k > 0
        return eps, delta, releases

    def totals_of(self, people: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The totals ``(epsilon, delta)`` spent so far by each of ``people`` (distinct ids;
        0 for someone the ledger does not know)."""
        ids = np.asarray(people, dtype=object)
        eps, delta = np.zeros(len(ids)), np.zeros(len(ids))
        if self.people and len(ids):
            tot_eps, tot_delta, _ = self._totals()
            idx = pd.Index(self.people).get_indexer(ids)
            seen = idx >= 0
            eps[seen] = tot_eps[idx[seen]]
            delta[seen] = tot_delta[idx[seen]]
        return eps, delta

    def spent(self) -> pd.DataFrame:
        """Each person's total loss by basic composition under the ledger's notion: a
        DataFrame indexed by ``person`` with columns ``epsilon``, ``delta`` (sums over the
        releases holding them, group privacy for several rows; ``inf`` when beyond a float)
        and ``releases`` (how many releases hold them)."""
        eps, delta, releases = self._totals()
        return pd.DataFrame(
            {"epsilon": eps, "delta": delta, "releases": releases},
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
    ) -> BudgetCheck:
        """Whether a release with ``(epsilon, delta)`` under ``neighbours`` over ``people``
        (one id per row) would take anyone's total over ``budget`` (``epsilon`` or
        ``(epsilon, delta)``; module docstring for the tolerance). Reaching the budget
        exactly is allowed."""
        eps, d = check_loss(epsilon, delta)
        b_eps, b_delta = parse_budget(budget)
        ids = _as_ids(people)
        codes, uniq = pd.factorize(ids)
        k = np.bincount(codes, minlength=len(uniq))
        uniq = np.asarray(uniq, dtype=object)
        before_eps, before_delta = self.totals_of(uniq)
        add_eps, add_delta = charge(k, eps, d, parse_notion(neighbours), self.neighbours)
        after_eps = saturated_sum(before_eps, add_eps)
        after_delta = saturated_sum(before_delta, add_delta)
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
        path: str | Path | None = None,
        digest: str | None = None,
        budget: float | str | tuple[float, float] | None = None,
        allow_empty: bool = False,
    ) -> Entry:
        """Add a release over ``people`` (one id per row) with loss ``(epsilon, delta)``
        under ``neighbours`` (``substitution`` or ``add-remove``; module docstring for how
        it is charged on this ledger, and what is refused).

        With ``budget`` the release is refused (:class:`BudgetExceeded`, nothing changed) if
        it would take anyone over. A ledger with a :attr:`path` is saved atomically at once,
        so the file never lags behind what was published. ``allow_empty``: record a release
        charging nobody (everyone in it was left out by an individual filter) instead of
        refusing it as a mistake.
        """
        eps, d = check_loss(epsilon, delta)
        notion = parse_notion(neighbours)
        steps_per_row(notion, self.neighbours)
        if not str(release_name).strip():
            raise ParameterError("release_name: give the release a name")
        if budget is not None:
            check = self.would_exceed(people, eps, d, budget, neighbours=notion)
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

    # -- writing ---------------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        """The ledger file's bytes, sealed with its own SHA-256 (module docstring)."""
        doc = {
            "format": FORMAT,
            "version": VERSION,
            "composition": "basic",
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
        """One row per recorded release: name, epsilon, delta, neighbours, people
        (distinct), rows, recorded (UTC), path, digest."""
        return pd.DataFrame(
            {
                "name": [e.name for e in self.entries],
                "epsilon": [e.epsilon for e in self.entries],
                "delta": [e.delta for e in self.entries],
                "neighbours": [e.neighbours for e in self.entries],
                "people": [int(np.unique(e.members).size) for e in self.entries],
                "rows": [int(e.members.size) for e in self.entries],
                "recorded": [e.recorded for e in self.entries],
                "path": [e.path for e in self.entries],
                "digest": [e.digest for e in self.entries],
            }
        )


def _as_ids(people: Iterable[Any]) -> np.ndarray:
    """People as an object array of id texts; a missing id is an error (it cannot be
    accounted for)."""
    s = pd.Series(list(people) if not isinstance(people, pd.Series | np.ndarray) else people)
    if s.isna().any():
        first = int(np.argmax(s.isna().to_numpy())) + 1
        raise InputError(f"person ids: {int(s.isna().sum())} missing (first: row {first})")
    return s.astype(str).to_numpy(dtype=object)


__all__ = ["FORMAT", "VERSION", "BudgetCheck", "Entry", "Ledger"]
