"""A per-person privacy budget across releases (paper 004, spec ``composition.md`` 2.11, 3.8).

OpenDP accounts for the queries of one analysis. Nobody accounts *across* releases: a
hospital that publishes a DP histogram this year and another next year, or two publishers
whose populations overlap, each stay within their own epsilon while the people in both pay
the sum. Paper 004's point (Section 1, 2.11 of the spec) is that DP, unlike k-anonymity,
*composes*: by basic composition (Dwork et al. 2006; spec 2.11), if release ``j`` is
``(eps_j, delta_j)``-DP, everyone's total loss over the releases holding them is at most
``(sum eps_j, sum delta_j)``. People who are in only one release pay only that one.

The ledger is the file a publisher keeps to make that sum: one entry per release written
with its ``(epsilon, delta)``, its name and path, the SHA-256 integrity digest of its
``release.json`` (so an entry names exactly the files it accounts for), the time it was
recorded, and who was in it. People are named by the values of the input's identifier
column (schema role ``identifier``) *as given*, not hashed: the ledger is the publisher's
private file, like the input data it was made from, and must never be published (a
hash of a name or an SSN is no protection: the identifier space is small enough to hash
every candidate). Basic composition is the only accountant; it is valid for any mix of
releases, even releases chosen after seeing earlier ones (spec 2.11).

A person with ``k`` rows in one release (e.g. several visits) pays that release's loss under
*group privacy* over ``k`` substitutions (Dwork-Roth 2014, Thm 2.2 and its (eps, delta)
form): ``k*eps`` and ``delta * (1 + e^eps + ... + e^((k-1)eps))``.

File format (JSON, one line, written atomically and sealed like ``release.json``)::

    {"format": "kerckhoffs-ledger", "version": 1, "composition": "basic",
     "people": ["P001", "P002", ...],                 # every person ever recorded, as given
     "releases": [{"name": ..., "path": ..., "digest": "sha256:..." | null,
                   "epsilon": 1.0, "delta": 0.0, "recorded": "2025-01-01T12:00:00Z",
                   "members": [0, 1, 1, 5, ...]}],   # indices into people, one per row
     "integrity": "sha256:..."}                       # SHA-256 of the file itself

The self-digest refuses a ledger edited outside kerckhoffs (an edit that drops an entry would
silently give people budget back); like ``release.json``'s, it guards against accidents, not
against someone able to rewrite the file. Decisions use a relative tolerance of
:data:`TOLERANCE` so that spending ``0.1`` then ``0.2`` of a ``0.3`` budget is allowed (binary
floating point would otherwise count it as over): spending *exactly* the budget is allowed.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import fcntl
import hashlib
import json
import math
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs.data import manifest
from kerckhoffs.data.io import atomic_file, read_table
from kerckhoffs.data.output import umask
from kerckhoffs.data.schema import Schema
from kerckhoffs.errors import InputError, ParameterError

FORMAT = "kerckhoffs-ledger"
VERSION = 1
TOLERANCE = 1e-9
"""Relative tolerance of the budget check: a total within ``TOLERANCE * budget`` above the
budget counts as at the budget (floating-point sums such as ``0.1 + 0.2``)."""
LOCK_SUFFIX = ".kerckhoffs-lock"

_HELD: set[Path] = set()


class BudgetExceeded(ParameterError):
    """A release would take someone over their privacy budget; it was not recorded (and the
    command line wrote nothing)."""


# -- budgets -----------------------------------------------------------------------------------
def parse_budget(budget: float | str | tuple[float, float]) -> tuple[float, float]:
    """A budget ``(epsilon, delta)`` from ``1``, ``"1"``, ``"1,1e-6"`` or ``(1, 1e-6)``.

    ``delta`` defaults to 0: a pure-DP budget, which any release with ``delta > 0`` exceeds.
    """
    if isinstance(budget, str):
        parts = [p.strip() for p in budget.split(",")]
        try:
            nums = [float(p) for p in parts]
        except ValueError:
            raise ParameterError(
                f"budget {budget!r}: expected EPSILON or EPSILON,DELTA (e.g. 1 or 1,1e-6)"
            ) from None
    elif isinstance(budget, tuple | list):
        nums = [float(x) for x in budget]
    else:
        nums = [float(budget)]
    if len(nums) not in (1, 2):
        raise ParameterError(f"budget {budget!r}: expected EPSILON or EPSILON,DELTA")
    eps, delta = nums[0], (nums[1] if len(nums) == 2 else 0.0)
    if not (math.isfinite(eps) and eps > 0):
        raise ParameterError(f"budget {budget!r}: epsilon must be a positive number")
    if not (math.isfinite(delta) and 0 <= delta < 1):
        raise ParameterError(f"budget {budget!r}: delta must be in [0, 1)")
    return eps, delta


def _check_loss(epsilon: float, delta: float) -> tuple[float, float]:
    eps, d = float(epsilon), float(delta)
    if not (math.isfinite(eps) and eps >= 0):
        raise ParameterError(f"epsilon {epsilon!r}: must be a finite number >= 0")
    if not (math.isfinite(d) and 0 <= d < 1):
        raise ParameterError(f"delta {delta!r}: must be in [0, 1)")
    return eps, d


def group_delta_factor(rows: np.ndarray, epsilon: float) -> np.ndarray:
    """``1 + e^eps + ... + e^((k-1) eps)`` for each ``k`` in ``rows`` (0 for ``k = 0``): the
    multiplier of delta for a person with ``k`` rows in one (eps, delta)-DP release (group
    privacy over ``k`` substitutions, Dwork-Roth 2014 Thm 2.2)."""
    k = np.asarray(rows, dtype=np.float64)
    if epsilon == 0:
        return k
    with np.errstate(over="ignore"):
        return np.expm1(k * epsilon) / math.expm1(epsilon)


def _over(total: np.ndarray, budget: float) -> np.ndarray:
    return total > budget * (1 + TOLERANCE)


# -- entries -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Entry:
    """One recorded release: its loss, where it is, and who was in it (``members``: indices
    into :attr:`Ledger.people`, one per row, so a person with two rows appears twice)."""

    name: str
    epsilon: float
    delta: float
    members: np.ndarray
    path: str | None = None
    digest: str | None = None
    recorded: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The entry as stored in the ledger file."""
        return {
            "name": self.name,
            "path": self.path,
            "digest": self.digest,
            "epsilon": self.epsilon,
            "delta": self.delta,
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


# -- the ledger --------------------------------------------------------------------------------
@dataclass
class Ledger:
    """Who has paid how much privacy loss, over every release recorded (module docstring).

    ``Ledger(path)`` is a new, empty ledger that :meth:`save` writes to ``path``;
    :meth:`load` reads one back. Example::

        >>> led = Ledger()
        >>> _ = led.record("2024", 0.5, 0.0, ["ann", "bob"])
        >>> _ = led.record("2025", 0.25, 0.0, ["bob", "cid"])
        >>> led.spent()["epsilon"].to_dict()
        {'ann': 0.5, 'bob': 0.75, 'cid': 0.25}
        >>> bool(led.would_exceed(["bob"], 0.25, 0.0, budget=1.0))
        False
    """

    path: Path | None = None
    people: list[str] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)
    _loaded_digest: str | None = field(default=None, repr=False)

    # -- reading ---------------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | Path, *, create: bool = False) -> Ledger:
        """Read the ledger at ``path``; with ``create`` a missing file is a new, empty ledger
        (written by the first :meth:`record`). A damaged, edited or foreign file is a one-line
        :class:`~kerckhoffs.errors.InputError`."""
        path = Path(path)
        if not path.exists():
            if create:
                return cls(path)
            raise InputError(f"ledger {path}: no such file")
        if path.is_dir():
            raise InputError(f"ledger {path} is a directory, not a ledger file")
        raw = path.read_bytes()
        return cls._parse(raw, path)

    @classmethod
    def _parse(cls, raw: bytes, path: Path) -> Ledger:
        try:
            doc = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise InputError(f"ledger {path}: not valid JSON (damaged or not a ledger)") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise InputError(f"ledger {path}: not a kerckhoffs ledger (no format {FORMAT!r})")
        if doc.get("version") != VERSION:
            raise InputError(
                f"ledger {path}: format version {doc.get('version')!r} is not supported "
                f"(this kerckhoffs reads version {VERSION})"
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
            people = [str(p) for p in doc["people"]]
            entries = []
            for e in doc["releases"]:
                members = np.asarray(e["members"], dtype=np.int64)
                if members.ndim != 1 or (
                    members.size and (members.min() < 0 or members.max() >= len(people))
                ):
                    raise ValueError("members out of range")
                eps, delta = _check_loss(e["epsilon"], e["delta"])
                entries.append(
                    Entry(
                        name=str(e["name"]),
                        epsilon=eps,
                        delta=delta,
                        members=members,
                        path=e.get("path"),
                        digest=e.get("digest"),
                        recorded=str(e.get("recorded", "")),
                    )
                )
        except (KeyError, TypeError, ValueError, ParameterError):
            raise InputError(f"ledger {path}: malformed release entries; refusing it") from None
        if len(set(people)) != len(people):
            raise InputError(f"ledger {path}: a person is listed twice; refusing it")
        return cls(path, people, entries, digest)

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
            eps += k * e.epsilon
            delta += e.delta * group_delta_factor(k, e.epsilon)
            releases += k > 0
        return eps, delta, releases

    def spent(self) -> pd.DataFrame:
        """Each person's total loss by basic composition: a DataFrame indexed by ``person``
        with columns ``epsilon``, ``delta`` (sums over the releases holding them, group
        privacy for several rows) and ``releases`` (how many releases hold them)."""
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
    ) -> BudgetCheck:
        """Whether a release with ``(epsilon, delta)`` over ``people`` (one id per row) would
        take anyone's total over ``budget`` (``epsilon`` or ``(epsilon, delta)``; module
        docstring for the tolerance). Reaching the budget exactly is allowed."""
        eps, d = _check_loss(epsilon, delta)
        b_eps, b_delta = parse_budget(budget)
        ids = _as_ids(people)
        codes, uniq = pd.factorize(ids)
        k = np.bincount(codes, minlength=len(uniq))
        uniq = np.asarray(uniq, dtype=object)
        before_eps = np.zeros(len(uniq))
        before_delta = np.zeros(len(uniq))
        if self.people:
            tot_eps, tot_delta, _ = self._totals()
            idx = pd.Index(self.people).get_indexer(uniq)
            seen = idx >= 0
            before_eps[seen] = tot_eps[idx[seen]]
            before_delta[seen] = tot_delta[idx[seen]]
        after_eps = before_eps + k * eps
        after_delta = before_delta + d * group_delta_factor(k, eps)
        over = _over(after_eps, b_eps) | _over(after_delta, b_delta)
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
        path: str | Path | None = None,
        digest: str | None = None,
        budget: float | str | tuple[float, float] | None = None,
    ) -> Entry:
        """Add a release over ``people`` (one id per row) with loss ``(epsilon, delta)``.

        With ``budget`` the release is refused (:class:`BudgetExceeded`, nothing changed) if
        it would take anyone over. A ledger with a :attr:`path` is saved atomically at once,
        so the file never lags behind what was published.
        """
        eps, d = _check_loss(epsilon, delta)
        if not str(release_name).strip():
            raise ParameterError("release_name: give the release a name")
        if budget is not None:
            check = self.would_exceed(people, eps, d, budget)
            if check:
                raise BudgetExceeded(check.message(f"release {release_name!r}"))
        before = len(self.people)
        members = self._indices(people, add=True)
        if members.size == 0:
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
            "people": self.people,
            "releases": [e.to_dict() for e in self.entries],
            "integrity": manifest.PLACEHOLDER,
        }
        raw = (json.dumps(doc, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")
        digest = f"sha256:{hashlib.sha256(raw).hexdigest()}"
        return raw.replace(manifest.PLACEHOLDER.encode(), digest.encode(), 1)

    def save(self, path: str | Path | None = None) -> Path:
        """Write the ledger atomically (a temporary file renamed over the old one), under the
        ledger's lock, refusing if the file changed since it was loaded (another process
        recorded a release meanwhile: load again and retry)."""
        target = Path(path) if path is not None else self.path
        if target is None:
            raise ParameterError("this ledger has no path: give save(path)")
        with lock(target):
            if target == self.path:
                current = _digest_on_disk(target)
                if current != self._loaded_digest:
                    raise InputError(
                        f"ledger {target}: changed by another process since it was read; "
                        "nothing recorded (run again)"
                    )
            raw = self.to_bytes()
            with atomic_file(target) as tmp:
                tmp.write_bytes(raw)
            if target == self.path:
                self._loaded_digest = json.loads(raw)["integrity"]
        return target

    def releases(self) -> pd.DataFrame:
        """One row per recorded release: name, epsilon, delta, people (distinct), rows,
        recorded (UTC), path, digest."""
        return pd.DataFrame(
            {
                "name": [e.name for e in self.entries],
                "epsilon": [e.epsilon for e in self.entries],
                "delta": [e.delta for e in self.entries],
                "people": [int(np.unique(e.members).size) for e in self.entries],
                "rows": [int(e.members.size) for e in self.entries],
                "recorded": [e.recorded for e in self.entries],
                "path": [e.path for e in self.entries],
                "digest": [e.digest for e in self.entries],
            }
        )


def _digest_on_disk(path: Path) -> str | None:
    if not path.exists():
        return None
    try:
        doc = json.loads(path.read_bytes())
    except (UnicodeDecodeError, json.JSONDecodeError):
        return "unreadable"
    return doc.get("integrity") if isinstance(doc, dict) else "unreadable"


def _as_ids(people: Iterable[Any]) -> np.ndarray:
    """People as an object array of id texts; a missing id is an error (it cannot be
    accounted for)."""
    s = pd.Series(list(people) if not isinstance(people, pd.Series | np.ndarray) else people)
    if s.isna().any():
        first = int(np.argmax(s.isna().to_numpy())) + 1
        raise InputError(f"person ids: {int(s.isna().sum())} missing (first: row {first})")
    return s.astype(str).to_numpy(dtype=object)


# -- locking -----------------------------------------------------------------------------------
@contextlib.contextmanager
def lock(path: str | Path) -> Iterator[None]:
    """Hold the ledger's exclusive lock (``flock`` on ``.NAME.kerckhoffs-lock`` beside it) for
    the block: between checking a budget and recording a release nobody else may record.
    Re-entrant within a process; a second process fails at once with one line."""
    target = Path(os.path.abspath(path))
    if target in _HELD:
        yield
        return
    lock_path = target.parent / f".{target.name}{LOCK_SUFFIX}"
    while True:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o666 & ~umask())
        except OSError as exc:
            raise InputError(f"ledger {path}: cannot lock ({exc.strerror})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise InputError(
                    f"ledger {path} is in use by another kerckhoffs process; wait for it to finish"
                ) from None
            raise InputError(f"ledger {path}: cannot lock ({exc.strerror})") from None
        try:  # the previous holder may have removed the file between our open and our lock
            same = os.fstat(fd).st_ino == os.stat(lock_path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    _HELD.add(target)
    try:
        yield
    finally:
        _HELD.discard(target)
        with contextlib.suppress(OSError):
            os.unlink(lock_path)  # before closing: a waiting process then retries cleanly
        os.close(fd)


# -- what the command line needs -----------------------------------------------------------------
def identifier_column(schema: Schema, name: str | None = None) -> str:
    """The identifier column that names the people of a release: ``name`` if given (it must
    have role ``identifier``), else the schema's only one; a one-line error otherwise."""
    ids = [c.name for c in schema.identifiers]
    if name is not None:
        if name not in ids:
            raise InputError(
                f"--ledger-id {name}: not a column of role identifier in the schema"
                + (f" (have {', '.join(ids)})" if ids else "")
            )
        return name
    if not ids:
        raise InputError(
            "--ledger needs to know who is in the release: the schema has no column of role "
            "identifier"
        )
    if len(ids) > 1:
        raise InputError(
            f"--ledger: the schema has {len(ids)} identifier columns ({', '.join(ids)}); "
            "choose one with --ledger-id"
        )
    return ids[0]


def people_of_rows(
    data: str | Path, column: str, row_ids: np.ndarray | None, *, sep: str | None = None
) -> np.ndarray:
    """The ids (texts, as written in the file) of the input rows a table kept (``row_ids``:
    :attr:`kerckhoffs.data.table.Table.row_ids`; rows dropped for missing values are in no
    release and pay nothing)."""
    df = read_table(data, sep=sep, text_columns=[column])
    if column not in df.columns:
        raise InputError(f"{data}: no identifier column {column!r}")
    s = df[column]
    if row_ids is not None:
        s = s.iloc[row_ids]
    if s.isna().any():
        first = int(np.flatnonzero(s.isna().to_numpy())[0])
        row = int(row_ids[first]) + 1 if row_ids is not None else first + 1
        raise InputError(
            f"column {column!r}: {int(s.isna().sum())} row(s) have no identifier (first: data "
            f"row {row}); the ledger cannot account for them"
        )
    return s.astype(str).to_numpy(dtype=object)


def release_digest(out_dir: str | Path) -> str | None:
    """The ``integrity`` digest recorded in a release directory's ``release.json`` (which
    covers every published file), or None when there is none."""
    meta = Path(out_dir) / "release.json"
    if not meta.is_file():
        return None
    try:
        value = json.loads(meta.read_bytes()).get("integrity")
    except (UnicodeDecodeError, json.JSONDecodeError, AttributeError):
        return None
    return value if isinstance(value, str) else None


@dataclass
class LedgerGate:
    """What ``anonymize --ledger L --budget B`` needs, in the order it needs it: made (and
    the ledger read, so a bad one fails) before any work; :meth:`admit` refuses a release that
    is not DP or would take someone over budget, before anything is written; :meth:`commit`
    records the release once it is written."""

    ledger: Ledger
    column: str
    budget: tuple[float, float] | None = None

    @classmethod
    def open(
        cls,
        path: str | Path,
        schema: Schema,
        *,
        budget: float | str | tuple[float, float] | None = None,
        column: str | None = None,
    ) -> LedgerGate:
        """Check the options and read the ledger (a missing file is a new ledger)."""
        col = identifier_column(schema, column)
        b = parse_budget(budget) if budget is not None else None
        return cls(Ledger.load(path, create=True), col, b)

    def admit(
        self,
        release: object,
        data: str | Path,
        row_ids: np.ndarray | None,
        *,
        name: str,
        sep: str | None = None,
    ) -> tuple[tuple[float, float], np.ndarray]:
        """The release's ``(epsilon, delta)`` and its people (one id per row), or a one-line
        refusal: not a DP release, an id missing, someone over budget."""
        loss = privacy_loss_of(release)
        if loss is None:
            raise InputError(
                "--ledger needs a DP release (one that states its epsilon and delta); this "
                "algorithm's release does not"
            )
        people = people_of_rows(data, self.column, row_ids, sep=sep)
        if self.budget is not None:
            check = self.ledger.would_exceed(people, loss[0], loss[1], self.budget)
            if check:
                raise BudgetExceeded(check.message(f"release {name}"))
        return loss, people

    def commit(self, out_dir: str | Path, loss: tuple[float, float], people: np.ndarray) -> Entry:
        """Record the written release (name: the directory's name; its path and
        ``release.json`` digest) and save the ledger."""
        out = Path(out_dir)
        return self.ledger.record(
            out.name or str(out),
            loss[0],
            loss[1],
            people,
            path=os.path.abspath(out),
            digest=release_digest(out),
            budget=self.budget,
        )


def privacy_loss_of(release: object) -> tuple[float, float] | None:
    """``release.privacy_loss()`` when the release has it (DP releases, issue 14), else
    None: only a release that states its ``(epsilon, delta)`` can be accounted for."""
    method = getattr(release, "privacy_loss", None)
    if method is None:
        return None
    loss = method()
    if loss is None:
        return None
    eps, delta = loss
    return float(eps), float(delta)


__all__ = [
    "FORMAT",
    "TOLERANCE",
    "VERSION",
    "BudgetCheck",
    "BudgetExceeded",
    "Entry",
    "Ledger",
    "LedgerGate",
    "group_delta_factor",
    "identifier_column",
    "lock",
    "parse_budget",
    "people_of_rows",
    "privacy_loss_of",
    "release_digest",
]
