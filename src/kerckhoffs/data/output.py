"""Writing output directories without losing anyone's data.

Every command that writes a directory (a release, an attack's findings) goes through
:func:`output_directory`, which enforces four rules before any work starts:

1. **Never delete what we did not create.** An existing ``--out`` is replaced only with
   ``overwrite`` and only when it is a directory kerckhoffs wrote of the same kind, holding
   nothing but the files its own manifest lists (a release: ``release.json`` and the tables it
   names; attack findings: ``tuples.csv`` and ``summary.json``), or an empty directory.
   Anything else (the input's folder, ``.``, a home folder) is refused with one line.
2. **Never replace the inputs.** A target that is, or contains, the input data, the schema, a
   hierarchy or the current directory is refused, even if it looks like a release.
3. **One writer per target.** The claim takes an exclusive ``flock`` on a lock file beside the
   target (``.NAME.kerckhoffs-lock``) for the whole run; a second process aiming at the same
   target fails at once with one line instead of silently replacing the first one's output.
   The kernel drops the lock when a process dies, so a crash leaves no stale lock behind.
4. **Fail early and leave nothing behind.** Missing parent directories are created at claim
   time, which is also the writability check (an unwritable ``--out`` fails before the
   computation, not after it); whatever the claim created is removed again if the run ends
   without writing. The output is assembled in a hidden staging directory
   (``.NAME.kerckhoffs-staging-XXXXXXXX``) and renamed into place, so a failed run leaves no
   partial output, and it gets the permissions the user's umask gives (``mkdtemp`` alone
   would leave it 0700). A run killed outright (``kill -9``, a power cut) cannot clean up:
   the next run that claims the same target does, under the lock, so nobody else is writing
   them. It removes the staging directories left there, and a previous output moved aside
   for replacement (``.NAME.kerckhoffs-old-XXXXXXXX``) is put back when nothing took its
   place, else removed.

A process that already holds the claim on a target may claim it again (the CLI claims the
target before reading the data; :meth:`kerckhoffs.release.Release.write` claims it again).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kerckhoffs.data.io import load_json, read_regular, umask
from kerckhoffs.errors import (
    ANOTHER_OUT_HINT,
    OUT,
    REPLACE_HINT,
    InternalError,
    KerckhoffsError,
    Part,
    input_error,
)

LOCK_SUFFIX = ".kerckhoffs-lock"
STAGING_MARK = ".kerckhoffs-staging-"
"""After ``.NAME``, the name of a staging directory of target ``NAME``."""
OLD_MARK = ".kerckhoffs-old-"
"""After ``.NAME``, the name of a previous output moved aside while its replacement is renamed
into place."""

_HELD: dict[Path, OutputClaim] = {}


def apply_umask(path: Path, directory: bool) -> None:
    """Give ``path`` the mode a plain ``open``/``mkdir`` would have given it."""
    os.chmod(path, (0o777 if directory else 0o666) & ~umask())


# -- what may be replaced ----------------------------------------------------------------------
def _release_files(path: Path) -> set[str] | None:
    """Names a kerckhoffs release directory may hold, or None when it is not one."""
    meta = _json_file(path / "release.json")
    if not isinstance(meta, dict) or meta.get("format") != "kerckhoffs-release":
        return None
    files = meta.get("files", [])
    names = list(files) if isinstance(files, dict | list) else []
    return {"release.json", *(str(n) for n in names)}


def _json_file(path: Path) -> Any:
    """The JSON in ``path``, or None when it is missing, not a regular file (a FIFO would
    hang), too large, too deeply nested or not JSON (:func:`~kerckhoffs.data.io.load_json`)."""
    try:
        return load_json(read_regular(path), path)
    except (OSError, KerckhoffsError):
        return None


def _attack_files(path: Path) -> set[str] | None:
    summary = _json_file(path / "summary.json")
    if not isinstance(summary, dict) or "attack" not in summary:
        return None
    return {"tuples.csv", "summary.json"}


KINDS: dict[str, tuple[str, Callable[[Path], set[str] | None]]] = {
    "release": ("a kerckhoffs release", _release_files),
    "attack": ("kerckhoffs attack findings", _attack_files),
}


def _describe_refusal(target: Path, kind: str) -> str | None:
    """Why ``target`` may not be replaced by output of ``kind`` (None: it may), after the
    name of the option that gave it."""
    what, files_of = KINDS[kind]
    if not target.is_dir():
        return f"{target} exists and is not a directory; refusing to replace it"
    entries = sorted(p.name for p in target.iterdir())
    if not entries:
        return None
    allowed = files_of(target)
    if allowed is None:
        return f"{target} is not {what} (it holds {_some(entries)}); refusing to replace it"
    foreign = [e for e in entries if e not in allowed]
    if foreign:
        return (
            f"{target} holds files kerckhoffs did not write ({_some(foreign)}); "
            "refusing to replace it"
        )
    return None


def _some(names: list[str]) -> str:
    shown = ", ".join(names[:3])
    return shown + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)


def _resolve(path: Path) -> Path:
    return Path(os.path.abspath(path)).resolve()


# -- the claim ---------------------------------------------------------------------------------
@dataclass
class OutputClaim:
    """An exclusive claim on an output directory (see the module docstring)."""

    target: Path
    kind: str
    overwrite: bool
    created_dirs: list[Path] = field(default_factory=list)
    lock_path: Path | None = None
    lock_fd: int | None = None
    written: bool = False

    before_publish: Callable[[Path], None] | None = None
    """Called with the staging directory once its content is complete and checked, just
    before it is renamed into place; if it raises, nothing is published. A DP release charges
    its privacy ledger here (write-ahead: :mod:`kerckhoffs.dp.publish`)."""

    @contextlib.contextmanager
    def staging(self) -> Iterator[Path]:
        """A hidden temporary directory beside the target, renamed onto it if the block ends
        normally (after :attr:`before_publish`) and removed otherwise."""
        _check_replaceable(self.target, self.kind, self.overwrite)
        prefix = f".{self.target.name}{STAGING_MARK}"
        tmp = Path(tempfile.mkdtemp(prefix=prefix, dir=self.target.parent))
        try:
            yield tmp
            apply_umask(tmp, directory=True)
            if self.before_publish is not None:
                self.before_publish(tmp)
            old = None
            if self.target.exists():
                _check_replaceable(self.target, self.kind, self.overwrite)
                old = Path(
                    tempfile.mkdtemp(prefix=f".{self.target.name}{OLD_MARK}", dir=tmp.parent)
                )
                os.rmdir(old)
                os.replace(self.target, old)
            try:
                os.replace(tmp, self.target)
            except BaseException:
                if old is not None:  # put the previous output back where it was
                    os.replace(old, self.target)
                raise
            self.written = True
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise


def _ours(entry: os.DirEntry[str], prefix: str) -> bool:
    """A directory named ``prefix`` + 8 characters of :func:`tempfile.mkdtemp`, owned by this
    user and not a link: one a kerckhoffs run made."""
    if not entry.name.startswith(prefix) or len(entry.name) != len(prefix) + 8:
        return False
    try:
        return entry.is_dir(follow_symlinks=False) and entry.stat().st_uid == os.getuid()
    except OSError:
        return False


def clean_stale(target: Path) -> None:
    """Remove what runs killed while writing ``target`` left beside it (module docstring,
    rule 4). Call only while holding ``target``'s lock."""
    staging_prefix = f".{target.name}{STAGING_MARK}"
    old_prefix = f".{target.name}{OLD_MARK}"
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return
    for entry in entries:
        if _ours(entry, staging_prefix):
            shutil.rmtree(entry.path, ignore_errors=True)
    olds = sorted((e for e in entries if _ours(e, old_prefix)), key=lambda e: e.stat().st_mtime_ns)
    if olds and not target.exists() and not target.is_symlink():
        with contextlib.suppress(OSError):  # the previous output, moved aside: put it back
            os.replace(olds.pop().path, target)
    for entry in olds:
        shutil.rmtree(entry.path, ignore_errors=True)


