"""What the terminal shows: every data value as it is, and no name or verdict cut.

- Values that look like rich markup (``[/bold]``, ``[red]P1``), emoji codes (``:lock:``) or
  hold terminal escape sequences (``ESC[31m``) are shown as they are in every command (check,
  audit, attack, budget, disclosure, anonymize notes, error lines): no crash, nothing eaten,
  and no raw control character reaches the output (an ESC is shown as ``\\x1b``).
- At 80 columns, with and without a terminal, a table never cuts a word: each column keeps
  its longest word, a name column its whole name; a table too wide for that is printed as
  one paragraph per row. Checked on random tables against the definition (every word of
  every cell appears whole in the output) and on every command that prints a table.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len

from kerckhoffs.cli import main
from kerckhoffs.cli import output as cli_output
from kerckhoffs.cli.output import OutputConsole, styled, table, visible
from warm_cli import WarmCli

BIDI = {0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)}
MARKUP = ["[/bold]", "[red]P1", "\x1b[31mX", ":lock:"]
"""The QI and SA values of the hostile table: a closing tag with no opening one (rich raises
MarkupError), a colour tag (rich eats it), an escape sequence (the terminal obeys it) and
an emoji code (rich replaces it)."""


def run_raw(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: object
) -> tuple[int, str, str]:
    """``kerckhoffs ARGS`` in-process; (exit code, stdout, stderr) exactly as written (no
    colour code is stripped: the output is not a terminal, so any ESC in it is raw data)."""
    monkeypatch.setattr(sys, "argv", ["kerckhoffs", *map(str, args)])
    with pytest.raises(SystemExit) as excinfo:
        main()
    out, err = capsys.readouterr()
    code = excinfo.value.code
    return (0 if code is None else int(code)), out, err


def assert_clean(code: int, out: str, err: str, codes: tuple[int, ...] = (0, 1)) -> str:
    """No crash and no raw control character (but newline) in the output; the text, its
    lines' whitespace folded."""
    assert code in codes, f"exit {code}\n{out}\n{err}"
    assert "internal error" not in err and "Traceback" not in out + err, err
    raw = {c for c in out + err if unicodedata.category(c) == "Cc" and c != "\n"}
    assert not raw, f"raw control characters {sorted(raw)!r} in:\n{out}\n{err}"
    return " ".join((out + err).split())


# -- visible ---------------------------------------------------------------------------------------
def _acts_on_terminal(c: str) -> bool:
    return (unicodedata.category(c) == "Cc" and c not in "\t\n") or ord(c) in BIDI


def test_visible_escapes_exactly_the_control_characters() -> None:
    """Over the Basic Multilingual Plane and beyond: a character a terminal acts on (a C0 or
    C1 control, DEL, a bidirectional mark, override or isolate) becomes its Python escape;
    every other character (letters, brackets, emoji, tab, newline) stays as it is."""
    for code in [*range(0x3000), *range(0xFE00, 0x10000), 0x1F512, 0x10FFFF]:
        c = chr(code)
        if 0xD800 <= code < 0xE000:
            continue
        escape = f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
        want = escape if _acts_on_terminal(c) else c
        assert visible(c) == want, hex(code)
    assert visible("a\tb\nc", keep_lines=False) == "a\\x09b\\x0ac"


def test_console_shows_markup_emoji_and_escapes_as_they_are() -> None:
    buf = io.StringIO()
    console = OutputConsole(file=buf, width=80)
    console.print("[red]P1 [/bold] :lock: \x1b[31mX \u202eevil")
    t = table("id", "value")
    t.add_row("[/bold]", "\x1b]0;title\x07")
    console.print(t)
    console.print(styled(("[/]", "red"), " ok"))
    text = buf.getvalue()
    assert text.splitlines()[0] == "[red]P1 [/bold] :lock: \\x1b[31mX \\u202eevil"
    assert "[/bold]" in text and "\\x1b]0;title\\x07" in text and "[/] ok" in text
    assert "\x1b" not in text and "\u202e" not in text


def test_text_wraps_between_words_and_never_folds_one() -> None:
    """Prose wraps at the width between words; a word longer than the line (a path) stays
    whole on a line of its own, where rich would fold it into pieces."""
    path = "/tmp/" + "x" * 60 + "/part-4.parquet:"
    buf = io.StringIO()
    OutputConsole(file=buf, width=40).print(f"note: {path} all 5 row(s) dropped for missing")
    assert buf.getvalue().splitlines() == ["note:", path, "all 5 row(s) dropped for missing"]


