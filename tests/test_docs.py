"""The documentation site builds without a warning, documents the API and lists every page;
the guide pages' command-line examples run as printed.

The site is built once per test session with ``mkdocs build --strict`` (any warning fails the
build), from the worktree's sources: the API reference is read from ``src/`` by static
analysis, so nothing is imported. The build takes about 5 s of CPU, so the two tests that
read the built site run with ``pytest -m slow`` (the default suite keeps to three minutes of
CPU); the navigation check needs no build and stays in the default suite.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mkdocs")
yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
EXCLUDED = ("_ext",)  # mkdocs.yml's exclude_docs: code used by the build, not pages
ROLE = re.compile(r":(?:class|meth|func|mod|attr|data|exc|obj):(?:`|<code>)")  # raw, in HTML


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # a banner, not a build warning
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "WARNING" not in proc.stderr, proc.stderr[-4000:]
    return out


def page(site: Path, name: str) -> str:
    return (site / name / "index.html").read_text(encoding="utf-8")


@pytest.mark.slow
def test_reference_documents_the_api(site: Path) -> None:
    release = page(site, "reference/release")
    data = page(site, "reference/data")
    # mkdocstrings gives every documented object an anchor named by its full path
    for anchor in (
        "kerckhoffs.release.Release",
        "kerckhoffs.release.Release.write",
        "kerckhoffs.release.Release.from_published",
        "kerckhoffs.release.Partition",
    ):
        assert f'id="{anchor}"' in release, anchor
    for anchor in (
        "kerckhoffs.data.schema.Schema",
        "kerckhoffs.data.schema.Schema.build",
        "kerckhoffs.data.table.Table.encode",
        "kerckhoffs.data.hierarchy.Hierarchy",
    ):
        assert f'id="{anchor}"' in data, anchor
    assert 'id="kerckhoffs.attacks.result.AttackResult"' in page(site, "reference/attacks")
    assert 'id="kerckhoffs.models.k_anonymity.KAnonymity"' in page(site, "reference/models")
    assert 'id="kerckhoffs.metrics.ncp.ncp"' in page(site, "reference/metrics")


@pytest.mark.slow
def test_sphinx_markup_is_rendered(site: Path) -> None:
    pages = sorted((site / "reference").glob("*/index.html"))
    assert len(pages) >= 8
    for p in pages:
        html = p.read_text(encoding="utf-8")
        assert not ROLE.search(html), f"raw Sphinx role left in {p.parent.name}"
    release = page(site, "reference/release")
    # ":meth:`Release.from_frames`" in the module docstring is a link to the method
    assert re.search(
        r'<a [^>]*href="#kerckhoffs\.release\.Release\.from_frames"[^>]*>'
        r"<code>Release\.from_frames</code></a>",
        release,
    )
    data = page(site, "reference/data")
    # "read from TOML::" becomes "read from TOML:" followed by a code block
    assert 'read from TOML:</p>\n<div class="highlight"><pre>' in data
    assert "TOML::" not in data
    # a doctest is a code block, not a paragraph
    errors = page(site, "reference/errors")
    assert '<span class="gp">&gt;&gt;&gt; </span><span class="n">generator</span>' in errors


def nav_pages(node: object) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, list):
        return [p for item in node for p in nav_pages(item)]
    if isinstance(node, dict):
        return [p for value in node.values() for p in nav_pages(value)]
    return []


def test_every_docs_file_is_in_the_nav() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    nav = nav_pages(config["nav"])
    assert len(nav) == len(set(nav)), "a page is listed twice"
    files = {
        p.relative_to(DOCS).as_posix()
        for p in DOCS.rglob("*")
        if p.is_file() and p.relative_to(DOCS).parts[0] not in EXCLUDED
    }
    assert files == set(nav)
    for folder in EXCLUDED:
        assert f"{folder}/" in config["exclude_docs"]


GUIDES_RUN = ("guide/mprivacy.md", "guide/disclosure.md", "guide/dp.md", "guide/report.md")
"""Guide pages whose shell blocks this file runs (their Python blocks run in test_readme.py,
with every other guide page's)."""
PREPARE = "kerckhoffs datasets prepare demo --rows 2000 --seed 0 --out hospital.csv --overwrite"
"""What the guide pages read besides ``examples/``: the README's generated hospital table."""


def shell_commands(page: str, fence: str = "bash") -> list[str]:
    """The commands of a page's ``bash`` blocks (or ``fence`` blocks: ``sh`` holds the
    examples on the real data beside the project, run under ``-m slow``), continuation lines
    joined, comments skipped."""
    text = (DOCS / page).read_text(encoding="utf-8")
    out, current = [], ""
    for block in re.findall(rf"```{fence}\n(.*?)```", text, flags=re.S):
        for line in block.splitlines():
            if not current and (not line.strip() or line.lstrip().startswith("#")):
                continue
            current += line[:-1] if line.endswith("\\") else line
            if not line.endswith("\\"):
                out.append(current)
                current = ""
    return out


def test_guide_pages_show_commands() -> None:
    for page in GUIDES_RUN:
        assert len(shell_commands(page)) >= 3, page


def test_guide_commands_run_as_printed(
    tmp_path_factory: pytest.TempPathFactory, warm_cli: object
) -> None:
    """Each page's commands, in order, in a fresh folder holding a copy of ``examples/`` and
    the generated hospital table: exit 0, or 1 where the comment says ``exit 1`` (a privacy
    verdict, or a safe strategy that releases nothing); never a traceback, and an ``error:``
    line only with exit 1. Plain ``kerckhoffs`` calls run in children forked from the warm
    server (:mod:`warm_cli`), anything with shell syntax with ``bash``."""
    from warm_cli import WarmCli, argv_of

    assert isinstance(warm_cli, WarmCli)
    folder = tmp_path_factory.mktemp("guides")
    shutil.copytree(ROOT / "examples", folder / "examples")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    for page, command in [("setup", PREPARE)] + [
        (p, c) for p in GUIDES_RUN for c in shell_commands(p)
    ]:
        argv = argv_of(command)
        if argv is not None:
            done = warm_cli.run(argv, folder)
        else:
            done = subprocess.run(
                ["bash", "-c", command],
                cwd=folder,
                capture_output=True,
                text=True,
                env=env,
                timeout=300,
            )
        want = 1 if re.search(r"\bexit 1\b", command.partition(" #")[2]) else 0
        where = f"{page}: {command}\nstdout: {done.stdout[-1500:]}\nstderr: {done.stderr[-1500:]}"
        assert "Traceback" not in done.stdout + done.stderr, where
        assert done.returncode == want, f"exit {done.returncode}, page says {want}: {where}"
        if want == 0:
            assert not any(ln.startswith("error:") for ln in done.stderr.splitlines()), where


def test_theory_pages_cite_their_paper_and_list_its_errors() -> None:
    """Each paper's theory page opens with the paper's full citation (a quote block) and
    has the anchor ``#errors`` (the paper's errors and our resolutions) that docstrings
    point to."""
    pages = sorted((DOCS / "theory").glob("*.md"))
    papers = [p for p in pages if p.stem not in {"index", "choices"}]
    assert len(papers) == 5
    for page in papers:
        head = page.read_text(encoding="utf-8").split("\n## ", 1)[0]
        assert re.search(r"^> .+\d{4}\.$", head, flags=re.M), page.name
        assert "{#errors}" in page.read_text(encoding="utf-8"), page.name


@pytest.mark.slow
def test_guide_adult_commands_run(tmp_path: Path) -> None:
    """The DP guide's worked examples on Adult run as printed, in order, in a folder beside
    which ``../shared`` is the real data (as in a clone of the project), exit 0 each, with no
    traceback and no ``error:`` line."""
    shared = ROOT.parent / "shared"
    if not (shared / "data" / "adult").is_dir():
        pytest.skip("../shared/data/adult is not beside the project")
    folder = tmp_path / "project"
    folder.mkdir()
    (tmp_path / "shared").symlink_to(shared)
    shutil.copytree(ROOT / "examples", folder / "examples")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    commands = shell_commands("guide/dp.md", fence="sh")
    assert len(commands) >= 3
    for command in commands:
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=folder,
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )
        where = f"{command}\nstdout: {done.stdout[-1500:]}\nstderr: {done.stderr[-1500:]}"
        assert "Traceback" not in done.stdout + done.stderr, where
        assert done.returncode == 0, where
        assert not any(ln.startswith("error:") for ln in done.stderr.splitlines()), where
