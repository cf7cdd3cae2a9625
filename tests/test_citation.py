"""CITATION.cff is valid YAML in the CFF 1.2.0 shape, agrees with pyproject.toml and cites the
five papers with the titles and authors the papers print."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[1]
PAPERS = ROOT.parent / "shared" / "papers" / "README.md"


@pytest.fixture(scope="module")
def cff() -> dict:
    return yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))


def test_software_entry_matches_the_package(cff: dict) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert cff["cff-version"] == "1.2.0"
    assert cff["type"] == "software"
    assert cff["message"] and cff["title"].startswith("kerckhoffs")
    assert cff["authors"]
    assert cff["version"] == project["version"]
    assert cff["license"] == project["license"]


def test_five_references_with_titles_authors_and_years(cff: dict) -> None:
    refs = cff["references"]
    assert len(refs) == 5
    assert sorted(r["notes"] for r in refs) == [f"paper 00{i}" for i in range(5)]
    for r in refs:
        assert r["type"] in {"article", "conference-paper"}
        assert isinstance(r["title"], str) and r["title"].strip()
        assert r["authors"] and all(a["family-names"] and a["given-names"] for a in r["authors"])
        assert isinstance(r["year"], int) and 2005 <= r["year"] <= 2012
        assert r.get("journal") or r.get("conference", {}).get("name")


@pytest.mark.skipif(not PAPERS.is_file(), reason="no shared/papers index")
def test_titles_and_authors_as_the_papers_index_gives_them(cff: dict) -> None:
    rows = {}
    for line in PAPERS.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0][:3].isdigit() and cells[0].endswith(".txt"):
            rows[f"paper {cells[0][:3]}"] = cells[1]
    assert len(rows) == 5
    for r in cff["references"]:
        cell = rows[r["notes"]]
        authors, _, rest = cell.partition(". ")
        assert rest.startswith(r["title"]), (r["notes"], r["title"], cell)
        assert authors.split(", ") == [a["family-names"] for a in r["authors"]]
