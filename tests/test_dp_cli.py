"""What the command line says about a DP release: only what the release publishes (its cells,
mechanism, scale and neighbour notion), never the number of input rows, which is private under
add/remove neighbours; and each DP claim names the notion it holds under."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from cli_runner import run_cli

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "examples" / "demo" / "schema.toml"
LEVELS = "levels=age:4,sex:1,zip:1,nationality:2"
ROWS = 537
"""An input size no other number of these outputs equals (cells, scales, epsilons, keep
probabilities). The commands run in their temporary folder with relative paths, so every
number they print is a function of the public parameters (no noisy count is printed): the
check cannot collide by chance (its failure probability on a correct release is 0). It did
once when the release's absolute path was printed: pytest's temporary folders carry its run
counter (``/tmp/pytest-of-USER/pytest-537/...``)."""


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from kerckhoffs.datasets import generate_hospital

    f = tmp_path_factory.mktemp("dpcli") / "h.csv"
    generate_hospital(ROWS, 2).to_csv(f, index=False)
    return f


RUNS = [
    ("dp-histogram", "dp=1", ["-O", "neighbours=add-remove"], "add-remove"),
    (
        "dp-marginals",
        "dp=1",
        ["-O", "marginals=zip;nationality", "-O", "levels=zip:1"],
        "substitution",
    ),
    ("dp-rr", "dp=1", ["-O", LEVELS + ",disease:1"], "substitution"),
    ("dp-rr", "label-dp=1", ["-O", LEVELS, "-O", "perturb=sa"], "sensitive-value"),
]


def numbers(text: str) -> set[int]:
    return {int(x.replace(",", "")) for x in re.findall(r"\d[\d,]*", text)}


@pytest.mark.parametrize(("algorithm", "model", "options", "notion"), RUNS)
def test_dp_outputs_never_print_the_row_count(  # type: ignore[no-untyped-def]
    data: Path, tmp_path: Path, monkeypatch, capsys, algorithm, model, options, notion
) -> None:
    monkeypatch.chdir(tmp_path)
    out, data = Path("R"), Path(os.path.relpath(data, tmp_path))
    assert "pytest-" not in str(data), data
    extra = ["-O", LEVELS] if algorithm == "dp-histogram" else []
    code, stdout, err = run_cli(
        monkeypatch, capsys, "anonymize", data, "-s", SCHEMA, "-a", algorithm, "-m", model,
        *extra, *options, "-o", out,
    )  # fmt: skip
    assert code == 0, err
    flat = " ".join(stdout.split())  # the summary wraps at the terminal's width
    summary = flat[flat.index(" cells of noisy counts") : flat.index("neighbours)") + 11]
    assert "rows" not in summary and f"DP under {notion} neighbours)" in summary, summary
    assert ROWS not in numbers(stdout + err), stdout + err
    for command in (["check", out, "-m", model], ["audit", "-r", out]):
        code, stdout, err = run_cli(monkeypatch, capsys, *command)
        assert code in (0, 1), err
        assert ROWS not in numbers(stdout + err), stdout + err
        flat = " ".join(stdout.split())
        if command[0] == "audit":  # the release as the audit describes it: its own notion
            assert f"neighbours={notion}" in flat, flat
