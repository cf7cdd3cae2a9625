"""A DP release and its ledger charge under kill -9 and under concurrency.

The publication transaction (:mod:`kerckhoffs.dp.publish`) charges the ledger before it
renames the staged release into place (write-ahead), so a process killed at any point leaves
either no release, or a release that the ledger charges; a charge without a release is the
safe failure. Each case runs ``kerckhoffs anonymize --ledger`` in a process of its own (forked
from the session's warm server, ``tests/warm_cli.py``) whose library functions are patched to
``SIGKILL`` the process at one step, then inspects what is on disk, then runs the command again
and checks that it cleans what the killed run left (staging folder, lock files, temporaries,
a previous release moved aside). No hook in the production code: the steps are the library's
own functions.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from catalogue import assert_one_error_line
from cli_runner import run_cli
from kerckhoffs.data.output import output_directory
from kerckhoffs.datasets import generate_hospital
from kerckhoffs.dp.ledger import Ledger
from kerckhoffs.release import Release

DEMO = Path(__file__).resolve().parents[1] / "examples" / "demo"
COMMAND = [
    "anonymize", "data.csv", "-s", "demo/schema.toml", "-a", "dp-histogram", "-m", "dp=0.5",
    "-O", "levels=age:4,sex:1,zip:1,nationality:1", "--format", "csv", "--ledger",
    "private/ledger.json", "--budget", "10",
]  # fmt: skip

KILLER = """
import os, signal, sys
from pathlib import Path
import kerckhoffs.api as api
import kerckhoffs.data.output as output
import kerckhoffs.dp.ledger as ledger
from kerckhoffs.cli import run

POINT, TARGET, ARGV = {point!r}, Path({target!r}).resolve(), {argv!r}
LEDGER = Path("private/ledger.json").resolve()


def die():
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def before(owner, name):
    setattr(owner, name, lambda *a, **k: die())


def after(owner, name):
    original = getattr(owner, name)

    def wrapped(*a, **k):
        value = original(*a, **k)
        die()
        return value

    setattr(owner, name, wrapped)


real_replace = os.replace


def replace(src, dst):
    src, dst = Path(src).resolve(), Path(dst).resolve()
    if POINT == "ledger-written" and dst == LEDGER:
        die()  # the new ledger is written beside the old one, not renamed over it
    real_replace(src, dst)
    if POINT == "old-moved-aside" and src == TARGET:
        die()  # the previous release is aside, the new one not yet in its place
    if POINT == "published" and dst == TARGET:
        die()  # in place; the run has not cleaned up nor said anything


os.replace = replace
if POINT == "read-ledger":
    before(ledger.Ledger, "load")
elif POINT == "compute":
    before(api, "anonymize_table")
elif POINT == "staged":
    before(ledger.Ledger, "record")  # staged and checked, not charged
elif POINT == "charged":
    after(ledger.Ledger, "save")  # charged, not renamed into place
elif POINT == "claim-released":
    before(output, "_release_claim")  # published; its lock not yet removed