def _check_replaceable(target: Path, kind: str, overwrite: bool) -> None:
    if not target.exists() and not target.is_symlink():
        return
    if target.is_symlink():
        raise input_error(OUT, f" {target} is a symbolic link; refusing to replace it")
    if target.is_dir() and not any(target.iterdir()):
        return
    if not overwrite:
        raise input_error(OUT, f" {target} already exists (", REPLACE_HINT, ")")
    reason = _describe_refusal(target, kind)
    if reason is not None:
        raise input_error(OUT, f" {reason}")


def _lock(claim: OutputClaim) -> None:
    """Take the exclusive lock beside the target, or fail with one line."""
    lock_path = claim.target.parent / f".{claim.target.name}{LOCK_SUFFIX}"
    while True:
        try:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o666 & ~umask())
        except OSError as exc:
            raise input_error(
                OUT, f" {claim.target}: cannot write in {claim.target.parent} ({exc.strerror})"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise input_error(
                    OUT,
                    f" {claim.target} is being written by another kerckhoffs process; "
                    "wait for it to finish or ",
                    ANOTHER_OUT_HINT,
                ) from None
            raise input_error(OUT, f" {claim.target}: cannot lock ({exc.strerror})") from None
        # the previous holder may have removed the file between our open and our lock
        try:
            same = os.fstat(fd).st_ino == os.stat(lock_path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            claim.lock_path, claim.lock_fd = lock_path, fd
            return
        os.close(fd)


def _release_claim(claim: OutputClaim) -> None:
    if claim.lock_fd is not None:
        if claim.lock_path is None:
            raise InternalError("an output lock is held without its path")
        with contextlib.suppress(OSError):
            os.unlink(claim.lock_path)
        os.close(claim.lock_fd)
        claim.lock_fd = None
    if not claim.written:
        for d in reversed(claim.created_dirs):
            with contextlib.suppress(OSError):
                d.rmdir()  # only if still empty: never what someone else put there


def _make_parents(claim: OutputClaim) -> None:
    missing = []
    d = claim.target.parent
    while not d.exists():
        if d.is_symlink():
            break
        missing.append(d)
        d = d.parent
    if d.exists() and not d.is_dir():
        raise input_error(OUT, f" {claim.target}: {d} is not a directory")
    for m in reversed(missing):
        try:
            m.mkdir()
        except FileExistsError:
            continue
        except OSError as exc:
            _release_claim(claim)
            raise input_error(OUT, f" {claim.target}: cannot create {m} ({exc.strerror})") from None
        claim.created_dirs.append(m)


@contextlib.contextmanager
def output_directory(
    target: str | Path,
    *,
    kind: str = "release",
    overwrite: bool = False,
    protect: Iterable[str | Path | None] = (),
) -> Iterator[OutputClaim]:
    """Claim ``target`` for output of ``kind`` (``release`` | ``attack``) for the block.

    Raises :class:`~kerckhoffs.errors.InputError` (one line) when the target may not be
    written: it exists without ``overwrite``, is not a kerckhoffs output of that kind, holds
    files kerckhoffs did not write, is or contains a ``protect``-ed path (the inputs) or the
    current directory, cannot be created, or another process holds it. Write into
    ``claim.staging()``.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown output kind {kind!r}")
    target = Path(target)
    resolved = _resolve(target)
    held = _HELD.get(resolved)
    if held is not None:  # this process claimed it already (CLI, then Release.write)
        yield held
        return
    for p in [*(Path(x) for x in protect if x is not None), Path.cwd()]:
        if _inside(_resolve(p), resolved):
            what = "the current directory" if p == Path.cwd() else f"the input {p}"
            raise input_error(
                OUT, f" {target} contains {what}; refusing to write there (choose a new folder)"
            )
    if target.exists() or target.is_symlink():
        _check_replaceable(target, kind, overwrite)
    claim = OutputClaim(target, kind, overwrite)
    _make_parents(claim)
    try:
        _lock(claim)
    except BaseException:
        _release_claim(claim)
        raise
    _HELD[resolved] = claim
    try:
        clean_stale(target)
        # checked again under the lock: another process may have written it meanwhile
        _check_replaceable(target, kind, overwrite)
        yield claim
    finally:
        _HELD.pop(resolved, None)
        _release_claim(claim)


def check_writable_file(
    target: str | Path,
    *,
    overwrite: bool,
    protect: Iterable[str | Path | None] = (),
    flag: Part = OUT,
) -> None:
    """Fail early (one line, naming the option ``flag``) when ``target`` cannot be written as
    a new or replaced file.

    Refused: a directory, an existing file without ``overwrite``, one of the ``protect``-ed
    input files, a place under a file, or a folder where no file can be created (tried for
    real with a temporary file, removed at once: permission bits do not bind root).
    """
    target = Path(target)
    if target.is_dir():
        raise input_error(flag, f" {target} is a directory; give a file name")
    if target.exists() and not overwrite:
        raise input_error(flag, f" {target} already exists (", REPLACE_HINT, ")")
    resolved = _resolve(target)
    for p in protect:
        if p is not None and resolved == _resolve(Path(p)):
            raise input_error(flag, f" {target} is an input ({p}); refusing to replace it")
    d = target.parent
    while not d.exists() and not d.is_symlink():
        d = d.parent
    if not d.is_dir():
        raise input_error(flag, f" {target}: {d} is not a directory")
    try:
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", dir=d)
    except OSError as exc:
        raise input_error(flag, f" {target}: cannot write in {d} ({exc.strerror})") from None
    os.close(fd)
    os.unlink(name)


def check_private_file(
    target: str | Path,
    *,
    flag: str,
    out_dir: str | Path | None = None,
    protect: Iterable[str | Path | None] = (),
) -> Path:
    """The real path (symbolic links resolved) of a private file to be written, such as a
    privacy ledger or a providers file, or a one-line error (naming the option ``flag``) when
    writing there could publish it or destroy something.

    Refused: a path inside ``out_dir`` (the release being written) or inside any folder that
    holds a ``release.json`` (another release: whoever copies that folder would publish the
    file with it), a path that is ``out_dir`` or one of its ancestors (the release's folders
    are made there), a directory or anything else that is not a regular file (a FIFO or a
    device would hang or never end), and one of the ``protect``-ed inputs.
    """
    given = Path(target)
    real = Path(os.path.realpath(given))
    if out_dir is not None:
        out = Path(os.path.realpath(out_dir))
        if _inside(real, out):
            raise input_error(
                f"{flag} {given} is inside the release directory {out_dir}: a private file "
                "must never be published; keep it elsewhere"
            )
        if _inside(out, real):
            raise input_error(
                f"{flag} {given} is a folder the release {out_dir} is written into; give a "
                "file elsewhere"
            )
    for folder in real.parents:
        with contextlib.suppress(OSError):
            if (folder / "release.json").is_file():
                raise input_error(
                    f"{flag} {given} is inside {folder}, a folder holding a release "
                    "(release.json): a private file must never be published with it; keep "
                    "it elsewhere"
                )
    try:
        st = os.stat(real)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise input_error(f"{flag} {given}: {exc.strerror}") from None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise input_error(f"{flag} {given} is a directory; give a file name")
        if not stat.S_ISREG(st.st_mode):
            raise input_error(
                f"{flag} {given} is not a regular file (a FIFO, a device or a socket); "
                "refusing to read or replace it"
            )
    for p in protect:
        if p is not None and real == Path(os.path.realpath(p)):
            raise input_error(f"{flag} {given} is an input ({p}); refusing to replace it")
    return real


__all__ = [
    "OutputClaim",
    "apply_umask",
    "check_private_file",
    "check_writable_file",
    "clean_stale",
    "output_directory",
    "umask",
]
