"""The ledger's file, guarded (:mod:`kerckhoffs.dp.ledger`): read only when it is a regular
file with one name, parsed strictly (a key given twice, a number that is not one, a member
index that is not an integer are refused), and locked while a release is charged, so nobody
records between what one run reads and what it writes.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from kerckhoffs.data.output import umask
from kerckhoffs.errors import InputError

LOCK_SUFFIX = ".kerckhoffs-lock"
_HELD: set[Path] = set()


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


def no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        twice = next(k for k in keys if keys.count(k) > 1)
        raise Malformed(f"the key {twice!r} is given twice")
    return dict(pairs)


def no_constant(name: str) -> None:
    raise Malformed(f"{name} is not a number a ledger may hold")


class Malformed(ValueError):
    """A ledger's content is not what this module writes (the reason, for the one line)."""


def ints(values: object, what: str) -> np.ndarray:
    """A JSON list of integers (not floats, not booleans) as int64."""
    if not isinstance(values, list) or not set(map(type, values)) <= {int}:
        raise Malformed(f"{what} must be a list of integers")
    try:
        return np.asarray(values, dtype=np.int64).reshape(-1)
    except OverflowError:
        raise Malformed(f"{what}: an integer out of range") from None


def text_field(value: object, what: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise Malformed(f"{what} must be a text")
    return value


def loss_number(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Malformed(f"{what} must be a number")
    try:
        return float(value)
    except OverflowError:
        raise Malformed(f"{what} is out of range") from None


def sha_on_disk(path: Path) -> str | None:
    raw = read_regular_file(path, path)
    return None if raw is None else hashlib.sha256(raw).hexdigest()


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


__all__ = [
    "LOCK_SUFFIX",
    "Malformed",
    "ints",
    "lock",
    "loss_number",
    "no_constant",
    "no_duplicate_keys",
    "read_regular_file",
    "refuse_hard_links",
    "require_folder",
    "sha_on_disk",
    "text_field",
]