sys.exit(run(ARGV))
"""

POINTS = {
    # point: (charged by this run, release of this run in place)
    "read-ledger": (False, False),
    "compute": (False, False),
    "staged": (False, False),
    "ledger-written": (False, False),
    "charged": (True, False),
    "old-moved-aside": (True, False),
    "published": (True, True),
    "claim-released": (True, True),
    "done": (True, True),
}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """data.csv (120 patients), the demo schema, and a release ``first`` charged to
    ``private/ledger.json`` by an earlier, successful run."""
    from kerckhoffs.cli import run

    ws = tmp_path_factory.mktemp("crash")
    generate_hospital(120, 3).to_csv(ws / "data.csv", index=False)
    shutil.copytree(DEMO, ws / "demo")
    (ws / "private").mkdir()  # a ledger's folder is never created for it
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(ws)
        assert run([*COMMAND, "-o", "first"]) == 0
    return ws


def leftovers(ws: Path) -> list[str]:
    """Names of what a run leaves only when it dies: staging folders, previous releases
    moved aside, lock files, temporary files."""
    marks = (".kerckhoffs-staging-", ".kerckhoffs-old-", ".kerckhoffs-lock", ".kerckhoffs-tmp-")
    return sorted(str(p.relative_to(ws)) for p in ws.rglob("*") if any(m in p.name for m in marks))


def digest(release_dir: Path) -> str | None:
    meta = release_dir / "release.json"
    return json.loads(meta.read_text())["integrity"] if meta.is_file() else None


@pytest.mark.parametrize(
    "overwrite",
    [pytest.param(False, marks=pytest.mark.slow), True],  # overwriting passes every point
    ids=["new", "overwrite"],
)
@pytest.mark.parametrize("point", list(POINTS))
def test_kill_at_any_point_leaves_no_release_or_a_charged_one(
    base: Path, tmp_path: Path, warm_cli: Any, point: str, overwrite: bool
) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(base, ws)
    target = "first" if overwrite else "second"
    argv = [*COMMAND, "-o", target] + (["--overwrite"] if overwrite else [])
    old_digest = digest(ws / "first")
    entries_before = len(Ledger.load(ws / "private" / "ledger.json").entries)
    code = warm_cli.python(KILLER.format(point=point, target=target, argv=argv), cwd=ws).returncode
    applicable = point != "old-moved-aside" or overwrite
    assert code == (0 if point == "done" or not applicable else -9), (point, code)
    charged, in_place = POINTS[point] if applicable else POINTS["done"]

    # the ledger is whole, and charges this run exactly when it should
    led = Ledger.load(ws / "private" / "ledger.json")
    assert len(led.entries) == entries_before + charged
    charged_digests = {e.digest for e in led.entries}
    # what is at the target: a whole, verified release the ledger charges, or nothing
    now = digest(ws / target)
    if now is not None:
        Release.from_published(ws / target)  # its files verify against release.json
        assert now in charged_digests
    if in_place:
        assert now == led.entries[-1].digest != old_digest
    elif overwrite and now is not None:
        assert now == old_digest  # the previous release, untouched
    elif overwrite:  # killed with the previous release moved aside: it comes back
        with output_directory(ws / target, overwrite=True):
            pass
        assert digest(ws / target) == old_digest
    else:
        assert now is None  # no release, or (charged) the safe failure
    if point == "done" or not applicable:
        assert leftovers(ws) == []
    # the next run on the same target and ledger succeeds and cleans what was left
    again = warm_cli.run([*COMMAND, "-o", target, "--overwrite"], cwd=ws)
    assert again.returncode == 0, again.stderr
    assert leftovers(ws) == []
    final = Ledger.load(ws / "private" / "ledger.json")
    assert digest(ws / target) == final.entries[-1].digest


# -- two writers, one ledger through a symbolic link -----------------------------------------------
def test_a_ledger_held_through_its_real_path_refuses_its_link(
    base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The lock sat beside each path name: through a link and through the real path, two
    runs charged two different files. Now another process holding the real file's lock (the
    plain flock any kerckhoffs run takes) refuses a run through the link in one line."""
    ws = tmp_path / "ws"
    shutil.copytree(base, ws)
    monkeypatch.chdir(ws)
    (ws / "link.json").symlink_to(ws / "private" / "ledger.json")
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent("""
            import fcntl, os, sys
            fd = os.open("private/.ledger.json.kerckhoffs-lock", os.O_RDWR | os.O_CREAT)
            fcntl.flock(fd, fcntl.LOCK_EX)
            print("held", flush=True)
            sys.stdin.readline()
        """)],
        cwd=ws, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        before = (ws / "private" / "ledger.json").read_bytes()
        argv = [*COMMAND[:-4], "--ledger", "link.json", "-o", "via-link"]
        code, out, err = run_cli(monkeypatch, capsys, *argv)
        assert_one_error_line(code, out, err, ("link.json", "in use by another kerckhoffs"))
        assert (ws / "private" / "ledger.json").read_bytes() == before
        assert not (ws / "via-link").exists()
    finally:
        holder.communicate("\n", timeout=30)
    code, _, err = run_cli(monkeypatch, capsys, *argv)
    assert code == 0, err
    assert (ws / "link.json").is_symlink()
    assert len(Ledger.load(ws / "private" / "ledger.json").entries) == 2


@pytest.mark.slow
def test_two_concurrent_runs_through_a_link_and_the_real_path(base: Path, tmp_path: Path) -> None:
    """Started together, one through a link and one through the real path: each ends charged
    and published, or refused in one line; the ledger holds exactly the charges of those that
    succeeded, every one of them published."""
    ws = tmp_path / "ws"
    shutil.copytree(base, ws)
    (ws / "link.json").symlink_to(ws / "private" / "ledger.json")
    big = generate_hospital(20_000, 5)
    big.to_csv(ws / "data.csv", index=False)
    runs = []
    for name, ledger in (("a", "link.json"), ("b", "private/ledger.json")):
        cmd = [sys.executable, "-m", "kerckhoffs.cli", *COMMAND[:-4], "--ledger", ledger,
               "-o", name]  # fmt: skip
        runs.append(
            subprocess.Popen(cmd, cwd=ws, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        )
    results = [(p.wait(timeout=300), *p.communicate()) for p in runs]
    led = Ledger.load(ws / "private" / "ledger.json")
    published = [n for n, r in zip("ab", results, strict=True) if r[0] == 0]
    for name, (code, out, err) in zip("ab", results, strict=True):
        if code != 0:
            assert_one_error_line(code, out, err, ("in use by another kerckhoffs",))
            assert not (ws / name).exists()
    assert published, results
    assert len(led.entries) == 1 + len(published)
    assert {e.digest for e in led.entries[1:]} == {digest(ws / n) for n in published}
    assert (ws / "link.json").is_symlink() and leftovers(ws) == []
