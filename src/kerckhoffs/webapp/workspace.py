"""The folder the app was started on: every path the app reads or writes is resolved
(symlinks too) and refused when it leads outside it, and the app remembers what it created
there (it never deletes or replaces anything else).

A browser page on another site can ask a local server for any path it likes; a path such as
``../../etc/passwd`` or a symlink planted in the folder must not reach a file outside it
(OWASP, "Path Traversal").
"""

from __future__ import annotations

import re
from pathlib import Path

from kerckhoffs.errors import InputError

DATA_SUFFIXES = (".csv", ".parquet")
"""The tables the app opens."""

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


class OutsideFolder(InputError):
    """A path that resolves outside the app's folder (directly, through ``..`` or a symlink)."""


class Workspace:
    """The folder ``root`` (resolved once) and what the app created in it."""

    def __init__(self, root: str | Path) -> None:
        path = Path(root)
        if not path.is_dir():
            raise InputError(f"{root}: not a folder (give the folder the app works in)")
        self.root = path.resolve(strict=True)
        self.created: set[Path] = set()

    def resolve(self, relative: str | Path) -> Path:
        """``relative`` (to the folder) resolved, symlinks followed; refused in one line when
        it lands outside the folder."""
        text = str(relative)
        if "\x00" in text:
            raise OutsideFolder(f"{text!r}: not a path")
        path = (self.root / text).resolve(strict=False)
        if not path.is_relative_to(self.root):
            raise OutsideFolder(
                f"{text}: outside the folder the app was started on ({self.root}); "
                "the app reads and writes only inside it"
            )
        return path

    def existing_file(self, relative: str | Path) -> Path:
        """A file inside the folder that exists (:meth:`resolve`, then a plain file)."""
        path = self.resolve(relative)
        if not path.is_file():
            raise InputError(f"{relative}: no such file in {self.root}")
        return path

    def relative(self, path: Path) -> str:
        """``path`` relative to the folder, as shown on the pages."""
        return path.relative_to(self.root).as_posix()

    def files(self, suffixes: tuple[str, ...], limit: int = 200) -> list[str]:
        """Files with these suffixes in the folder and its subfolders (symlinks leading out
        left out), sorted, at most ``limit``."""
        found = []
        for path in sorted(self.root.rglob("*")):
            if path.suffix.lower() not in suffixes or not path.is_file():
                continue
            if any(part.startswith(".") for part in path.relative_to(self.root).parts):
                continue
            if path.resolve().is_relative_to(self.root):
                found.append(self.relative(path))
            if len(found) >= limit:
                break
        return found

    def new_file(self, name: str, suffixes: tuple[str, ...] = DATA_SUFFIXES) -> Path:
        """A path for a new file called ``name`` (a plain file name, no folder) in the folder:
        ``name-2.csv``, ``name-3.csv``... when it is taken, so nothing is replaced."""
        base = Path(name).name
        if not _NAME.match(base) or Path(base).suffix.lower() not in suffixes:
            raise InputError(
                f"{name!r}: give a plain file name ending in {' or '.join(suffixes)} "
                "(letters, digits, . _ -)"
            )
        stem, suffix = Path(base).stem, Path(base).suffix
        path = self.resolve(base)
        n = 2
        while path.exists() or path.is_symlink():
            path = self.resolve(f"{stem}-{n}{suffix}")
            n += 1
        return path

    def new_dir(self, name: str) -> Path:
        """A path for a new folder called ``name`` under ``releases/`` (refused if it exists:
        the app never replaces what it did not create)."""
        if not _NAME.match(name) or name.startswith("."):
            raise InputError(f"{name!r}: give a plain name (letters, digits, . _ -)")
        path = self.resolve(f"releases/{name}")
        if path.exists() or path.is_symlink():
            raise InputError(f"releases/{name} exists: choose another name")
        return path

    def remember(self, path: Path) -> Path:
        """Note that the app created ``path``."""
        self.created.add(path)
        return path
