"""The local web app's guards and workflow at the route level (Starlette's TestClient, no
browser): paths outside the folder (directly, by ``..``, absolute, through a symlink) refused,
requests addressed to another host refused (DNS rebinding), state-changing requests without
the per-process token or from another origin refused, a non-local bind refused without
``--allow-remote``; what the pages show equals what the library computes. The browser tests are
``tests/test_webapp_browser.py``."""

from __future__ import annotations

import io
import time
import warnings
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

with warnings.catch_warnings():  # starlette's notice that httpx has a successor
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

import kerckhoffs as kh
from kerckhoffs.cli.app import run as cli_run
from kerckhoffs.cli.webapp import demo_files
from kerckhoffs.datasets import generate_hospital
from kerckhoffs.errors import ParameterError
from kerckhoffs.webapp import create_app
from kerckhoffs.webapp.security import allowed_hosts, check_bind, is_loopback
from kerckhoffs.webapp.workflow import algorithm_choices
from kerckhoffs.webapp.workspace import OutsideFolder, Workspace

TOKEN = "test-token"
BASE = "http://127.0.0.1:8765"


def _client(folder: Path) -> TestClient:
    return TestClient(create_app(folder, port=8765, token=TOKEN), base_url=BASE)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    generate_hospital(300, seed=1).to_csv(work / "hospital.csv", index=False)
    (tmp_path / "secret.csv").write_text("a,b\n1,2\n")
    return work


# -- paths --------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["../secret.csv", "sub/../../secret.csv", "/etc/passwd"])
def test_a_path_outside_the_folder_is_refused(folder: Path, path: str) -> None:
    client = _client(folder)
    r = client.post("/open", data={"token": TOKEN, "path": path})
    assert r.status_code == 403
    assert "outside the folder the app was started on" in r.text


def test_a_symlink_leading_out_is_refused_and_not_listed(folder: Path) -> None:
    (folder / "link.csv").symlink_to(folder.parent / "secret.csv")
    (folder / "dir").symlink_to(folder.parent, target_is_directory=True)
    client = _client(folder)
    for path in ("link.csv", "dir/secret.csv"):
        r = client.post("/open", data={"token": TOKEN, "path": path})
        assert r.status_code == 403 and "outside the folder" in r.text
    page = client.get("/").text
    assert "hospital.csv" in page and "link.csv" not in page and "secret" not in page


