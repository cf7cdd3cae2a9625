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
import errno
import fcntl
import hashlib
import json
import math
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs.data import manifest
from kerckhoffs.data.io import atomic_file, read_table, remove_stale_temporaries
from kerckhoffs.data.output import umask
from kerckhoffs.data.schema import Schema
from kerckhoffs.dp.mechanisms import as_float, shown_number
from kerckhoffs.errors import InputError, ParameterError

FORMAT = "kerckhoffs-ledger"
VERSION = 2
READABLE_VERSIONS = (1, 2)
TOLERANCE = 1e-9
"""Relative tolerance of the budget check: a total within ``TOLERANCE * budget`` above the
budget counts as at the budget (floating-point sums such as ``0.1 + 0.2``)."""
LOCK_SUFFIX = ".kerckhoffs-lock"

SUBSTITUTION = "substitution"
ADD_REMOVE = "add-remove"
UNKNOWN = "unknown"
"""The notion of an entry read from a version-1 ledger (not recorded then)."""
NOTIONS = (SUBSTITUTION, ADD_REMOVE)
"""The neighbour notions a ledger accounts for (module docstring)."""

_HELD: set[Path] = set()


class BudgetExceeded(ParameterError):
    """A release would take someone over their privacy budget; it was not recorded (and the
    command line wrote nothing)."""


# -- neighbour notions ---------------------------------------------------------------------------
def _notion_text(value: object) -> str:
    text = str(getattr(value, "value", value)).strip().lower()
    return text.replace("_", "-").replace("/", "-")


def parse_notion(value: object) -> str:
    """``substitution`` or ``add-remove`` from a string or an enum member (``add_remove`` and
    ``add/remove`` accepted); any other notion is a one-line
    :class:`~kerckhoffs.errors.ParameterError`: the ledger cannot account for it."""
    text = _notion_text(value)
    if text in NOTIONS:
        return text
    raise ParameterError(
        f"neighbours {getattr(value, 'value', value)!r}: a privacy ledger accounts only for "
        "releases that are DP under substitution or add-remove neighbours (a whole record "
        "changing); a release DP under any other notion bounds less than what one record "
        "reveals"
    )


def steps_per_row(entry_notion: str, ledger_notion: str) -> int:
    """How many of the ledger's neighbouring steps one row of an entry counts for: 1 for the
    same notion, 2 for an add-remove (or unknown) entry on a substitution ledger (a
    substitution is a removal and an addition); a substitution entry on an add-remove ledger
    is refused (module docstring)."""
    if entry_notion == ledger_notion:
        return 1
    if ledger_notion == SUBSTITUTION and entry_notion in (ADD_REMOVE, UNKNOWN):
        return 2
    if ledger_notion == ADD_REMOVE and entry_notion == SUBSTITUTION:
        raise ParameterError(
            "a release DP under substitution neighbours cannot be charged to a ledger whose "
            "budget is under add-remove neighbours (it may publish the number of rows exactly, "
            "which no add-remove guarantee allows); use a substitution ledger or publish under "
            "add-remove (-O neighbours=add-remove)"
        )
    raise ParameterError(
        f"an entry under {entry_notion!r} neighbours cannot be charged to a ledger under "
        f"{ledger_notion!r} neighbours"
    )


# -- budgets -----------------------------------------------------------------------------------
def _number(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str | np.number):
        raise ParameterError(f"{what} {value!r}: expected a number")
    try:
        return as_float(value)  # an integer beyond a float is inf, refused as too large
    except ValueError:
        raise ParameterError(f"{what} {shown_number(value)}: not a number in range") from None


def parse_budget(budget: float | str | tuple[float, float]) -> tuple[float, float]:
    """A budget ``(epsilon, delta)`` from ``1``, ``"1"``, ``"1,1e-6"`` or ``(1, 1e-6)``.

    ``delta`` defaults to 0: a pure-DP budget, which any release with ``delta > 0`` exceeds.
    """
    parts: list[object]
    if isinstance(budget, str):
        parts = [p.strip() for p in budget.split(",")]
    elif isinstance(budget, tuple | list):
        parts = list(budget)
    else:
        parts = [budget]
    shown = shown_number(budget)
    if len(parts) not in (1, 2):
        raise ParameterError(f"budget {shown}: expected EPSILON or EPSILON,DELTA")
    try:
        nums = [_number(p, "budget") for p in parts]
    except ParameterError:
        raise ParameterError(
            f"budget {shown}: expected EPSILON or EPSILON,DELTA (e.g. 1 or 1,1e-6)"
        ) from None
    eps, delta = nums[0], (nums[1] if len(nums) == 2 else 0.0)
    if eps == math.inf:
        raise ParameterError(
            f"budget {shown}: epsilon is too large (beyond the largest float, about 1.8e308, "
            "it is not a finite number)"
        )
    if not (math.isfinite(eps) and eps > 0):
        raise ParameterError(f"budget {shown}: epsilon must be a positive number")
    if not (math.isfinite(delta) and 0 <= delta < 1):
        raise ParameterError(f"budget {shown}: delta must be in [0, 1)")
    return eps, delta


