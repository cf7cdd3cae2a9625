"""dp-histogram's levels: chosen with DP when none are given (dp/select.py), public domains
declared in the schema (bounds, bins, values), no impossible cell, and what is printed."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cli_runner import run_cli
from kerckhoffs.data.hierarchy import Hierarchy
from kerckhoffs.data.schema import Column, Role, Schema
from kerckhoffs.data.table import Table
from kerckhoffs.dp import select
from kerckhoffs.dp.counts import dp_histogram
from kerckhoffs.dp.domain import cell_domain
from kerckhoffs.errors import InputError, ParameterError, SchemaError

AGES = Hierarchy([[str(a), f"[{a // 10 * 10}-{a // 10 * 10 + 9}]", "*"] for a in range(100)], "age")


def people(n: int = 60, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(20, 60, n),
            "sex": rng.choice(["F", "M"], n),
            "job": rng.choice(["a", "b", "c"], n),
            "disease": rng.choice(["Flu", "Cold"], n),
        }
    )


def schema(**cols: dict[str, object]) -> Schema:
    base: dict[str, dict[str, object]] = {
        "age": {"kind": "numeric"},
        "sex": {"kind": "categorical"},
        "job": {"kind": "categorical"},
    }
    for name, opts in cols.items():
        base[name] = {**base[name], **opts}
    return Schema.build(base, "disease")


# -- schema: public domains ---------------------------------------------------------------------
def test_bounded_hierarchy_by_hand() -> None:
    h = Hierarchy.bounded(17, 30, 5)
    assert h.rows()[0] == ["17", "[17-21]", "[17-26]", "*"]
    assert h.rows()[-1] == ["30", "[27-30]", "[27-30]", "*"]
    assert [len(h.node_labels(lv)) for lv in range(h.height + 1)] == [14, 3, 2, 1]


def test_schema_reads_bounds_bins_and_values(tmp_path: Path) -> None:
    toml = tmp_path / "s.toml"
    toml.write_text(
        '[columns.age]\nrole = "quasi"\nkind = "numeric"\nbounds = [17, 90]\nbins = 5\n'
        '[columns.sex]\nrole = "quasi"\nvalues = ["F", "M"]\n'
        '[columns.disease]\nrole = "sensitive"\n'
    )
    s = Schema.from_toml(toml)
    assert s.column("age").bounds == (17, 90) and s.column("age").bins == 5
    assert s.column("sex").values == ("F", "M")
    assert s.column("age").public_domain and s.column("sex").public_domain
    assert not s.column("disease").public_domain


@pytest.mark.parametrize(
    ("opts", "match"),
    [
        ({"bins": 5}, "bins needs bounds"),
        ({"bounds": (3, 1)}, "LO <= HI"),
        ({"bounds": (1, 9), "bins": 0}, "positive integer"),
        ({"bounds": (1.5, 9), "bins": 2}, "integer bounds"),
        ({"values": ("a",), "kind": "numeric"}, "categorical columns"),
        ({"values": ("a", "a")}, "without repeats"),
        ({"bounds": (1, 9), "kind": "categorical"}, "numeric columns"),
    ],
)
def test_schema_refuses_bad_domains(opts: dict[str, object], match: str) -> None:
    with pytest.raises(SchemaError, match=match):
        Column("x", Role.QUASI, **opts)  # type: ignore[arg-type]


def test_value_outside_the_declared_domain_is_one_line_naming_file_column_value_row(
    tmp_path: Path,
) -> None:
    df = people()
    df.loc[7, "age"] = 95
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    with pytest.raises(InputError) as err:
        Table.from_csv(path, schema(age={"bounds": (17, 90)}))
    msg = str(err.value)
    assert str(path) in msg and "'age'" in msg and "'95'" in msg and "row 8" in msg
    assert "\n" not in msg
    df = people()
    df.loc[3, "job"] = "z"
    with pytest.raises(InputError, match=r"column 'job': value 'z' \(data row 4\) is outside"):
        Table.encode(df, schema(job={"values": ("a", "b", "c")}))  # from Python: the same


def test_bins_need_integer_data() -> None:
    df = people()
    df["age"] = df["age"] + 0.5
    with pytest.raises(InputError, match="integers"):
        Table.encode(df, schema(age={"bounds": (17, 90), "bins": 5}))


def test_declared_values_must_be_leaves_of_a_given_hierarchy() -> None:
    h = Hierarchy([["a", "*"], ["b", "*"], ["c", "*"]], "job")
    with pytest.raises(SchemaError, match="'q' is not in hierarchy"):
        Table.encode(people(), schema(job={"hierarchy": h, "values": ("a", "b", "c", "q")}))


def test_bounds_change_no_encoding() -> None:
    """Adding bounds that hold the data changes no code: non-DP results are the same."""
    a = Table.encode(people(), schema(age={"hierarchy": AGES}))
    b = Table.encode(people(), schema(age={"hierarchy": AGES, "bounds": (17, 90)}))
    assert np.array_equal(a.qi, b.qi) and np.array_equal(a.sa, b.sa)


# -- the cell domain: public, no impossible cell --------------------------------------------------
def test_no_impossible_cell_and_numbering_in_hierarchy_order() -> None:
    """Oracle: a level-1 age node is a cell iff one of its leaves is in 17..90, by brute force
    over the hierarchy rows; cells are the cross product in hierarchy order."""
    t = Table.encode(
        people(), schema(age={"hierarchy": AGES, "bounds": (17, 90)}, sex={"values": ("F", "M")})
    )
    d, key = cell_domain(t, {"age": 1, "sex": 0, "job": 1})
    possible = sorted(
        {r[1] for r in AGES.rows() if 17 <= int(r[0]) <= 90}, key=lambda s: int(s[1:].split("-")[0])
    )
    assert list(d.labels[0]) == possible and "[0-9]" not in possible and "[90-99]" in possible
    frame = d.frame()
    assert list(map(tuple, frame.to_numpy())) == list(
        itertools.product(possible, ["F", "M"], ["*"])
    )
    # each row's cell holds its own values
    rows = t.to_frame()
    for i in range(0, t.n, 7):
        age, sex = rows.loc[i, "age"], rows.loc[i, "sex"]
        assert frame.loc[key[i], "age"] == f"[{age // 10 * 10}-{age // 10 * 10 + 9}]"
        assert frame.loc[key[i], "sex"] == sex


def test_a_column_without_public_domain_is_root_only_and_the_error_names_three_ways() -> None:
    t = Table.encode(people(), schema())
    with pytest.raises(ParameterError) as err:
        cell_domain(t, {"age": 0})
    msg = str(err.value)
    assert "hierarchy" in msg and "bounds = [LO, HI], bins = W" in msg and "values = [...]" in msg
    d, _ = cell_domain(t, {"sex": 1, "job": 1})
    assert d.size == 1 and list(d.labels[0]) == ["*"]  # age, no hierarchy: its root


# -- the DP choice ------------------------------------------------------------------------------
def test_no_levels_means_chosen_with_dp_and_leaves_keeps_the_old_meaning() -> None:
    t = Table.encode(
        people(400),
        schema(
            age={"bounds": (17, 90), "bins": 10},
            sex={"values": ("F", "M")},
            job={"values": ("a", "b", "c")},
        ),
    )
    r = dp_histogram(t, 1.0)
    assert r.levels_chosen is not None and r.noise.parts[0]["name"] == "level selection"
    assert r.noise.privacy_map <= 1.0
    rounds = [p for p in r.noise.parts if p["name"].startswith("level selection: ")]
    assert sum(p["privacy_map"] for p in rounds) <= r.levels_chosen["privacy_map"] <= 0.1
    leaves = dp_histogram(t, 1.0, levels="leaves")
    assert leaves.levels_chosen is None and [a["level"] for a in leaves.axes] == [0, 0, 0]
    assert leaves.table.n == 74 * 2 * 3  # ages 17..90 (bounds), no impossible cell


def test_auto_without_any_public_domain_is_refused_before_any_epsilon(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def never(*a: object, **k: object) -> None:
        raise AssertionError("an OpenDP measurement was built")

    monkeypatch.setattr(select, "noisy_max_measurement", never)
    t = Table.encode(people(), schema())  # no hierarchy, no bounds, no values
    with pytest.raises(
        ParameterError, match="no quasi-identifier left to choose has a public domain"
    ) as err:
        dp_histogram(t, 1.0)
    assert "values = [...]" in str(err.value)


def test_all_root_choice_says_so() -> None:
    t = Table.encode(people(), schema(sex={"values": ("F", "M")}))
    r = dp_histogram(t, 1.0, max_cells=1)  # no refinement fits: every QI at its root
    assert r.table.n == 1 and any("every quasi-identifier at its root" in n for n in r.notes)
    with pytest.raises(ParameterError, match="no quasi-identifier left to choose"):
        dp_histogram(t, 1.0, levels="auto,sex:0")  # sex pinned, age and job not public


def test_utility_sensitivity_bruteforce() -> None:
    """Moving one record between any two cells (or adding/removing one) changes u by at most
    2, for every threshold and cost (module docstring); reached."""
    rng = np.random.default_rng(2)
    worst = 0
    for _ in range(2000):
        tau = int(rng.integers(1, 8))
        c = rng.integers(0, 10, size=6)
        a, b = rng.integers(0, 6, size=2)
        d = c.copy()
        if c[a] > 0:
            d[a] -= 1
        d[b] += 1
        for x, y in ((c, d), (c, c + np.eye(6, dtype=int)[b])):
            worst = max(worst, abs(select.utility(x, tau) - select.utility(y, tau)))
    assert worst == 2


def test_utility_by_hand() -> None:
    # counts 0, 3, 12 at threshold 10 (cost 2): 2 * (0 + 3 + 10) - 2 * 3 = 20
    assert select.utility(np.array([0, 3, 12]), 10) == 20
    assert select.empty_cost(10) == 2 and select.empty_cost(1) == 1


def test_rounds_and_claim_are_public_and_within_the_share() -> None:
    t = Table.encode(
        people(400),
        schema(
            age={"bounds": (17, 90), "bins": 10},
            sex={"values": ("F", "M")},
            job={"values": ("a", "b", "c")},
        ),
    )
    assert select.search_rounds(t, {}) == 6  # 2 per public QI, at most their 4 + 1 + 1 levels
    claims = {dp_histogram(t, 2.0, selection=0.25).levels_chosen["privacy_map"] for _ in range(5)}  # type: ignore[index]
    assert len(claims) == 1 and next(iter(claims)) <= 0.5


# -- the CLI ------------------------------------------------------------------------------------
def test_cli_prints_the_levels_it_chose(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "d.csv"
    people(300).to_csv(data, index=False)
    toml = tmp_path / "s.toml"
    toml.write_text(
        '[columns.age]\nrole = "quasi"\nkind = "numeric"\nbounds = [17, 90]\nbins = 10\n'
        '[columns.sex]\nrole = "quasi"\nvalues = ["F", "M"]\n'
        '[columns.job]\nrole = "quasi"\nvalues = ["a", "b", "c"]\n'
        '[columns.disease]\nrole = "sensitive"\n'
    )
    args = ["anonymize", data, "--schema", toml, "-a", "dp-histogram", "--model", "dp=1"]
    code, out, err = run_cli(monkeypatch, capsys, *args, "--out", tmp_path / "X")
    assert code == 0, err
    out = " ".join(out.split())
    assert "levels chosen with DP (epsilon 0.1 of 1): age:" in out and " cells)" in out
    assert "300 row" not in out  # no row count


def test_query_boxes_read_a_column_counted_at_its_root_without_hierarchy() -> None:
    """age has no hierarchy (numeric, no bounds): at its root its box is the whole domain."""
    from kerckhoffs.metrics.dp_cells import dp_cell_boxes

    t = Table.encode(people(200), schema(sex={"values": ("F", "M")}))
    r = dp_histogram(t, 1.0, levels="age:0,sex:0,job:1")
    lo, hi, count, _ = dp_cell_boxes(r, t)
    assert (
        len(count) == 2 and (lo[:, 0] == 0).all() and (hi[:, 0] == t.qi_columns[0].size - 1).all()
    )