def test_the_workspace_resolves_inside_and_refuses_outside(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    assert ws.resolve("a/../b.csv") == tmp_path.resolve() / "b.csv"
    with pytest.raises(OutsideFolder):
        ws.resolve("..")
    with pytest.raises(OutsideFolder):
        ws.resolve(str(tmp_path.parent / "x.csv"))


def test_an_upload_never_replaces_a_file(folder: Path) -> None:
    before = (folder / "hospital.csv").read_bytes()
    client = _client(folder)
    files = {"file": ("hospital.csv", b"x,y\n1,2\n", "text/csv")}
    r = client.post("/upload", data={"token": TOKEN}, files=files, follow_redirects=False)
    assert r.status_code == 303, r.text
    assert (folder / "hospital.csv").read_bytes() == before
    assert (folder / "hospital-2.csv").read_bytes() == b"x,y\n1,2\n"
    bad = {"file": ("../evil.csv", b"x\n1\n", "text/csv")}
    client.post("/upload", data={"token": TOKEN}, files=bad)
    assert not (folder.parent / "evil.csv").exists()


# -- requests from elsewhere --------------------------------------------------------------------
def test_a_request_for_another_host_is_refused(folder: Path) -> None:
    client = _client(folder)
    assert client.get("/").status_code == 200
    assert client.get("/", headers={"host": "localhost:8765"}).status_code == 200
    for host in ("evil.example:8765", "127.0.0.1:9999", "127.0.0.1"):
        r = client.get("/", headers={"host": host})
        assert r.status_code == 403 and "local address" in r.text, host


def test_a_post_without_the_token_or_from_another_origin_is_refused(folder: Path) -> None:
    client = _client(folder)
    for data, headers in [
        ({"path": "hospital.csv"}, {}),
        ({"path": "hospital.csv", "token": "guess"}, {}),
        ({"path": "hospital.csv", "token": TOKEN}, {"origin": "http://evil.example"}),
    ]:
        r = client.post("/open", data=data, headers=headers, follow_redirects=False)
        assert r.status_code == 403 and "refused" in r.text
    assert client.get("/roles", follow_redirects=False).status_code == 303  # nothing opened
    ok = client.post("/open", data={"path": "hospital.csv", "token": TOKEN}, follow_redirects=False)
    assert ok.status_code == 303


def test_every_page_forbids_other_origins_and_inline_script(folder: Path) -> None:
    policy = _client(folder).get("/").headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy
    assert "unsafe-inline" not in policy.split("script-src")[1].split(";")[0]


def test_a_non_local_bind_is_refused_unless_asked(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.2")
    with pytest.raises(ParameterError, match="--allow-remote"):
        check_bind("0.0.0.0", allow_remote=False)
    check_bind("0.0.0.0", allow_remote=True)
    assert cli_run(["app", str(folder), "--host", "0.0.0.0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert (
        len(err) == 1 and err[0].startswith("error: --host 0.0.0.0") and "--allow-remote" in err[0]
    )
    assert allowed_hosts("0.0.0.0", 80) is None
    assert allowed_hosts("127.0.0.1", 8765) == {
        "127.0.0.1:8765",
        "localhost:8765",
        "[::1]:8765",
    }


def test_a_port_in_use_is_one_error_line_before_any_demo_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = cli_run(["app", "--demo", str(tmp_path / "demo"), "--port", str(port)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith(f"error: --port {port}:"), err
    assert not (tmp_path / "demo").exists()


def test_demo_files_are_made_once_and_never_replaced(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    made = demo_files(folder)
    assert len(made) == 5 and (folder / "schema.toml").is_file()
    (folder / "hospital.csv").write_text("mine\n")
    assert demo_files(folder) == []
    assert (folder / "hospital.csv").read_text() == "mine\n"
    schema = kh.api.Schema.from_toml(folder / "schema.toml")
    assert [c.name for c in schema.quasi] == ["age", "sex", "zip", "nationality"]


def test_the_algorithms_marked_safe_are_the_registrys() -> None:
    """Hand-listed from paper 000 (Theorems 5.3, 5.4 and 7.2): Anatomy with a random tuple
    choice, the look-ahead variants and their pick-up are algorithm-safe, the originals and
    literal Hilb+ are not; DP's guarantee assumes the adversary knows the mechanism."""
    marked = {a.name: a.algorithm_safe for a in algorithm_choices()}
    safe = {"anatomy", "mondrian+", "mondrian++", "hilb+strict", "hilb++strict", "mask+",
            "mask++", "dp-histogram", "dp-marginals", "dp-rr", "dp-synthetic"}  # fmt: skip
    assert {name for name, s in marked.items() if s} == safe
    assert list(marked)[: sum(marked.values())] == [n for n, s in marked.items() if s]


# -- the workflow ---------------------------------------------------------------------------------
def _wait(client: TestClient, job: int) -> dict[str, object]:
    for _ in range(600):
        status = client.get(f"/runs/{job}/status").json()
        if status["state"] != "running":
            return status
        time.sleep(0.05)
    raise AssertionError("the run did not finish")


def test_run_write_and_download_show_the_librarys_numbers(folder: Path) -> None:
    client = _client(folder)
    client.post("/open", data={"token": TOKEN, "path": "hospital.csv"})
    roles = {"role0": "identifier", "role1": "quasi", "role2": "quasi", "role3": "quasi"}
    roles |= {"role4": "other", "role5": "sensitive", "hier3": "masking", "param3": "1, 2"}
    r = client.post("/roles", data={"token": TOKEN, **roles}, follow_redirects=False)
    assert r.headers["location"] == "/configure", r.text
    r = client.post(
        "/run",
        data={"token": TOKEN, "algorithm": "mondrian", "models": "k=5"},
        follow_redirects=False,
    )
    job = int(r.headers["location"].rsplit("/", 1)[1])
    assert _wait(client, job)["state"] == "done"
    page = client.get(f"/runs/{job}").text
    assert "k-anonymity k=5" in page and "ok: achieved" in page
    r = client.post(f"/runs/{job}/write", data={"token": TOKEN, "name": "first"})
    assert r.status_code == 200 and "download-release" in r.text
    again = client.post(f"/runs/{job}/write", data={"token": TOKEN, "name": "first"})
    assert again.status_code == 400 and "exists" in again.text
    zipped = client.get(f"/runs/{job}/download/release").content
    out = folder.parent / "downloaded"
    zipfile.ZipFile(io.BytesIO(zipped)).extractall(out)
    release = kh.read_release(out / "first")
    shown = kh.measure(release)
    assert f"<td>{shown.k}</td>" in page and f"<td>{shown.groups}</td>" in page
    assert f"{100 * shown.risk.prosecutor_highest:.4g} %" in page
    report = client.get(f"/runs/{job}/download/report").text
    assert "<script" not in report and "http://" not in report and "https://" not in report


def test_a_schema_naming_a_hierarchy_outside_the_folder_is_refused(folder: Path) -> None:
    (folder.parent / "zip.csv").write_text("02116;*\n")
    (folder / "schema.toml").write_text(
        '[columns.zip]\nrole = "quasi"\nhierarchy = "../zip.csv"\n'
        '[columns.disease]\nrole = "sensitive"\n'
    )
    client = _client(folder)
    client.post("/open", data={"token": TOKEN, "path": "hospital.csv"})
    r = client.post("/schema", data={"token": TOKEN, "path": "schema.toml"})
    assert r.status_code == 403 and "outside the folder" in r.text
    assert client.get("/configure", follow_redirects=False).headers["location"] == "/roles"


def test_a_loaded_schema_fills_the_roles_form(tmp_path: Path) -> None:
    """The demo schema (examples/demo/schema.toml) loaded: the roles page shows its roles,
    kinds, the hierarchy files it names (selected) and the age widths; the columns with a
    setting the form has no field for (a hand-added ``missing``, the SA's hierarchy) are named."""
    folder = tmp_path / "demo"
    folder.mkdir()
    demo_files(folder)
    text = (folder / "schema.toml").read_text()
    (folder / "schema.toml").write_text(
        text.replace("[columns.sex]", '[columns.sex]\nmissing = "drop"')
    )
    client = _client(folder)
    client.post("/open", data={"token": TOKEN, "path": "hospital.csv"})
    r = client.post("/schema", data={"token": TOKEN, "path": "schema.toml"}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/configure"
    page = client.get("/roles").text
    assert '<option value="identifier" selected>' in page
    assert page.count('<option value="quasi" selected>') == 4
    assert page.count('<option value="numeric" selected>') == 1
    assert page.count('<option value="categorical" selected>') == 4  # 3 QIs and the SA
    for f in ("hierarchies/zip.csv", "hierarchies/nationality.csv"):
        assert f'<option value="file:{f}" selected>' in page
    assert '<option value="intervals" selected>' in page and 'value="5, 10, 20"' in page
    assert "In use: the schema <code>schema.toml</code>" in page
    assert "some settings of <code>sex</code>, <code>disease</code>: they hold" in page


def test_a_run_the_library_refuses_shows_its_one_line(folder: Path) -> None:
    client = _client(folder)
    client.post("/open", data={"token": TOKEN, "path": "hospital.csv"})
    roles = {"token": TOKEN, "role1": "quasi", "role5": "sensitive"}
    client.post("/roles", data=roles)
    unknown = {"token": TOKEN, "algorithm": "nosuch", "models": "k=5"}
    r = client.post("/run", data=unknown)
    assert r.status_code == 400 and "unknown algorithm &#39;nosuch&#39;" in r.text
    too_big = {"token": TOKEN, "algorithm": "mondrian", "models": "k=5000"}
    job = int(client.post("/run", data=too_big, follow_redirects=False).headers["location"][6:])
    status = _wait(client, job)
    assert (
        status["state"] == "failed"
        and status["error"] == "k=5000 is larger than the table (300 rows)"
    )
    assert "k=5000 is larger than the table (300 rows)" in client.get(f"/runs/{job}").text
    assert client.get(f"/runs/{job}/download/release").status_code == 404