def _check_loss(epsilon: object, delta: object) -> tuple[float, float]:
    eps, d = _number(epsilon, "epsilon"), _number(delta, "delta")
    if not (math.isfinite(eps) and eps >= 0):
        raise ParameterError(f"epsilon {epsilon!r}: must be a finite number >= 0")
    if not (math.isfinite(d) and 0 <= d < 1):
        raise ParameterError(f"delta {delta!r}: must be in [0, 1)")
    return eps, d


def group_delta_factor(rows: np.ndarray, epsilon: float) -> np.ndarray:
    """``1 + e^eps + ... + e^((k-1) eps)`` for each ``k`` in ``rows`` (0 for ``k = 0``, inf
    where it exceeds a float): the multiplier of delta for a person with ``k`` rows in one
    (eps, delta)-DP release (group privacy over ``k`` steps, Dwork and Roth 2014, Thm 2.2).

    ``(e^(k eps) - 1)/(e^eps - 1)`` where that is a float; beyond, in log space,
    ``(k-1) eps + log(1 - e^(-k eps)) - log(1 - e^(-eps))``, so an epsilon of 710 or more
    (``e^eps`` is no float) gives ``inf``, not an error."""
    k = np.asarray(rows, dtype=np.float64)
    eps = float(epsilon)
    if eps == 0:
        return k.copy()
    out = np.zeros(k.shape)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        direct = (k > 0) & (k * eps <= 700.0)
        out[direct] = np.expm1(k[direct] * eps) / math.expm1(min(eps, 700.0))
        far = (k > 0) & ~direct
        tail = np.log(-np.expm1(-k[far] * eps)) - math.log(-math.expm1(-eps))
        out[far] = np.exp((k[far] - 1) * eps + tail)
    return out


