"""Every reference in the sources is one a reader of the repository can follow.

The papers are cited by number (their full citations are at the top of each theory page,
``docs/theory/``), and where our explanation is needed a docstring points at a docs page
with its anchor, written as a repository path (``docs/theory/asap.md#hilb-plus``). The
codes of the specification the project was built from (``spec asap.md 2.6``, ``AMB-11``)
and issue numbers point at documents outside the repository, so none may appear.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "kerckhoffs"
DOCS = ROOT / "docs"

UNREADABLE = re.compile(r"spec [a-z_]+\.md|AMB-[0-9]|issue [0-9]+")
"""The issue's own test of "a reference a reader cannot open"."""
DOC_LINK = re.compile(r"docs/([\w/.-]+\.md)(?:#([\w-]+))?")
EXPLICIT_ID = re.compile(r"\{#([\w-]+)[^}]*\}|\bid=\"([\w-]+)\"")
HEADING = re.compile(r"^#{1,6} +(.+?)\s*$", re.M)


def anchors(page: Path) -> set[str]:
    """A page's anchors: explicit ids, and the toc extension's slug of every other heading."""
    from markdown.extensions.toc import slugify  # the slug mkdocs gives a heading

    text = page.read_text(encoding="utf-8")
    found = {a or b for a, b in EXPLICIT_ID.findall(text)}
    for heading in HEADING.findall(text):
        if "{#" not in heading:
            found.add(slugify(heading, "-"))
    return found


def sources() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


def test_no_reference_a_reader_cannot_open() -> None:
    hits = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in sources()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if UNREADABLE.search(line)
    ]
    assert hits == []


def test_every_docs_reference_resolves_to_a_page_and_anchor() -> None:
    cache: dict[Path, set[str]] = {}
    broken = []
    for path in sources():
        for page, anchor in DOC_LINK.findall(path.read_text(encoding="utf-8")):
            target = DOCS / page
            if not target.is_file():
                broken.append(f"{path.relative_to(ROOT)}: docs/{page} (no such page)")
                continue
            if anchor and anchor not in cache.setdefault(target, anchors(target)):
                broken.append(f"{path.relative_to(ROOT)}: docs/{page}#{anchor} (no such anchor)")
    assert broken == []


def test_the_checks_can_fail(tmp_path: Path) -> None:
    """A spec code is found, and a docs link to a missing anchor is told from a real one."""
    assert UNREADABLE.search("see spec asap.md 2.6") and UNREADABLE.search("[AMB-11]")
    assert not UNREADABLE.search("paper 000, Algorithm 2 (Hilb+)")
    page = tmp_path / "p.md"
    page.write_text('# Hilb+ {#hilb-plus}\n\n## The walk\n| <span id="err-x"></span> |\n')
    assert anchors(page) == {"hilb-plus", "the-walk", "err-x"}