# -- every command on hostile values ---------------------------------------------------------------
@pytest.fixture
def hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """30 patients whose ids, QI ``[i]ward`` and SA ``dis`` hold :data:`MARKUP` values, with
    hierarchies for both (so the DP algorithms have public domains), as the current
    directory."""
    n = 30
    df = pd.DataFrame(
        {
            "pid": [f"{MARKUP[i % 4]}{i}" for i in range(n)],
            "age": [20 + (i * 7) % 40 for i in range(n)],
            "[i]ward": [MARKUP[i % 4] for i in range(n)],
            "dis": [MARKUP[(i // 4) % 4] for i in range(n)],
            "[b]note": [f"{MARKUP[(i + 1) % 4]}" for i in range(n)],
        }
    )
    df.to_csv(tmp_path / "d.csv", index=False)
    for name in ("ward", "dis"):
        (tmp_path / f"{name}.csv").write_text("".join(f"{v};*\n" for v in MARKUP))
    (tmp_path / "s.toml").write_text(
        '[columns.pid]\nrole = "identifier"\n\n'
        '[columns.age]\nrole = "quasi"\nkind = "numeric"\nwidths = [10, 20]\n\n'
        '[columns."[i]ward"]\nrole = "quasi"\nkind = "categorical"\nhierarchy = "ward.csv"\n\n'
        '[columns.dis]\nrole = "sensitive"\nkind = "categorical"\nhierarchy = "dis.csv"\n\n'
        '[columns."[b]note"]\nrole = "other"\n'
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_check_shows_hostile_values_as_they_are(
    hostile: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The worst groups of a data file and of a release name each QI cell and SA value
    exactly, escape sequences made visible."""
    code, out, err = run_raw(monkeypatch, capsys, "check", "d.csv", "-s", "s.toml",
                             "-m", "k=2", "-m", "l=2", "--worst", "30")  # fmt: skip
    text = assert_clean(code, out, err, codes=(1,))
    for v in ("[/bold]", "[red]P1", "\\x1b[31mX", ":lock:"):
        assert f"[i]ward={v} " in text, v
        assert f"{v}×" in text, v
    assert "QIs age, [i]ward; SA dis" in text

    code, out, err = run_raw(monkeypatch, capsys, "anonymize", "d.csv", "-s", "s.toml", "-a",
                             "mondrian", "-m", "k=3", "-o", "rel", "--include-other")  # fmt: skip
    text = assert_clean(code, out, err, codes=(0,))
    assert "--include-other publishes [b]note unchanged" in text
    code, out, err = run_raw(monkeypatch, capsys, "check", "rel", "-m", "l=4", "--worst", "30")
    text = assert_clean(code, out, err, codes=(1,))
    assert "dis: " in text and "\\x1b[31mX×" in text and "[red]P1×" in text


def test_audit_and_attack_show_hostile_values_as_they_are(
    hostile: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``audit`` and ``attack`` of releases of the hostile table end in a verdict; the
    reasons that name TOML tables (``[coalition]``) are no longer eaten as markup."""
    for name, k in (("rel", "3"), ("rel2", "4")):
        code, out, err = run_raw(monkeypatch, capsys, "anonymize", "d.csv", "-s", "s.toml",
                                 "-a", "mondrian", "-m", f"k={k}", "-o", name)  # fmt: skip
        assert_clean(code, out, err, codes=(0,))
    code, out, err = run_raw(monkeypatch, capsys, "audit", "-r", "rel", "--other", "rel2",
                             "-k", "d.csv", "--schema", "s.toml")  # fmt: skip
    text = assert_clean(code, out, err)
    assert "insider: not run: needs a coalition of providers in the knowledge ([coalition]" in text
    assert "intersection:" in text
    code, out, err = run_raw(monkeypatch, capsys, "attack", "intersection", "-r", "rel",
                             "--other", "rel2", "-k", "d.csv", "--schema", "s.toml", "-o",
                             "found")  # fmt: skip
    assert_clean(code, out, err)
    assert (hostile / "found" / "tuples.csv").is_file()


def test_budget_and_errors_show_hostile_ids_as_they_are(
    hostile: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``budget`` lists people whose ids are markup or escape sequences, exactly; an error
    line naming such a value shows it with the escape visible."""
    code, out, err = run_raw(monkeypatch, capsys, "anonymize", "d.csv", "-s", "s.toml", "-a",
                             "dp-histogram", "-m", "dp=1", "-o", "dp", "-O",
                             "levels=age:3", "--ledger", "led.json")  # fmt: skip
    assert_clean(code, out, err, codes=(0,))
    code, out, err = run_raw(monkeypatch, capsys, "budget", "led.json", "--worst", "30")
    text = assert_clean(code, out, err, codes=(0,))
    for i in range(30):
        assert f" {visible(MARKUP[i % 4])}{i} " in text, i

    df = pd.read_csv(hostile / "d.csv", dtype=str, keep_default_na=False)
    df.loc[3, "[i]ward"] = "\x1b[32mZ[/bold]"  # not in the hierarchy
    df.to_csv(hostile / "bad.csv", index=False)
    code, out, err = run_raw(monkeypatch, capsys, "check", "bad.csv", "-s", "s.toml", "-m", "k=2")
    assert_clean(code, out, err, codes=(2,))
    assert err.startswith("error: ") and "\\x1b[32mZ[/bold]" in err and err.count("\n") == 1


def test_disclosure_on_hostile_values(
    hostile: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    df = pd.read_csv(hostile / "d.csv", dtype=str, keep_default_na=False).head(8)
    df.to_csv(hostile / "small.csv", index=False)
    code, out, err = run_raw(monkeypatch, capsys, "disclosure", "small.csv", "-s", "s.toml",
                             "--lattice", "--chk", "l=2")  # fmt: skip
    text = assert_clean(code, out, err, codes=(0,))
    assert "strategy" in text


# -- tables that never cut a word ------------------------------------------------------------------
WORD = st.text(st.sampled_from("abcdefghij-=[]/:()0123456789"), min_size=1, max_size=24)
CELL = st.lists(WORD, min_size=0, max_size=12).map(" ".join)


@given(
    headers=st.lists(WORD, min_size=1, max_size=7),
    rows=st.lists(st.lists(CELL, min_size=7, max_size=7), min_size=1, max_size=8),
    width=st.sampled_from([30, 50, 80, 120]),
)
def test_a_table_never_cuts_a_word(headers: list[str], rows: list[list[str]], width: int) -> None:
    """Oracle from the definition: every line fits the width, and every word of every cell
    (every cell of the first, the name column) appears whole on one line of the output,
    unless it is longer than a line can hold."""
    t = table(*headers)
    for r in rows:
        t.add_row(*r[: len(headers)])
    buf = io.StringIO()
    OutputConsole(file=buf, width=width).print(t)
    lines = buf.getvalue().splitlines()
    assert all(cell_len(ln) <= width for ln in lines), buf.getvalue()
    tokens = {w for ln in lines for w in re.split(r"[\s│┃]+", ln)}
    room = width - cli_output.INDENT - 4
    for r in [headers, *rows]:
        for j, cell in enumerate(r[: len(headers)]):
            if r is not headers and j == 0 and cell and len(cell) <= room:
                assert any(cell in ln for ln in lines), (cell, buf.getvalue())
            if r is headers and j == 0:
                continue  # the paragraphs do not repeat the name column's header
            for w in cell.split():
                if len(w) <= room:  # the paragraphs write "header: value; ..."
                    assert {w, w + ":", w + ";"} & tokens, (w, buf.getvalue())


ALL_MODELS = ["k=2", "l=2", "distinct-l=2", "entropy-l=1.5", "recursive-cl=2,2", "t=0.9",
              "alpha-k=0.9,2", "m=2"]  # fmt: skip


def _names_whole(text: str, names: list[str]) -> None:
    lines = text.splitlines()
    for name in names:
        assert any(re.search(rf"(^|[\s│┃]){re.escape(name)}($|[\s│┃])", ln) for ln in lines), (
            name,
            text,
        )


@pytest.fixture
def eighty(monkeypatch: pytest.MonkeyPatch) -> None:
    """The consoles at 80 columns, whatever COLUMNS the test run was started with."""
    monkeypatch.setattr(cli_output.out, "_width", 80)
    monkeypatch.setattr(cli_output.err, "_width", 80)


def test_check_at_80_columns_names_every_model_and_verdict_whole(
    eighty: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every model's name ("m-confidentiality (per group)", "distinct l-diversity",
    "differential-privacy", ...) and every verdict whole on a line at 80 columns."""
    from kerckhoffs.datasets import generate_hospital
    from kerckhoffs.models import parse_model

    demo = Path(__file__).resolve().parents[1] / "examples" / "demo"
    generate_hospital(200, 0).assign(provider=lambda d: d.index % 3).to_csv(
        tmp_path / "h.csv", index=False
    )
    code, out, err = run_raw(monkeypatch, capsys, "anonymize", tmp_path / "h.csv", "-s",
                             demo / "schema.toml", "-a", "dp-histogram", "-m", "dp=1", "-O",
                             "levels=age:4,sex:1", "-o", tmp_path / "dp")  # fmt: skip
    assert_clean(code, out, err, codes=(0,))
    runs = [
        (ALL_MODELS, ["-s", demo / "schema.toml"], tmp_path / "h.csv"),
        (["k=2", "m-privacy=1"], ["-s", demo / "schema_providers.toml"], tmp_path / "h.csv"),
        (["dp=1"], [], tmp_path / "dp"),
    ]
    for models, schema, data in runs:
        args = [a for m in models for a in ("-m", m)]
        code, out, err = run_raw(monkeypatch, capsys, "check", data, *schema, *args,
                                 "--worst", "0")  # fmt: skip
        assert_clean(code, out, err)
        assert max(cell_len(ln) for ln in out.splitlines()) <= 80
        names = [parse_model(m).name for m in models]
        _names_whole(out, names)
        verdicts = re.findall(r"\b(ok|violated)\b", out)
        assert len(verdicts) == len(names), out


def _table_lines_fit(text: str, width: int = 80) -> None:
    lines = [ln for ln in text.splitlines() if set(ln) & set("│┃━─")]
    assert lines and max(cell_len(ln) for ln in lines) <= width, text


def _prose_fits(text: str, width: int = 80) -> None:
    """Every line fits, or is one word too long for any line (a path kept whole)."""
    wide = [ln for ln in text.splitlines() if cell_len(ln) > width and len(ln.split()) > 1]
    assert text.strip() and not wide, text


def test_budget_and_disclosure_at_80_columns(
    eighty: None,
    hostile: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The tables of ``budget`` (a release with a long name, people with hostile ids),
    ``disclosure`` and ``anonymize`` at 80 columns: no table line wider, every name, id and
    verdict whole on a line."""
    name = "releases/dp-histogram-of-the-hostile-ward-table-v1"
    code, out, err = run_raw(monkeypatch, capsys, "anonymize", "d.csv", "-s", "s.toml", "-a",
                             "dp-histogram", "-m", "dp=1", "-O", "levels=age:3", "-o", name,
                             "--ledger", "led.json")  # fmt: skip
    assert code == 0, err
    _prose_fits(out)
    _names_whole(out, ["differential-privacy", "ok"])
    code, out, err = run_raw(monkeypatch, capsys, "budget", "led.json", "--worst", "30")
    assert code == 0, err
    _table_lines_fit(out)
    _names_whole(out, [Path(name).name, *(f"{visible(MARKUP[i % 4])}{i}" for i in range(30))])
    ex = Path(__file__).resolve().parents[1] / "examples" / "disclosure"
    code, out, err = run_raw(monkeypatch, capsys, "disclosure", ex / "table1.csv", "-s",
                             ex / "schema.toml", "--sequence", ex / "sequence.toml")  # fmt: skip
    assert code == 0, err
    _table_lines_fit(out)
    _names_whole(out, ["g1", "g2", "g3", "naive", "inclusive", "exclusive", "fails", "yes", "no"])


def test_anonymize_prints_no_blank_lines_without_a_terminal(
    warm_cli: WarmCli, tmp_path: Path
) -> None:
    """The spinners of ``anonymize`` are off in a pipe: a transient display there leaves a
    blank line each."""
    from kerckhoffs.datasets import generate_hospital

    generate_hospital(100, 0).to_csv(tmp_path / "h.csv", index=False)
    schema = Path(__file__).resolve().parents[1] / "examples" / "demo" / "schema.toml"
    done = warm_cli.run(
        ["anonymize", "h.csv", "-s", str(schema), "-a", "mondrian", "-m", "k=3", "-o", "r"],
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("mondrian: "), done.stdout
    assert "" not in done.stdout.splitlines(), done.stdout


def _strip_ansi(raw: str) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07", "", raw)


def _listed_names() -> dict[str, list[str]]:
    from kerckhoffs.algorithms import REGISTRY
    from kerckhoffs.attacks import register_all
    from kerckhoffs.attacks.registry import ATTACKS
    from kerckhoffs.experiments import all_experiments

    register_all()
    return {
        "algorithms": sorted(REGISTRY),
        "reproduce": [e.name for e in all_experiments()],
        "audit": sorted(ATTACKS),
    }


def test_a_terminal_of_80_columns(
    hostile: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The commands' consoles as on a colour terminal 80 columns wide (spinners on, styles
    written as escape sequences): every algorithm, experiment and attack name and every model
    name whole on a line (copyable), no line wider than the terminal, and the escape sequence
    of a data value shown, not sent. (A real pseudo-terminal: the slow test below.)"""
    code, _, err = run_raw(monkeypatch, capsys, "anonymize", "d.csv", "-s", "s.toml", "-a",
                           "mondrian", "-m", "k=3", "-o", "rel")  # fmt: skip
    assert code == 0, err  # (its spinners redraw in place: not measured line by line)
    buf = io.StringIO()
    term = OutputConsole(file=buf, force_terminal=True, width=80, color_system="standard")
    shared = cli_output.out
    for name, module in list(sys.modules.items()):
        if name.startswith("kerckhoffs.cli") and getattr(module, "out", None) is shared:
            monkeypatch.setattr(module, "out", term)
    names = _listed_names()
    for args in (["algorithms"], ["reproduce", "--list"], ["audit", "--list"]):
        code, _, err = run_raw(monkeypatch, capsys, *args)
        assert code == 0, err
        text = _strip_ansi(buf.getvalue())
        assert max(cell_len(ln) for ln in text.splitlines()) <= 80, text
        _names_whole(text, names[args[0]])
        buf.seek(0)
        buf.truncate()
    code, _, err = run_raw(monkeypatch, capsys, "check", "rel", "-m", "k=4", "-m", "l=4",
                           "-m", "distinct-l=2")  # fmt: skip
    raw = buf.getvalue()
    assert code == 1, err
    assert "\x1b[31mX" not in raw  # the data's sequence (rich colours no "X..." red here)
    assert "\\x1b[31mX×" in raw  # an SA value of the worst groups
    text = _strip_ansi(raw)
    table = text.split("worst groups")[0]  # a worst group is one line, the terminal wraps it
    assert max(cell_len(ln) for ln in table.splitlines()) <= 80, text
    _names_whole(text, ["k-anonymity", "distinct l-diversity", "l-diversity", "violated", "ok"])


PTY_SCRIPT = """
import sys
from kerckhoffs.cli import run
for args in (["algorithms"], ["reproduce", "--list"], ["audit", "--list"],
             ["check", "d.csv", "-s", "s.toml", "-m", "k=2", "-m", "distinct-l=2"]):
    print("=== " + " ".join(args), flush=True)
    code = run(args)
    sys.stdout.flush()
sys.exit(code)
"""


@pytest.mark.slow  # a fresh interpreter: about 3 s of CPU
def test_a_real_pseudo_terminal_of_80_columns(hostile: Path) -> None:
    """On a real (pseudo-)terminal 80 columns wide: every algorithm, experiment and attack
    name and every model name whole on a line (copyable), no line wider than the terminal,
    and the escape sequence of a data value shown, not obeyed."""
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in {"COLUMNS", "LINES", "NO_COLOR"}}
    env["TERM"] = "xterm-256color"
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    proc = subprocess.Popen(
        [sys.executable, "-c", PTY_SCRIPT],
        cwd=hostile,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        close_fds=True,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.wait(timeout=120) == 1  # check: the models are violated
    raw = b"".join(chunks).decode("utf-8").replace("\r\n", "\n")
    assert "\x1b[31mX" not in raw  # the data's escape sequence is never sent raw
    text = _strip_ansi(raw)
    listed = text.split("worst groups")[0]  # a worst group is one line, the terminal wraps it
    assert max(cell_len(ln) for ln in listed.splitlines()) <= 80, text
    assert "Traceback" not in text and "internal error" not in text
    for names in _listed_names().values():
        _names_whole(text, names)
    _names_whole(text, ["k-anonymity", "distinct l-diversity", "violated"])
    assert "[i]ward=\\x1b[31mX | dis: " in text