def group_loss(rows: np.ndarray, epsilon: float, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """``(k eps, delta * group_delta_factor(k, eps))`` for each ``k`` in ``rows``, saturating:
    a zero ``delta`` or ``k`` costs exactly 0, an overflow is ``inf``, never NaN."""
    k = np.asarray(rows, dtype=np.float64)
    with np.errstate(over="ignore"):
        eps_out = np.where(k > 0, k * float(epsilon), 0.0)
        d_out = np.zeros(k.shape)
        if delta > 0:
            some = k > 0
            d_out[some] = float(delta) * group_delta_factor(k[some], epsilon)
    return eps_out, d_out


def charge(
    rows: np.ndarray, epsilon: float, delta: float, neighbours: str, ledger_neighbours: str
) -> tuple[np.ndarray, np.ndarray]:
    """What each person with ``rows[i]`` rows in a release at ``(epsilon, delta)`` DP under
    ``neighbours`` pays against a budget under ``ledger_neighbours`` (module docstring)."""
    steps = steps_per_row(neighbours, ledger_neighbours)
    return group_loss(np.asarray(rows, dtype=np.int64) * steps, epsilon, delta)


def saturated_sum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a + b`` of non-negative totals, ``inf`` where the sum passes the largest float (the
    intended saturation: over any budget), without numpy's overflow warning."""
    with np.errstate(over="ignore"):
        return np.add(a, b)


def _over(total: np.ndarray, budget: float) -> np.ndarray:
    return total > budget * (1 + TOLERANCE)


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
def read_regular_file(path: Path, shown: str | Path) -> bytes | None:
    """The bytes of the regular file at ``path``, or None when there is none; a directory,
    a FIFO, a device or a socket is a one-line :class:`~kerckhoffs.errors.InputError` naming
    ``shown`` (opened without blocking, so a FIFO is refused instead of waited on)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InputError(f"ledger {shown}: cannot read it ({exc.strerror})") from None
    with open(fd, "rb") as fh:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise InputError(f"ledger {shown} is a directory, not a ledger file")
        if not stat.S_ISREG(mode):
            raise InputError(
                f"ledger {shown} is not a regular file (a FIFO, a device or a socket); "
                "refusing to read it"
            )
        return fh.read()


def refuse_hard_links(st: os.stat_result, shown: str | Path) -> None:
    """A one-line :class:`~kerckhoffs.errors.InputError` when the ledger file has more than
    one hard link. A ledger is saved by renaming a complete new file over its name (atomic:
    a crash leaves the old or the new, never half), which gives that one name a new file and
    leaves every other name holding the old accounts: two ledgers from then on, each missing
    the other's charges. A symbolic link is followed and stays one ledger; a hard link cannot
    be, so it is refused rather than split."""
    if st.st_nlink > 1:
        raise InputError(
            f"ledger {shown} has {st.st_nlink} hard links (other names for the same file); "
            "saving it replaces one name only and would split the ledger in two: keep one "
            "name (a symbolic link to it is fine) and remove the others"
        )


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        twice = next(k for k in keys if keys.count(k) > 1)
        raise _Malformed(f"the key {twice!r} is given twice")
    return dict(pairs)


def _no_constant(name: str) -> None:
    raise _Malformed(f"{name} is not a number a ledger may hold")


class _Malformed(ValueError):
    """A ledger's content is not what this module writes (the reason, for the one line)."""


def _ints(values: object, what: str) -> np.ndarray:
    """A JSON list of integers (not floats, not booleans) as int64."""
    if not isinstance(values, list) or not set(map(type, values)) <= {int}:
        raise _Malformed(f"{what} must be a list of integers")
    try:
        return np.asarray(values, dtype=np.int64).reshape(-1)
    except OverflowError:
        raise _Malformed(f"{what}: an integer out of range") from None


def _text(value: object, what: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise _Malformed(f"{what} must be a text")
    return value


def _loss_number(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Malformed(f"{what} must be a number")
    try:
        return float(value)
    except OverflowError:
        raise _Malformed(f"{what} is out of range") from None


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
                object_pairs_hook=_no_duplicate_keys,
                parse_constant=_no_constant,
            )
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise InputError(f"ledger {path}: not valid JSON (damaged or not a ledger)") from None
        except RecursionError:
            raise InputError(f"ledger {path}: nested too deeply to be a ledger") from None
        except _Malformed as exc:
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
        except _Malformed as exc:
            raise InputError(f"ledger {path}: {exc}; refusing it") from None
        led._loaded_sha = hashlib.sha256(raw).hexdigest()
        return led

    @classmethod
    def _read_doc(cls, doc: dict[str, Any], version: int, path: Path) -> Ledger:
        if doc.get("composition") != "basic":
            raise _Malformed("its composition is not 'basic'")
        if version == 1:
            notion = SUBSTITUTION
        else:
            notion = _notion_text(_text(doc.get("neighbours"), "'neighbours'"))
            if notion not in NOTIONS:
                raise _Malformed(
                    f"its budget's neighbour notion {notion!r} is not one a ledger has"
                )
        people = doc.get("people")
        if not isinstance(people, list) or not set(map(type, people)) <= {str}:
            raise _Malformed("'people' must be a list of texts")
        if len(set(people)) != len(people):
            raise _Malformed("a person is listed twice")
        releases = doc.get("releases")
        if not isinstance(releases, list):
            raise _Malformed("'releases' must be a list")
        entries = []
        for i, e in enumerate(releases):  # a loop over releases, not rows
            where = f"release entry {i + 1}"
            if not isinstance(e, dict):
                raise _Malformed(f"{where} is not an object")
            members = _ints(e.get("members"), f"{where}: members")
            if members.size and (members.min() < 0 or members.max() >= len(people)):
                raise _Malformed(f"{where}: a member index is not a person of the ledger")
            eps = _loss_number(e.get("epsilon"), f"{where}: epsilon")
            delta = _loss_number(e.get("delta"), f"{where}: delta")
            try:
                eps, delta = _check_loss(eps, delta)
            except ParameterError as exc:
                raise _Malformed(f"{where}: {exc}") from None
            if version == 1:
                entry_notion = UNKNOWN
            else:
                entry_notion = _notion_text(_text(e.get("neighbours"), f"{where}: neighbours"))
                if entry_notion not in (*NOTIONS, UNKNOWN):
                    raise _Malformed(f"{where}: neighbours {entry_notion!r} is not accounted for")
                try:
                    steps_per_row(entry_notion, notion)
                except ParameterError:
                    raise _Malformed(
                        f"{where} is under {entry_notion} neighbours, which a ledger under "
                        f"{notion} cannot hold"
                    ) from None
            entries.append(
                Entry(
                    name=str(_text(e.get("name"), f"{where}: name")),
                    epsilon=eps,
                    delta=delta,
                    members=members,
                    path=_text(e.get("path"), f"{where}: path", optional=True),
                    digest=_text(e.get("digest"), f"{where}: digest", optional=True),
                    recorded=str(_text(e.get("recorded", ""), f"{where}: recorded")),
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
        eps, d = _check_loss(epsilon, delta)
        b_eps, b_delta = parse_budget(budget)
        ids = _as_ids(people)
        codes, uniq = pd.factorize(ids)
        k = np.bincount(codes, minlength=len(uniq))
        uniq = np.asarray(uniq, dtype=object)
        before_eps, before_delta = self.totals_of(uniq)
        add_eps, add_delta = charge(k, eps, d, parse_notion(neighbours), self.neighbours)
        after_eps = saturated_sum(before_eps, add_eps)
        after_delta = saturated_sum(before_delta, add_delta)
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
        eps, d = _check_loss(epsilon, delta)
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
            if own and _sha_on_disk(real) != self._loaded_sha:
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


def _sha_on_disk(path: Path) -> str | None:
    raw = read_regular_file(path, path)
    return None if raw is None else hashlib.sha256(raw).hexdigest()


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
    """Hold the ledger's exclusive lock (``flock`` on ``.NAME.kerckhoffs-lock`` beside the
    real file, links followed) for the block: between reading the ledger and recording a
    release nobody else may record. Re-entrant within a process; a second process fails at
    once with one line. Refused in one line: a ledger whose folder does not exist
    (:func:`require_folder`: no folder is ever created for a ledger) and a ledger file with
    several hard links (:func:`refuse_hard_links`: saving it would split it). Reading a
    ledger (``kerckhoffs budget``) takes no lock and refuses neither."""
    target = Path(os.path.realpath(path))
    if target in _HELD:
        yield
        return
    require_folder(path)
    with contextlib.suppress(FileNotFoundError):
        refuse_hard_links(os.stat(target), path)
    lock_path = target.parent / f".{target.name}{LOCK_SUFFIX}"
    while True:
        try:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666 & ~umask())
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


def require_folder(path: str | Path) -> None:
    """A one-line :class:`~kerckhoffs.errors.InputError` naming the folder when the folder
    of the ledger ``path`` (links followed) does not exist. A ledger is the record of what
    everyone has spent: creating its folder would turn a typo in the path
    (``/srv/ledgr/L.json``) into a fresh, empty ledger, a full budget for everyone, with only
    a note. A new ledger file in an existing folder is how a ledger starts."""
    given = Path(path)
    real = Path(os.path.realpath(given))
    if not real.parent.is_dir():
        shown = given.parent if not given.parent.is_symlink() else real.parent
        raise InputError(
            f"ledger {given}: its folder {shown} does not exist; a ledger's folder is never "
            "created (a mistyped path would start everyone on a fresh budget): fix the path, "
            "or create the folder first"
        )


# -- who is in a release -------------------------------------------------------------------------
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


def people_of_input(
    data: str | Path | pd.DataFrame, column: str, *, sep: str | None = None
) -> np.ndarray:
    """The id (text, as written in the file) of every row of the input, in file order:
    everyone whose row the computation could read pays, including rows a missing-value
    policy drops later (their row decided that they were dropped). A row without an id is a
    one-line error: the ledger could not account for it."""
    if isinstance(data, pd.DataFrame):
        if column not in data.columns:
            raise InputError(f"the data has no identifier column {column!r}")
        s = data[column].reset_index(drop=True)
        where = "the data"
    else:
        df = read_table(data, sep=sep, text_columns=[column], columns=[column])
        if column not in df.columns:
            raise InputError(f"{data}: no identifier column {column!r}")
        s = df[column]
        where = str(data)
    na = s.isna().to_numpy()
    if na.any():
        first = int(np.flatnonzero(na)[0]) + 1
        raise InputError(
            f"{where}: column {column!r}: {int(na.sum())} row(s) have no identifier (first: "
            f"data row {first}); the ledger cannot account for them"
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
    except (UnicodeDecodeError, json.JSONDecodeError, AttributeError, RecursionError):
        return None
    return value if isinstance(value, str) else None


def privacy_loss_of(release: object) -> tuple[float, float] | None:
    """``release.privacy_loss()`` when the release has it (DP releases), else None: only a
    release that states its ``(epsilon, delta)`` can be accounted for."""
    method = getattr(release, "privacy_loss", None)
    if method is None:
        return None
    loss = method()
    if loss is None:
        return None
    eps, delta = loss
    return float(eps), float(delta)


def neighbours_of(release: object) -> str | None:
    """The neighbour notion a DP release states (``release.noise.neighbours``, as text), or
    None when it states none."""
    noise = getattr(release, "noise", None)
    value = getattr(noise, "neighbours", None)
    return None if value is None else _notion_text(value)


__all__ = [
    "ADD_REMOVE",
    "FORMAT",
    "NOTIONS",
    "SUBSTITUTION",
    "TOLERANCE",
    "UNKNOWN",
    "VERSION",
    "BudgetCheck",
    "BudgetExceeded",
    "Entry",
    "Ledger",
    "charge",
    "group_delta_factor",
    "group_loss",
    "identifier_column",
    "lock",
    "neighbours_of",
    "parse_budget",
    "parse_notion",
    "people_of_input",
    "privacy_loss_of",
    "read_regular_file",
    "refuse_hard_links",
    "release_digest",
    "require_folder",
    "saturated_sum",
    "steps_per_row",
]
