"""The shared ``--option KEY=VALUE`` parser (kerckhoffs.cli.options)."""

from __future__ import annotations

import pytest

from kerckhoffs.cli.options import parse_options
from kerckhoffs.errors import InputError


def test_values_are_converted_and_dashes_become_underscores() -> None:
    assert parse_options(
        ["suppression=0.02", "strategy=two-way", "exclusive=TRUE", "strict=false", "max-rows=5"]
    ) == {
        "suppression": 0.02,
        "strategy": "two-way",
        "exclusive": True,
        "strict": False,
        "max_rows": 5,
    }
    # int before float: "5" stays an int, "5.0" a float; "=" inside the value is kept
    out = parse_options(["a=5", "b=5.0", "c=x=y", "d="])
    assert out == {"a": 5, "b": 5.0, "c": "x=y", "d": ""}
    assert type(out["a"]) is int and type(out["b"]) is float


@pytest.mark.parametrize("item", ["k5", "=5", ""])
def test_a_pair_without_key_or_equals_is_refused_in_one_line(item: str) -> None:
    with pytest.raises(InputError, match=r"^--option .*: expected KEY=VALUE$"):
        parse_options([item])
