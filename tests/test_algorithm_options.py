"""Typed option specs, declared once per algorithm (its signature's types and defaults, its
registration's docs and ranges): read by ``--option`` on the command line, validated by the
API, listed by ``kerckhoffs algorithms NAME``."""

from __future__ import annotations

import doctest

import pytest

from cli_runner import run_cli
from kerckhoffs.algorithms.registry import REGISTRY, AlgorithmInfo, Option, OptionSpec, get
from kerckhoffs.cli.options import parse_options
from kerckhoffs.errors import ArgumentError


def test_every_documented_option_has_a_type_and_a_default() -> None:
    for info in REGISTRY.values():
        for spec in info.option_specs:
            assert spec.type, (info.name, spec.name)
            assert spec.doc, (info.name, spec.name)


def test_specs_read_the_signature() -> None:
    lattice = {s.name: s for s in get("lattice").option_specs}
    assert (lattice["suppression"].type, lattice["suppression"].default) == ("float", 0.0)
    assert (lattice["strategy"].type, lattice["strategy"].default) == ("str", "two-way")
    hilb = get("hilb").spec("bits")
    assert hilb is not None and hilb.kinds == ("int", "None") and hilb.default is None


@pytest.mark.parametrize(
    ("type_", "raw", "value"),
    [
        ("float", "0", 0),  # an int where a float is taken, as before (release.json unchanged)
        ("float", "0.05", 0.05),
        ("int | None", "12", 12),
        ("bool | str", "TRUE", True),
        ("bool | str", "yes", "yes"),
        ("str", "true", "true"),  # a text option keeps its text
        ("str", "5", "5"),
        ("float | str", "0.2", 0.2),
        ("", "false", False),  # undeclared: read as before
    ],
)
def test_text_is_read_by_the_declared_type(type_: str, raw: str, value: object) -> None:
    got = OptionSpec("x", type_, None, "doc").from_text(raw)
    assert got == value and type(got) is type(value)


def test_the_command_line_reads_options_by_their_specs() -> None:
    specs = get("lattice").option_specs
    assert parse_options(["suppression=0", "strategy=5"], specs) == {
        "suppression": 0,
        "strategy": "5",
    }


def test_the_api_refuses_a_value_of_the_wrong_type_or_out_of_range() -> None:
    import kerckhoffs as kh
    from kerckhoffs.datasets import generate_hospital

    with pytest.raises(ArgumentError, match=r"^option suppression=a lot: lattice's suppression"):
        kh.anonymize(generate_hospital(50, seed=0), ["age"], "disease", algorithm="lattice",
                     models=["k=2"], suppression="a lot")  # fmt: skip
    with pytest.raises(ArgumentError, match=r"^option suppression=a lot: lattice's suppression"):
        get("lattice").check_values({"suppression": "a lot"})
    spec = OptionSpec("alpha", "float", 0.8, "weight", low=0.0, high=1.0)
    assert spec.problem(1.5) == "must be at most 1"
    assert spec.problem(-1) == "must be at least 0"
    assert spec.problem(0.5) is None and spec.problem(True) == "expected float, got bool"
    info = AlgorithmInfo(
        "toy", lambda table, models, *, seed=None, alpha=0.5: None, "toy", (),  # type: ignore[arg-type,misc]
        options={"alpha": "weight"}, ranges={"alpha": (0.0, 1.0)},
    )  # fmt: skip
    with pytest.raises(ArgumentError, match="toy's alpha must be at most 1"):
        info.check_values({"alpha": 2})
    assert Option("weight", 0.0, 1.0).high == 1.0


def test_algorithms_name_lists_the_options(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, err = run_cli(monkeypatch, capsys, "algorithms", "lattice")
    assert code == 0, err
    assert out.startswith("lattice: ")
    assert "enforces: k, l" in out and "publishes: generalization" in out
    assert "deterministic" in out and "algorithm-safe: not shown" in out
    for text in ("suppression", "float", "0.0", "strategy", "two-way", "metric", "loss"):
        assert text in out
    code, out, err = run_cli(monkeypatch, capsys, "algorithms", "dp-histogram")
    assert code == 0 and "cannot be seeded" in out and "max_cells" in out
    assert "algorithm-safe: yes" in out
    code, out, err = run_cli(monkeypatch, capsys, "algorithms", "nope")
    assert code == 2 and err.startswith("error: unknown algorithm 'nope'")


def test_the_pipelines_docstring_examples_run() -> None:
    import kerckhoffs.pipelines.check

    failed, tried = doctest.testmod(kerckhoffs.pipelines.check, optionflags=doctest.ELLIPSIS)
    assert tried >= 5 and failed == 0
