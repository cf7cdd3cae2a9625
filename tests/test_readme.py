"""Every command the README shows runs as printed, in order, in a fresh folder.

The folder holds a copy of ``examples/`` (what a clone has) and, beside it, ``shared`` pointing
at the real ``../shared`` (the benchmark data the README reads by path). Each shell command of
the "Command line" block runs with ``bash``; it must exit 0, or 1 where its comment says
``# exit 1`` (a privacy verdict), and never print a traceback or an ``error:`` line. The
README's Python block then runs in the same folder. The two set-up commands (they create a
virtual environment) are what ``.ci/run`` runs; a command marked as taking minutes runs only in
the slow suite (``pytest -m slow``). The app command (``kerckhoffs app``, a server that runs
until stopped) runs as printed on a free port (``--port`` added), answers ``/`` once and is
stopped.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pandas as pd
import pytest

from warm_cli import WarmCli, argv_of

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
README = (ROOT / "README.md").read_text()

pytestmark = pytest.mark.skipif(
    not (SHARED / "data" / "adult").is_dir(), reason="the README reads ../shared/data"
)


def _block(after: str, lang: str) -> str:
    section = README[README.index(after) :]
    start = section.index(f"```{lang}\n") + len(lang) + 4
    return section[start : section.index("```", start)]


def commands() -> list[str]:
    """The shell commands of the "Command line" block, continuation lines joined."""
    out, current = [], ""
    for line in _block("## Command line", "bash").splitlines():
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        current += line[:-1] if line.endswith("\\") else line
        if not line.endswith("\\"):
            out.append(current)
            current = ""
    return out


def _expected_code(command: str) -> int:
    comment = command.partition(" #")[2]
    return 1 if re.search(r"\bexit 1\b", comment) else 0


def _slow(command: str) -> bool:
    return "minutes" in command.partition(" #")[2]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fresh")
    (root / "shared").symlink_to(SHARED, target_is_directory=True)
    shutil.copytree(ROOT / "examples", root / "main" / "examples")
    return root / "main"


def _env() -> dict[str, str]:
    return dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")


def _run(command: str, cwd: Path, warm: WarmCli | None = None) -> subprocess.CompletedProcess[str]:
    """Run one README command: a plain ``kerckhoffs ...`` call through the warm server when
    one is given (a forked process of its own, see :mod:`warm_cli`), anything else with
    ``bash`` as printed."""
    if _server(command):
        return _serve_once(command, cwd)
    argv = argv_of(command) if warm is not None else None
    if warm is not None and argv is not None:
        return warm.run(argv, cwd)
    return subprocess.run(
        ["bash", "-c", command], cwd=cwd, capture_output=True, text=True, env=_env(), timeout=900
    )


def _server(command: str) -> bool:
    """Whether a command starts a server that runs until stopped (``kerckhoffs app``)."""
    return command.split()[:2] == ["kerckhoffs", "app"]


def _serve_once(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Start a server command as printed, on a free port (``--port`` added: the printed one may
    be taken), fetch ``/`` once (within 60 s) and stop it; exit 0 when ``/`` answered 200."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    argv = [*shlex.split(command.partition(" #")[0]), "--port", str(port)]
    proc = subprocess.Popen(
        argv, cwd=cwd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    status = None
    try:
        deadline = time.monotonic() + 60
        while status is None and proc.poll() is None and time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as r:
                    status = r.status
            except OSError:
                time.sleep(0.2)
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=30)
    code = 0 if status == 200 else (proc.returncode or 1)
    return subprocess.CompletedProcess(argv, code, out, err)


def _assert_ran(command: str, done: subprocess.CompletedProcess[str]) -> None:
    want = _expected_code(command)
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    assert not any(line.startswith("error:") for line in done.stderr.splitlines()), done.stderr
    assert done.returncode == want, (
        f"{command}\nexit {done.returncode}, README says {want}\n"
        f"stdout: {done.stdout[-1500:]}\nstderr: {done.stderr[-1500:]}"
    )


def test_the_readme_shows_commands() -> None:
    cmds = commands()
    assert len(cmds) >= 20 and all(
        c.split()[0] in {"kerckhoffs", "head", "{", "printf"} for c in cmds
    )
    assert sum(_slow(c) for c in cmds) == 1


def test_every_command_runs_as_printed_in_order(folder: Path, warm_cli: WarmCli) -> None:
    """In order, in one folder: every command on the demo data and the examples. The first
    command runs through the installed ``kerckhoffs`` console script with bash; the other
    plain ``kerckhoffs`` calls run in forked children of one warm interpreter (the ``warm_cli``
    fixture: the same entry point, without ~0.7 s of start-up each), and every command with
    shell syntax runs with bash. The commands on the real data (``../shared/data``: Adult) and
    those reading what they wrote run in the slow suite, with the rest, twice in a row
    (``test_the_block_runs_twice``): real-data runs are the slow suite's. That each command
    runs again over what the first run wrote is also
    ``test_every_command_that_writes_can_run_again`` (every writer says ``--overwrite``)."""
    ran = 0
    for i, command in enumerate(_default_commands()):
        _assert_ran(command, _run(command, folder, warm_cli if i else None))
        ran += 1
    assert ran >= 30


def test_a_dask_run_across_worker_processes_stays_in_the_default_suite() -> None:
    """The README's Dask command starts a local cluster of worker processes (``--workers``):
    the default suite's one run whose tasks and results are pickled across processes (the
    shared test cluster runs its workers in the test process: tests/dask_shared.py)."""
    assert any(
        "--engine dask" in c and "--workers" in c and argv_of(c) is not None
        for c in _default_commands()
    )


def _real_data(command: str) -> bool:
    """Whether a command reads the real data (``../shared/data``, Adult)."""
    body = command.partition(" #")[0]
    return "shared/data" in body or "adult" in body


def _default_commands() -> list[str]:
    """The block's commands the default suite runs: not slow, not on the real data, and not
    reading what a skipped command wrote (its ``--out``)."""
    kept, skipped = [], set()
    for command in commands():
        words = command.partition(" #")[0].split()
        if _slow(command) or _real_data(command) or skipped & set(words):
            skipped.update(words[j + 1] for j, w in enumerate(words[:-1]) if w == "--out")
            continue
        kept.append(command)
    return kept


def _first_adult_release_has_no_group_of_one(folder: Path) -> None:
    """The README's first Adult release publishes nobody alone: its group sizes, counted
    from the written file."""
    first = next(c for c in commands() if c.startswith("kerckhoffs anonymize adult.csv"))
    out = folder / first.split("--out ")[1].split()[0]
    sizes = pd.read_csv(out / "release.csv", usecols=["group"])["group"].value_counts()
    assert sizes.min() >= 2, f"{int((sizes == 1).sum())} rows published in a group of one"


def _writes(command: str) -> bool:
    """Whether a ``kerckhoffs`` command writes a file or folder a second run finds in place."""
    words = command.partition(" #")[0].split()
    return (
        words[:1] == ["kerckhoffs"]
        and any(w in {"--out", "-o", "--provider-rows"} for w in words)
        and words[1] != "reproduce"
    )


def test_every_command_that_writes_can_run_again() -> None:
    """A second run of the block finds the files of the first: every command that writes
    says ``--overwrite`` (``reproduce`` resumes from its cache instead)."""
    writing = [c for c in commands() if _writes(c)]
    assert len(writing) >= 15
    assert [c for c in writing if "--overwrite" not in c.partition(" #")[0]] == []


def test_every_file_the_block_prepares_is_read_later() -> None:
    """A prepared data set or a private file no later command reads is a step for nothing."""
    cmds = [c.partition(" #")[0] for c in commands()]
    for i, command in enumerate(cmds):
        words = command.split()
        made = [
            words[j + 1]
            for j, w in enumerate(words[:-1])
            if w == "--provider-rows" or (w == "--out" and words[1:3] == ["datasets", "prepare"])
        ]
        for name in made:
            assert any(name in later.split() for later in cmds[i + 1 :]), (name, command)


@pytest.mark.slow
def test_the_block_runs_twice(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The whole block, twice in a row in one folder, every command as printed with bash."""
    root = tmp_path_factory.mktemp("twice")
    (root / "shared").symlink_to(SHARED, target_is_directory=True)
    shutil.copytree(ROOT / "examples", root / "main" / "examples")
    for _ in range(2):
        for command in commands():
            if not _slow(command):
                _assert_ran(command, _run(command, root / "main"))
    _first_adult_release_has_no_group_of_one(root / "main")


