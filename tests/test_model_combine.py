"""PrivacyModel.combine: a model evaluated on consecutive slices of the groups (each with the
table-wide SA totals) and combined equals the model evaluated on all groups at once. This is
what lets a distributed check evaluate each slice where its histograms are."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs.data.schema import Kind, SensitiveMode
from kerckhoffs.errors import ParameterError
from kerckhoffs.models import (
    AlphaKAnonymity,
    DistinctLDiversity,
    EntropyLDiversity,
    GroupHistogram,
    KAnonymity,
    LDiversity,
    MConfidentiality,
    ModelResult,
    MPrivacy,
    PrivacyModel,
    RecursiveCLDiversity,
    TCloseness,
)
from kerckhoffs.models.histogram import ProviderCounts

MODELS: list[PrivacyModel] = [
    KAnonymity(3),
    AlphaKAnonymity(0.5, 2),
    LDiversity(2),
    DistinctLDiversity(2),
    EntropyLDiversity(1.5),
    RecursiveCLDiversity(2, 2),
    TCloseness(0.3),
    MConfidentiality(2),
    MPrivacy(1, [KAnonymity(2)]),
    MPrivacy(2, [DistinctLDiversity(2)]),
]


def sliced(hist: GroupHistogram, lo: int, hi: int) -> GroupHistogram:
    """Groups ``lo .. hi - 1`` of ``hist`` as a slice of the table (their own provider
    triples, renumbered from 0)."""
    prov = None
    pc = hist.providers
    if pc is not None:
        m = (pc.group >= lo) & (pc.group < hi)
        prov = ProviderCounts(
            pc.group[m] - lo, pc.provider[m], pc.sa[m], pc.count[m], pc.n_providers
        )
    part = GroupHistogram(
        hist.counts[lo:hi], hist.sensitive, hist.mode, hist.sa_kind, providers=prov
    )
    return part.slice_of_table(hist.totals)


def same(a: ModelResult, b: ModelResult) -> None:
    assert (a.model, a.parameter, a.higher_is_better, a.detail) == (
        b.model,
        b.parameter,
        b.higher_is_better,
        b.detail,
    )
    assert a.achieved == b.achieved
    assert np.array_equal(a.group_values, b.group_values)
    assert np.array_equal(a.group_ok, b.group_ok)


@settings(max_examples=examples(80), deadline=None)
@given(
    seed=st.integers(0, 10_000),
    groups=st.integers(1, 30),
    n_sa=st.integers(2, 6),
    cuts=st.lists(st.integers(1, 29), max_size=4),
    subset=st.booleans(),
    numeric=st.booleans(),
)
def test_slices_combined_equal_the_whole(
    seed: int, groups: int, n_sa: int, cuts: list[int], subset: bool, numeric: bool
) -> None:
    rng = np.random.default_rng(seed)
    rows = int(rng.integers(groups, 6 * groups + 1))
    group = np.concatenate([np.arange(groups), rng.integers(0, groups, rows - groups)])
    sa = rng.integers(0, n_sa, rows)
    provider = rng.integers(0, 4, rows)
    sensitive = np.zeros(n_sa, dtype=bool) if subset else None
    if subset:
        sensitive[: max(1, n_sa // 2)] = True
    whole = GroupHistogram.from_codes(
        group, sa, groups, n_sa, sensitive, SensitiveMode.SET,
        Kind.NUMERIC if numeric else Kind.CATEGORICAL, provider, 4,
    )  # fmt: skip
    bounds = sorted({0, groups, *(c for c in cuts if c < groups)})
    for model in MODELS:
        try:
            expected = model.evaluate(whole)
        except ParameterError:  # (m-privacy with l over a subset: refused on the whole too)
            with pytest.raises(ParameterError):
                model.evaluate(sliced(whole, 0, groups))
            continue
        parts = [model.evaluate(sliced(whole, a, b)) for a, b in itertools.pairwise(bounds)]
        same(model.combine(parts, whole.sizes), expected)


def test_no_slice_is_refused() -> None:
    with pytest.raises(ParameterError, match="no group to check"):
        KAnonymity(2).combine([], np.zeros(0, dtype=np.int64))
