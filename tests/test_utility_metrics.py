"""GCP, discernibility, average group size (C_avg), paper 001's QID information loss and SA
distortion: the spec's worked numbers (minimality.md 4.12 Incognito lattice, 4.15 Table XXI),
hand-computed releases, and cross-checks against the lattice search's own metric values and
NCP (hypothesis)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budget import examples
from hand_tables import LETTER, hand_table
from kerckhoffs import Column, Hierarchy, Kind, Partition, Release, Role, Schema, Scheme, Table
from kerckhoffs.algorithms.lattice import information_loss, release_at
from kerckhoffs.errors import InputError, ParameterError
from kerckhoffs.metrics import (
    average_group_size,
    discernibility,
    gcp,
    group_cover,
    group_information_loss,
    ncp,
    normalized_average_group_size,
    qid_information_loss,
    row_sa_distortion,
    sa_distortion,
)

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

# paper 001 Fig. 1 as spec minimality.md 2.2 reconstructs it (9 ground values; vocational is a
# leaf directly under post-secondary, repeated to keep ARX rows of equal depth)
EDUCATION = Hierarchy(
    [
        ["1st-4th", "elementary", "without-post-secondary", "*"],
        ["5th-6th", "elementary", "without-post-secondary", "*"],
        ["7th-8th", "elementary", "without-post-secondary", "*"],
        ["9th-10th", "secondary", "without-post-secondary", "*"],
        ["11th-12th", "secondary", "without-post-secondary", "*"],
        ["HS-grad", "secondary", "without-post-secondary", "*"],
        ["undergraduate", "university", "post-secondary", "*"],
        ["postgraduate", "university", "post-secondary", "*"],
        ["vocational", "vocational", "post-secondary", "*"],
    ],
    name="education (Fig. 1)",
)
GENDER = Hierarchy([["Male", "Person"], ["Female", "Person"]], name="gender")


def table_xvi() -> Table:
    """minimality.md 4.12, Table XVI (sensitive HIV)."""
    df = pd.DataFrame(
        {
            "gender": ["Male", "Female", "Female", "Female", "Female"],
            "education": [
                "postgraduate",
                "undergraduate",
                "postgraduate",
                "undergraduate",
                "undergraduate",
            ],
            "disease": ["HIV", "HIV", "non", "non", "non"],
        }
    )
    quasi = {
        "gender": {"kind": "categorical", "hierarchy": GENDER},
        "education": {"kind": "categorical", "hierarchy": EDUCATION},
    }
    return Table.encode(df, Schema.build(quasi, "disease"))


@pytest.mark.parametrize(
    ("levels", "expected"),
    [
        ({"gender": 0, "education": 0}, Fraction(0)),
        ({"gender": 0, "education": 1}, Fraction(625, 10_000)),  # Table XVII
        ({"gender": 1, "education": 0}, Fraction(1, 2)),  # Table XVIII(a)
        ({"gender": 1, "education": 1}, Fraction(5625, 10_000)),  # Table XVIII(b)
    ],
)
def test_incognito_lattice_information_loss(levels: dict[str, int], expected: Fraction) -> None:
    """minimality.md 4.12 / 7 item 30: IL 0, 0.0625, 0.5, 0.5625 (base(Gender) = 2,
    base(Education) = 9, coverage(university) = 2, weights 1/2)."""
    table = table_xvi()
    rel = release_at(table, levels)
    assert qid_information_loss(rel) == float(expected)  # exact in binary
    assert qid_information_loss(rel) == information_loss(table, levels)


def test_table_xxi_mask_example() -> None:
    """minimality.md 4.15: Table XXI (c) after MASK (k = 2, m = 2); one of Q's two HIV values
    distorted: SA distortion 1/6 with a flat {HIV, non} taxonomy. The QID loss of (b): Q
    (q1, q2) covers 2 of the 4 values, (2 - 1) / (4 - 1) = 1/3 on 2 of 6 rows: 1/9."""
    q = Hierarchy(
        [["q1", "Q", "*"], ["q2", "Q", "*"], ["q3", "q3", "*"], ["q4", "q4", "*"]], name="q"
    )
    df = pd.DataFrame(
        {
            "qid": ["q1", "q2", "q3", "q3", "q4", "q4"],
            "s": ["HIV", "HIV", "HIV", "non", "non", "non"],
        }
    )
    table = Table.encode(df, Schema.build({"qid": {"kind": "categorical", "hierarchy": q}}, "s"))
    hiv, non = (int(np.flatnonzero(table.sa_column.values == v)[0]) for v in ("HIV", "non"))
    pub = table.sa.copy()
    pub[1] = non
    rel = Release(table, Partition(np.array([0, 0, 1, 1, 2, 2])), Scheme.GENERALIZATION, pub)
    assert list(rel.generalized_cells()["qid"]) == ["Q", "q3", "q4"]
    assert sa_distortion(rel) == pytest.approx(1 / 6)
    assert row_sa_distortion(rel).tolist() == [0, 1, 0, 0, 0, 0]
    assert qid_information_loss(rel) == pytest.approx(1 / 9)
    # the two-table variant: QID loss 0, the same SA distortion (spec 3.7)
    bucket = Release(table, rel.partition, Scheme.BUCKETIZATION, pub)
    assert qid_information_loss(bucket) == 0.0
    assert sa_distortion(bucket) == pytest.approx(1 / 6)
    assert hiv != non


def test_sa_distortion_in_a_taxonomy() -> None:
    """The NCA of the original and published value: 1st-4th -> 9th-10th meet at
    without-post-secondary (6 ground values): (6 - 1) / (9 - 1) = 5/8; 1st-4th -> 7th-8th at
    elementary: 2/8; undergraduate -> postgraduate at university: 1/8."""
    df = pd.DataFrame(
        {
            "g": ["Male"] * 4,
            "edu": ["1st-4th", "1st-4th", "undergraduate", "vocational"],
        }
    )
    schema = Schema(
        (
            Column("g", Role.QUASI, Kind.CATEGORICAL, GENDER),
            Column("edu", Role.SENSITIVE, Kind.CATEGORICAL, EDUCATION),
        )
    )
    table = Table.encode(df, schema)
    code = {str(v): i for i, v in enumerate(table.sa_column.values)}
    pub = np.array([code["9th-10th"], code["7th-8th"], code["postgraduate"], code["vocational"]])
    rel = Release(table, Partition.single(4), Scheme.GENERALIZATION, pub.astype(np.int32))
    assert row_sa_distortion(rel).tolist() == [5 / 8, 2 / 8, 1 / 8, 0.0]
    assert sa_distortion(rel) == pytest.approx((5 + 2 + 1) / 8 / 4)


def test_hand_computed_group_metrics() -> None:
    table = hand_table()
    # groups {0, 1}: age 20-25, letters a, b -> X; {2, 3, 4}: age 30-40, a, c, d -> *; {5}
    rel = Release(table, Partition(np.array([0, 0, 1, 1, 1, 2])))
    lo, hi = group_cover(rel)
    # age codes 20, 25, 30, 40 -> 0..3; letter leaves a..e -> 0..4
    assert lo.tolist() == [[0, 0, 0], [2, 0, 0], [0, 0, 0]]
    assert hi.tolist() == [[1, 1, 0], [3, 4, 0], [0, 0, 0]]
    # GCP (Ghinita): sum_G |G| (sum_i NCP_i(G)) / (d N); NCP age on values (domain 20..40)
    expected = (2 * (5 / 20 + 1 / 4 + 0) + 3 * (10 / 20 + 1 + 0) + 0) / (3 * 6)
    assert gcp(rel) == pytest.approx(expected)
    assert gcp(rel) == pytest.approx(ncp(rel))
    assert gcp(rel, weights=[1, 0, 0]) == pytest.approx((2 * 0.25 + 3 * 0.5) / 6)
    # paper 001 IL counts values: age [20-25] covers 2 of 4 values, [30-40] 2 of 4
    np.testing.assert_allclose(
        group_information_loss(rel), [[1 / 3, 1 / 4, 0], [1 / 3, 1, 0], [0, 0, 0]]
    )
    assert qid_information_loss(rel) == pytest.approx(
        (2 * (1 / 3 + 1 / 4) + 3 * (1 / 3 + 1)) / (3 * 6)
    )
    assert discernibility(rel) == 2**2 + 3**2 + 1**2
    assert average_group_size(rel) == 2.0
    assert normalized_average_group_size(rel, 2) == 1.0
    assert normalized_average_group_size(rel, 1) == 2.0


def test_extremes() -> None:
    table = hand_table()
    exact = Release(table, Partition.by_qi(table))
    assert gcp(exact) == 0.0 and qid_information_loss(exact) == 0.0 and sa_distortion(exact) == 0
    single = Release(table, Partition.single(table.n))
    # age and letter at the whole domain; "one" has a single value (base 1: costs 0)
    assert qid_information_loss(single) == pytest.approx(2 / 3)
    assert gcp(single) == pytest.approx(2 / 3)
    assert discernibility(single) == 36
    bucket = Release(table, Partition.single(table.n), Scheme.BUCKETIZATION)
    assert gcp(bucket) == 0.0 and qid_information_loss(bucket) == 0.0
    assert discernibility(bucket) == 36


def test_bad_parameters() -> None:
    rel = Release(hand_table(), Partition.single(6))
    with pytest.raises(ParameterError, match="weights"):
        gcp(rel, weights=[0.5, 0.5])
    with pytest.raises(ParameterError, match="sum to 1"):
        qid_information_loss(rel, weights=[0.5, 0.5, 0.5])
    with pytest.raises(ParameterError, match="k must"):
        normalized_average_group_size(rel, 0)
    with pytest.raises(InputError, match="one flag per group"):
        discernibility(rel, suppressed=np.array([True, False]))


# -- cross-checks against the lattice search and NCP (hypothesis) ------------------------------
def lattice_table(ages: list[int], letters: list[str], s: list[str]) -> Table:
    df = pd.DataFrame({"age": ages, "letter": letters, "s": s})
    schema = Schema(
        (
            Column("age", widths=(5, 10)),
            Column("letter", Role.QUASI, Kind.CATEGORICAL, LETTER),
            Column("s", Role.SENSITIVE),
        )
    )
    return Table.encode(df, schema)


@st.composite
def lattice_tables(draw: st.DrawFn) -> Table:
    n = draw(st.integers(2, 30))
    ages = draw(st.lists(st.integers(17, 45), min_size=n, max_size=n))
    letters = draw(st.lists(st.sampled_from("abcd"), min_size=n, max_size=n))
    s = draw(st.lists(st.sampled_from("pqr"), min_size=n, max_size=n))
    return lattice_table(ages, letters, s)


@settings(max_examples=examples(40), deadline=None)
@given(lattice_tables(), st.integers(0, 3), st.integers(0, 2))
def test_il_matches_lattice_information_loss(table: Table, age_lvl: int, letter_lvl: int) -> None:
    """Full-domain releases: our Dist equals the lattice module's Definition 7 value, and GCP
    is the value-range NCP of the published nodes."""
    node = {"age": age_lvl, "letter": letter_lvl}
    rel = release_at(table, node)
    assert qid_information_loss(rel) == pytest.approx(information_loss(table, node), abs=1e-12)
    assert 0.0 <= gcp(rel) <= 1.0
    assert discernibility(rel) == int((rel.partition.sizes.astype(np.int64) ** 2).sum())


@settings(max_examples=examples(30), deadline=None)
@given(lattice_tables(), st.integers(2, 4))
def test_lattice_with_suppression_matches_its_metric_values(table: Table, k: int) -> None:
    """The lattice search reports its chosen node's loss / discernibility (suppressed rows
    cost 1 / |T|); ours, from the release it publishes, must agree."""
    from kerckhoffs.algorithms import registry
    from kerckhoffs.errors import KerckhoffsError
    from kerckhoffs.models import KAnonymity

    for metric, fn in (("loss", qid_information_loss), ("discernibility", discernibility)):
        try:
            rel = registry.get("lattice").run(
                table, [KAnonymity(k)], suppression=0.3, metric=metric
            )
        except KerckhoffsError:
            return
        value = rel.provenance.parameters["metric_value"]
        assert fn(rel) == pytest.approx(float(value), abs=1e-12)


@settings(max_examples=examples(40), deadline=None)
@given(lattice_tables(), st.lists(st.integers(0, 4), min_size=30, max_size=30))
def test_gcp_equals_ncp_and_bounds(table: Table, labels: list[int]) -> None:
    rel = Release(table, Partition.from_labels(labels[: table.n]))
    assert gcp(rel) == pytest.approx(ncp(rel), abs=1e-12)
    il = qid_information_loss(rel)
    assert 0.0 <= il <= 1.0
    # Dist 0 iff nothing is generalized
    exact = all((hi == lo).all() for lo, hi in [group_cover(rel)])
    assert (il == 0.0) == exact
    sizes = rel.partition.sizes
    assert discernibility(rel) == int((sizes.astype(np.int64) ** 2).sum())
    assert average_group_size(rel) == pytest.approx(table.n / sizes.size)


@pytest.mark.skipif(not (DATA / "adult").is_dir(), reason="shared Adult data absent")
def test_adult_mask_smoke() -> None:
    from kerckhoffs.algorithms import registry
    from kerckhoffs.datasets import load_adult
    from kerckhoffs.models import KAnonymity, MConfidentiality

    table = Table.encode(
        load_adult(DATA / "adult"), Schema.from_toml(EXAMPLES / "adult" / "schema.toml")
    )
    rel = registry.get("mask").run(table, [KAnonymity(50), MConfidentiality(3)], seed=1)
    changed = rel.perturbed
    assert changed.any()
    d = row_sa_distortion(rel)
    assert (d[changed] > 0).all() and (d[~changed] == 0).all() and (d <= 1).all()
    assert 0.0 < sa_distortion(rel) < changed.mean() + 1e-12
    assert 0.0 < qid_information_loss(rel) < 1.0
    assert normalized_average_group_size(rel, 50) >= 1.0


def test_ncp_of_a_full_domain_release_penalizes_the_published_nodes() -> None:
    # a full-domain release publishes every group at its node's level, wider than its rows'
    # tightest cells: NCP must count the node published (it agrees with GCP then)
    from kerckhoffs.algorithms import get
    from kerckhoffs.datasets import generate_hospital, hospital_schema
    from kerckhoffs.metrics import gcp, ncp
    from kerckhoffs.models import KAnonymity
    from kerckhoffs.release import Release

    table = Table.encode(generate_hospital(500, seed=2), hospital_schema())
    rel = get("lattice").run(table, [KAnonymity(5)])
    assert rel.cells is not None
    tight = Release(table, rel.partition)
    assert ncp(rel) == pytest.approx(gcp(rel))
    assert ncp(rel) > ncp(tight)