def test_the_app_command_is_served_once_not_waited_for() -> None:
    """The README starts the app on the demo data; it is a server, so it is fetched and
    stopped rather than waited for."""
    served = [c for c in commands() if _server(c)]
    assert len(served) == 1 and "--demo" in served[0]


def test_plain_commands_are_told_from_shell_programs() -> None:
    assert argv_of("kerckhoffs check out/mask --model m=3      # read back") == [
        "check",
        "out/mask",
        "--model",
        "m=3",
    ]
    assert argv_of("kerckhoffs audit --release 'a b'") is None
    assert argv_of("{ head -n 1 a.csv; } > p2.csv") is None
    assert argv_of("printf 'x' > c.toml") is None
    assert argv_of("kerckhoffs x | head") is None


def test_the_python_example_runs(folder: Path, warm_cli: WarmCli) -> None:
    """In a process of its own (forked from the warm server: the imports are paid once; the
    README's first command starts kerckhoffs cold)."""
    for _ in range(2):  # it runs again as printed, over what it wrote
        done = warm_cli.python(_block("## Python", "python"), folder)
        assert done.returncode == 0, done.stderr
    assert (folder / "out" / "release" / "release.json").is_file()
    # it ends with a verdict: the attacks that apply ran and told
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith(("AuditReport: UNSAFE: ", "AuditReport: SAFE: ")), last


DOCS = ROOT / "docs"


def docs_python_blocks() -> list[tuple[str, str]]:
    """Every Python block of the documentation pages: (page, code)."""
    found = []
    for page in [DOCS / "index.md", *sorted((DOCS / "guide").glob("*.md"))]:
        text = page.read_text()
        for m in re.finditer(r"```python\n(.*?)```", text, flags=re.S):
            found.append((page.relative_to(ROOT).as_posix(), m.group(1)))
    return found


def test_the_docs_python_examples_run(folder: Path, warm_cli: WarmCli) -> None:
    """The documentation's examples run as printed, after the README's commands made the
    files they read (one process of their own, forked from the warm server; each block in
    fresh globals)."""
    blocks = docs_python_blocks()
    assert len(blocks) >= 6
    runner = "\n".join(
        [
            "import sys",
            f"blocks = {blocks!r}",
            "for page, code in blocks:",
            "    try:",
            "        exec(compile(code, page, 'exec'), {'__name__': '__docs__'})",
            "    except Exception as exc:",
            "        sys.exit(f'{page}: {type(exc).__name__}: {exc}')",
        ]
    )
    done = warm_cli.python(runner, folder)
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.slow
def test_the_long_commands_run(folder: Path) -> None:
    for command in commands():
        if _slow(command):
            _assert_ran(command, _run(command, folder))
