"""The local web app in a real browser: Playwright driving Debian's Chromium
(``/usr/bin/chromium``; Playwright's own browser download is not reachable from our machines)
clicks through a steward's workflow on generated hospital data: upload a table, assign roles and
build a hierarchy, run Mondrian k=5 and Mondrian+ with progress, read the verdicts, compare the
two, write the release, download it and its report, and check the downloaded release with
``kerckhoffs check``. One browser and one server for the module.

Without ``/usr/bin/chromium`` (or the ``playwright`` package) the tests skip with the reason,
unless ``KERCKHOFFS_REQUIRE_BROWSER=1`` (what ``.ci/run`` sets), when they fail. Screenshots of
each step go to ``KERCKHOFFS_APP_SHOTS`` (a folder) when it is set.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import kerckhoffs as kh
from kerckhoffs.cli.app import run as cli_run
from kerckhoffs.datasets import generate_hospital

CHROMIUM = Path("/usr/bin/chromium")
REQUIRED = os.environ.get("KERCKHOFFS_REQUIRE_BROWSER") == "1"


def _missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if not CHROMIUM.is_file():
        return f"{CHROMIUM} is missing (apt-get install chromium)"
    for module in ("playwright", "starlette", "uvicorn", "python_multipart"):
        try:
            __import__(module)
        except ImportError:
            return f"the {module} package is missing (pip install '.[test]')"
    return None


WHY = _missing()
if WHY is not None and REQUIRED:
    pytest.fail(f"KERCKHOFFS_REQUIRE_BROWSER=1 but {WHY}", pytrace=False)
pytestmark = pytest.mark.skipif(WHY is not None, reason=WHY or "")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The app on a free local port, over an empty folder, in a thread of this process."""
    import uvicorn

    from kerckhoffs.webapp import create_app

    folder = tmp_path_factory.mktemp("app")
    port = _free_port()
    app = create_app(folder, port=port)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    for _ in range(200):
        if srv.started:
            break
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}", folder
    srv.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def page(server: tuple[str, Path]) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM),
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--no-first-run",
            ],
        )
        context = browser.new_context(
            viewport={"width": 1280, "height": 900}, accept_downloads=True
        )
        yield context.new_page()
        browser.close()


def _shot(page: Any, name: str) -> None:
    where = os.environ.get("KERCKHOFFS_APP_SHOTS")
    if where:
        Path(where).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(where) / f"{name}.png"), full_page=True)


def _run(page: Any, base: str, algorithm: str, models: str) -> str:
    """Choose ``algorithm`` with ``models`` on the algorithm page, run it, wait for its
    verdicts; the run page's URL."""
    page.goto(f"{base}/configure")
    page.check(f"input[name=algorithm][value='{algorithm}']")
    page.fill("#models", models)
    page.click("#run-button")
    page.wait_for_selector("#verdicts", timeout=60_000)
    return str(page.url)


def test_a_steward_clicks_through_the_workflow(
    server: tuple[str, Path], page: Any, tmp_path: Path
) -> None:
    base, folder = server
    source = tmp_path / "hospital.csv"
    generate_hospital(300, seed=3).to_csv(source, index=False)

    page.goto(base)
    _shot(page, "01-start")
    page.set_input_files("#upload-file", str(source))
    page.click("#upload-button")
    page.wait_for_selector("#roles-form")
    assert (folder / "hospital.csv").read_bytes() == source.read_bytes()  # saved into the folder
    for column, role in [("patient_id", "identifier"), ("nationality", "other")]:
        page.select_option(f"#role-{column}", role)
    page.select_option("#role-disease", "sensitive")
    for column in ("age", "sex", "zip"):
        page.select_option(f"#role-{column}", "quasi")
    page.select_option("#hier-zip", "masking")
    page.fill("#param-zip", "1, 2")
    _shot(page, "02-roles")
    page.click("#roles-button")
    page.wait_for_selector("#run-form")
    safe = page.locator(".algo:has(.safe) strong").all_inner_texts()
    assert "mondrian+" in safe and "mondrian" not in safe
    _shot(page, "03-algorithm")

    first = _run(page, base, "mondrian", "k=5")
    verdicts = page.inner_text("#verdicts")
    assert "k-anonymity k=5" in verdicts and "ok: achieved" in verdicts
    _shot(page, "04-run-mondrian")
    second = _run(page, base, "mondrian+", "k=5 l=2")
    assert "l-diversity l=2" in page.inner_text("#verdicts")

    page.goto(f"{base}/compare")
    table = page.inner_text("#compare-table")
    assert "prosecutor risk, highest" in table and "information loss" in table
    assert page.locator("figure.plot svg").count() == 1
    _shot(page, "05-compare")

    page.goto(first)
    page.fill("#release-name", "mondrian-k5")
    page.click("#write-button")
    page.wait_for_selector("#written")
    with page.expect_download() as got:
        page.click("#download-release")
    zipped = tmp_path / "release.zip"
    got.value.save_as(zipped)
    with page.expect_download() as got:
        page.click("#download-report")
    report = tmp_path / "report.html"
    got.value.save_as(report)
    _shot(page, "06-written")
    page.goto(f"{first}/report")
    _shot(page, "07-report")

    zipfile.ZipFile(zipped).extractall(tmp_path / "out")
    release = tmp_path / "out" / "mondrian-k5"
    assert cli_run(["check", str(release), "--model", "k=5"]) == 0
    shown = kh.measure(kh.read_release(release))
    page.goto(first)
    numbers = page.inner_text("#numbers")
    assert f"{100 * shown.risk.prosecutor_highest:.4g} %" in numbers
    assert f"groups\t{shown.groups}" in numbers
    html = report.read_text()
    assert "<script" not in html and "http://" not in html and "https://" not in html
    assert second != first
