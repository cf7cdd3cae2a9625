"""m-privacy on written releases (paper 003; spec mprivacy.md 9, A19: the provider column is
never published): the independent check before writing gets the providers beside the files,
in file order; release.json records the verdict, never a provider; ``check DIR --providers
FILE`` re-checks a release from the providers' row lists that ``anonymize --provider-rows``
writes.

The release used throughout is strict Mondrian with k = 2 on paper 003's Table I (four
hospitals). Its four published groups, derived by hand from the table:

- group 0: Sara (P3, Epilepsy), John (P2, Flu), Olga (P4, Cancer);
- group 1: Alice and Emily (both P1);
- group 2: Bob (P1, Asthma), Mark (P2, Flu), Frank (P4, Asthma);
- group 3: Dorothy (P2, Cancer), Cecilia (P3, Flu).

The largest m each group achieves w.r.t. k = 2: group 0 loses one row per provider removed
(1); group 1 has one provider, so no coalition has a victim in it (reported as n - 1 = 3);
group 2 as group 0 (1); group 3 drops to one row when either provider leaves (0). W.r.t.
k = 2 and distinct l = 2, group 2 also fails at m = 1 (without Mark only Asthma is left).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cli_runner import run_cli
from kerckhoffs import api
from kerckhoffs.data.provider_rows import (
    folder_integrity,
    read_provider_rows,
    write_provider_rows,
)
from kerckhoffs.errors import InputError, ParameterError, PrivacyCheckFailed
from kerckhoffs.models import DistinctLDiversity, KAnonymity, MPrivacy
from kerckhoffs.release import Release

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "providers"
DATA, SCHEMA = EXAMPLE / "table_i.csv", EXAMPLE / "schema.toml"
K2 = [KAnonymity(2)]
K2L2 = [KAnonymity(2), DistinctLDiversity(2)]
HOSPITALS = ("P1", "P2", "P3", "P4")


@pytest.fixture(scope="module")
def release() -> Release:
    return api.anonymize(DATA, schema=SCHEMA, algorithm="mondrian", models=["k=2"])


def _written(release: Release, tmp_path: Path) -> tuple[Path, Path]:
    out, rows = tmp_path / "rel", tmp_path / "providers.csv"
    release.write(out, [KAnonymity(2), MPrivacy(0, K2)])
    write_provider_rows(rows, release.published_providers(), folder_integrity(out))
    return out, rows


def test_write_refuses_a_release_that_one_insider_breaks(release: Release, tmp_path: Path) -> None:
    out = tmp_path / "rel"
    with pytest.raises(PrivacyCheckFailed, match=r"m-privacy .*VIOLATED in 2 group"):
        release.write(out, [KAnonymity(2), MPrivacy(1, K2L2)])
    assert not out.exists()


def test_write_records_the_verdict_and_no_provider(release: Release, tmp_path: Path) -> None:
    out, _ = _written(release, tmp_path)
    meta = json.loads((out / "release.json").read_text())
    check = next(c for c in meta["checks"] if c["model"] == "m-privacy")
    # the verdict is published, the achieved m is not: it is read from provider counts the
    # release does not show (here m = 0 is required and 0 achieved; a release required to be
    # 2-private that is 3-private would tell a reader that no 3 providers break a group)
    assert check["satisfied"] is True and check["achieved"] is None
    assert all(c["achieved"] is not None for c in meta["checks"] if c["model"] != "m-privacy")
    k2 = {"model": "k-anonymity", "k": 2}
    assert check["spec"] == {"model": "m-privacy", "m": 0, "models": [k2]}
    for f in out.iterdir():
        if f.suffix in {".csv", ".json"}:
            text = f.read_text()
            assert "hospital" not in text
            assert not any(h in text for h in HOSPITALS), f.name


def test_providers_file_pairs_every_published_row_with_its_provider(
    release: Release, tmp_path: Path
) -> None:
    out, rows = _written(release, tmp_path)
    published = pd.read_csv(out / "release.csv")
    published["provider"] = read_provider_rows(rows, len(published), release=folder_integrity(out))
    got = sorted(map(tuple, published[["group", "provider", "disease"]].to_numpy().tolist()))
    original = pd.read_csv(DATA)
    members = {
        0: ["Sara", "John", "Olga"],
        1: ["Alice", "Emily"],
        2: ["Bob", "Mark", "Frank"],
        3: ["Dorothy", "Cecilia"],
    }
    want = sorted(
        (g, r.hospital, r.disease)
        for g, names in members.items()
        for r in original.itertuples()
        if r.name in names
    )
    assert got == want


@pytest.mark.parametrize(("constraint", "per_group"), [(K2, [1, 3, 1, 0]), (K2L2, [1, 3, 0, 0])])
def test_check_read_back_with_providers_gives_each_groups_m(
    release: Release, tmp_path: Path, constraint: list, per_group: list[int]
) -> None:
    out, rows = _written(release, tmp_path)
    report = api.check(out, models=[MPrivacy(1, constraint)], providers=rows)
    assert report.groups["m-privacy"].tolist() == per_group
    assert report.satisfied is False
    labels = read_provider_rows(rows, 10, release=folder_integrity(out))
    again = api.read_release(out, providers=labels).check([MPrivacy(1, constraint)])
    assert again[0].group_values.tolist() == per_group


def test_m_privacy_alone_takes_the_releases_constraint(release: Release, tmp_path: Path) -> None:
    out, rows = _written(release, tmp_path)
    report = api.check(out, models="m-privacy=1", providers=rows)
    assert report.results[0].parameter == "m=1 w.r.t. k=2"
    assert report.groups["m-privacy"].tolist() == [1, 3, 1, 0]


def test_m_privacy_on_a_release_without_providers_says_how_to_give_them(
    release: Release, tmp_path: Path
) -> None:
    out, _ = _written(release, tmp_path)
    with pytest.raises(ParameterError, match="--providers FILE"):
        api.check(out, models="m-privacy=1")


def test_bucketized_release_refuses_providers() -> None:
    r = api.anonymize(DATA, schema=SCHEMA, algorithm="anatomy", models=["l=2"])
    with pytest.raises(ParameterError, match="generalized releases only"):
        r.with_providers(np.array(["P1"] * r.table.n))


DIGEST = "sha256:" + "ab" * 32
BOUND = f"# kerckhoffs provider rows for release {DIGEST}\n"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("row,provider\n" + "".join(f"{i},P1\n" for i in range(9)), "row 9 of the release has no"),
        ("row,provider\n" + "".join(f"{i},P1\n" for i in [*range(10), 3]), "row 3 is listed twice"),
        ("row,provider\n" + "".join(f"{i},P1\n" for i in range(1, 11)), "line 12: row '10'"),
        ("row,who\n0,P1\n", "missing provider"),
        ("row,provider\n0,\n", "line 3: row 0 has no provider"),
    ],
)
def test_bad_providers_file_is_one_error_line(tmp_path: Path, content: str, message: str) -> None:
    f = tmp_path / "p.csv"
    f.write_text(BOUND + content)
    with pytest.raises(InputError, match=message):
        read_provider_rows(f, 10, release=DIGEST)


def test_a_providers_path_that_is_no_regular_file_is_named_as_such(tmp_path: Path) -> None:
    """A FIFO would block the read until some process writes to it; ``/dev/zero`` never ends;
    a directory is not a file. Each is one line saying what the path is (it used to say "no
    such providers file" of a path that exists)."""
    import os

    fifo = tmp_path / "rows.fifo"
    os.mkfifo(fifo)
    for path, what in [(fifo, r"a FIFO \(named pipe\)"), (Path("/dev/zero"), "a character device"),
                       (tmp_path, "a directory")]:  # fmt: skip
        with pytest.raises(InputError, match=f"the providers file is {what}, not a regular"):
            read_provider_rows(path, 10, release=DIGEST)
    with pytest.raises(InputError, match="providers file not found"):
        read_provider_rows(tmp_path / "missing.csv", 10, release=DIGEST)


def test_cli_provider_rows_then_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out, rows = tmp_path / "rel", tmp_path / "private" / "rows.csv"
    code, stdout, stderr = run_cli(
        monkeypatch, capsys, "anonymize", DATA, "-s", SCHEMA, "-a", "mondrian", "-m", "k=2",
        "--out", out, "--provider-rows", rows,
    )  # fmt: skip
    assert code == 0, stderr
    assert "keep it private" in stdout
    labels = read_provider_rows(rows, 10, release=folder_integrity(out))
    assert sorted(labels) == sorted(pd.read_csv(DATA)["hospital"])
    code, stdout, _ = run_cli(
        monkeypatch, capsys, "check", out, "-m", "m-privacy=1", "--providers", rows
    )
    assert code == 1 and "violated" in stdout and "1 of 4" in stdout
    code, stdout, _ = run_cli(
        monkeypatch, capsys, "check", out, "-m", "m-privacy=0", "--providers", rows
    )
    assert code == 0 and "ok" in stdout


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--provider-rows", "REL/rows.csv"), "inside the release directory"),
        (("--provider-rows", "DATA"), "is an input"),
    ],
)
def test_cli_provider_rows_refused_before_any_work(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    extra: tuple[str, str],
    message: str,
) -> None:
    out = tmp_path / "rel"
    target = extra[1].replace("REL", str(out)).replace("DATA", str(DATA))
    code, _, stderr = run_cli(
        monkeypatch, capsys, "anonymize", DATA, "-s", SCHEMA, "-a", "mondrian", "-m", "k=2",
        "--out", out, extra[0], target, "--overwrite",
    )  # fmt: skip
    assert code == 2 and stderr.startswith("error:") and message in stderr
    assert len(stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_cli_provider_rows_needs_a_provider_column(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    schema = tmp_path / "schema.toml"
    schema.write_text(SCHEMA.read_text().replace('role = "provider"', 'role = "other"'))
    code, _, stderr = run_cli(
        monkeypatch, capsys, "anonymize", DATA, "-s", schema, "-a", "mondrian", "-m", "k=2",
        "--out", tmp_path / "rel", "--provider-rows", tmp_path / "rows.csv",
    )  # fmt: skip
    assert code == 2 and "no column of role 'provider'" in stderr
    assert not (tmp_path / "rel").exists() and not (tmp_path / "rows.csv").exists()


def test_cli_providers_only_for_a_release_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text(BOUND + "row,provider\n0,P1\n")
    code, _, stderr = run_cli(
        monkeypatch, capsys, "check", DATA, "-s", SCHEMA, "-m", "k=2", "--providers", rows
    )
    assert code == 2 and "only for a release directory" in stderr


def test_cli_provider_rows_overwrites_only_its_own_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Never replace what kerckhoffs did not write: --overwrite replaces the release and a
    providers file it wrote before, not an unrelated file at the --provider-rows path."""
    out, rows = tmp_path / "rel", tmp_path / "rows.csv"
    args = ["anonymize", DATA, "-s", SCHEMA, "-a", "mondrian", "-m", "k=2", "--out", out]
    assert run_cli(monkeypatch, capsys, *args, "--provider-rows", rows)[0] == 0
    code, _, err = run_cli(monkeypatch, capsys, *args, "--provider-rows", rows, "--overwrite")
    assert code == 0, err
    notes = tmp_path / "notes.csv"
    notes.write_text("my,own\n1,2\n")
    code, _, err = run_cli(monkeypatch, capsys, *args, "--provider-rows", notes, "--overwrite")
    assert code == 2 and "not a providers file kerckhoffs wrote" in err
    assert notes.read_text() == "my,own\n1,2\n"


# -- a providers file is bound to its release ----------------------------------------------------
def _cli_release(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    out: Path,
    rows: Path | None,
    *extra: str,
) -> None:
    args = ["anonymize", DATA, "-s", SCHEMA, "--out", out, *extra]
    if rows is not None:
        args += ["--provider-rows", rows]
    code, _, stderr = run_cli(monkeypatch, capsys, *args)
    assert code == 0, stderr


def test_cli_check_refuses_another_releases_providers_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two releases of the same 10 rows. m-privacy=1 w.r.t. k=2 fails on the Mondrian one
    (group 3, Dorothy of P2 and Cecilia of P3, keeps one row when either leaves). Read with the
    provider-aware release's file (10 rows too, another order) the Mondrian release would pass
    (exit 0, checked by hand before the binding): refused instead, one line, exit 2."""
    mond, mond_rows = tmp_path / "mond", tmp_path / "mond-rows.csv"
    aware, aware_rows = tmp_path / "aware", tmp_path / "aware-rows.csv"
    _cli_release(monkeypatch, capsys, mond, mond_rows, "-a", "mondrian", "-m", "k=2")
    _cli_release(
        monkeypatch, capsys, aware, aware_rows, "-a", "provider-aware", "-m", "k=2",
        "-m", "m-privacy=0",
    )  # fmt: skip
    code, stdout, _ = run_cli(
        monkeypatch, capsys, "check", aware, "-m", "m-privacy=0", "--providers", aware_rows
    )
    assert code == 0 and "ok" in stdout
    code, stdout, _ = run_cli(
        monkeypatch, capsys, "check", mond, "-m", "m-privacy=1", "--providers", mond_rows
    )
    assert code == 1 and "violated" in stdout
    code, stdout, stderr = run_cli(
        monkeypatch, capsys, "check", mond, "-m", "m-privacy=1", "--providers", aware_rows
    )
    assert code == 2 and stdout == ""
    assert stderr.startswith("error:") and len(stderr.strip().splitlines()) == 1
    assert "written for another release" in stderr and str(aware_rows) in stderr


def test_providers_file_written_before_the_binding_is_refused_with_the_fix(
    release: Release, tmp_path: Path
) -> None:
    out, rows = _written(release, tmp_path)
    lines = rows.read_text().splitlines(keepends=True)
    assert lines[0].startswith("# kerckhoffs provider rows for release sha256:")
    assert lines[1] == "row,provider\n"
    old = tmp_path / "old.csv"
    old.write_text("".join(lines[1:]))  # what kerckhoffs wrote before the binding
    with pytest.raises(
        InputError, match=r"before providers files named their release.*--provider-rows"
    ):
        api.check(out, models="m-privacy=1", providers=old)
    with pytest.raises(InputError, match="not a providers file"):
        (tmp_path / "junk.csv").write_text("hello\n")
        api.check(out, models="m-privacy=1", providers=tmp_path / "junk.csv")


def test_a_release_not_read_from_its_directory_takes_no_providers_file(
    release: Release, tmp_path: Path
) -> None:
    # rows of an in-process release are in table order, a providers file in file order
    _, rows = _written(release, tmp_path)
    with pytest.raises(InputError, match="belongs to a release directory"):
        api.check(release, models="m-privacy=1", providers=rows)


def test_the_release_says_nothing_about_its_providers_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The binding is one way: the private file names the public release, the release never
    names (or hashes) the private file, so a guessed assignment cannot be confirmed from it."""
    with_rows, without = tmp_path / "with", tmp_path / "without"
    _cli_release(
        monkeypatch, capsys, with_rows, tmp_path / "rows.csv", "-a", "mondrian", "-m", "k=2"
    )
    _cli_release(monkeypatch, capsys, without, None, "-a", "mondrian", "-m", "k=2")
    for f in sorted(p.name for p in with_rows.iterdir()):
        assert (with_rows / f).read_bytes() == (without / f).read_bytes(), f
    digest = folder_integrity(with_rows)
    assert digest in (tmp_path / "rows.csv").read_text().splitlines()[0]
