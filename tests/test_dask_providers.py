"""Providers that never pool their records (kerckhoffs.engines.dask_providers, paper 003 on
Dask): one provider's slice answers as its part of the pooled back-end; the coordinator driving
one site per provider on a LocalCluster finds the in-memory partition; only box-indexed counts
cross before the submission, their size bounded by the histograms and not by the rows."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs import Schema, Table
from kerckhoffs.algorithms.mprivacy_anonymize import coordinate, setting_from_models
from kerckhoffs.errors import ParameterError
from kerckhoffs.models import DistinctLDiversity, KAnonymity, MPrivacy
from kerckhoffs.mprivacy.providers import Boxes, Cuts, LocalProviders

dd = pytest.importorskip("dask.dataframe")

SCHEMA = Schema.build({"a": {"kind": "numeric"}, "b": {"kind": "numeric"}, "c": {}}, "s",
                      provider="p")  # fmt: skip


def frame(seed: int, n: int | None = None, n_prov: int | None = None) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = n or int(rng.integers(80, 400))
    n_prov = n_prov or int(rng.integers(2, 6))
    w = rng.exponential(1.0, n_prov) + 0.2
    return pd.DataFrame(
        {
            "a": rng.integers(0, int(rng.integers(3, 40)), n),
            "b": rng.integers(0, int(rng.integers(2, 10)), n),
            "c": rng.choice(["x", "y", "z"], n),
            "s": [f"v{x}" for x in rng.integers(0, int(rng.integers(2, 6)), n)],
            "p": [f"P{x}" for x in rng.choice(n_prov, n, p=w / w.sum())],
        }
    )


def slice_of(t: Table, p: int) -> Table:
    """Provider ``p``'s rows, with the whole table's encodings (as a site holds them)."""
    rows = np.flatnonzero(t.provider == p)
    out = copy.copy(t)
    out.qi, out.sa, out.provider = t.qi[rows], t.sa[rows], t.provider[rows]
    out.row_ids = t.row_ids[rows] if t.row_ids is not None else None
    return out


# -- one provider's slice is its part of the pooled back-end (no Dask) ----------------------------
@settings(max_examples=examples(25), deadline=None)
@given(st.integers(0, 2**31))
def test_slices_sum_to_the_pooled_answers(seed: int) -> None:
    df = frame(seed)
    t = Table.encode(df, SCHEMA)
    n_prov = len(t.provider_values)
    pooled = LocalProviders(t)
    sites = [LocalProviders(slice_of(t, p), pooled=False) for p in range(n_prov)]
    for s in sites:
        assert s.n_providers == n_prov
    rng = np.random.default_rng(seed)
    nodes, next_id = np.zeros(1, np.int64), 1
    for _ in range(4):  # a few levels of random cuts that keep both sides nonempty (pooled)
        for j in range(t.d):
            want = pooled.codes_in_box(nodes, j)
            got = [s.codes_in_box(nodes, j) for s in sites]
            key = np.concatenate([g.box * 1000 + g.code for g in got])
            cnt = np.concatenate([g.count for g in got])
            u, inv = np.unique(key, return_inverse=True)
            assert np.array_equal(u, want.box * 1000 + want.code)
            assert np.array_equal(np.bincount(inv.reshape(-1), weights=cnt), want.count)
        thr = np.array([rng.integers(0, t.qi_columns[0].size) for _ in nodes])
        boxes = Boxes.halves(nodes, np.zeros(nodes.size, np.int64), thr)
        want_h = pooled.hist_in_box(boxes)
        got_h = [s.hist_in_box(boxes) for s in sites]
        triples = sorted(
            (int(b), int(p), int(a), int(c))
            for g in got_h
            for b, p, a, c in zip(g.box, g.provider, g.sa, g.count, strict=True)
        )
        assert triples == list(
            zip(want_h.box.tolist(), want_h.provider.tolist(), want_h.sa.tolist(),
                want_h.count.tolist(), strict=True)
        )  # fmt: skip
        # cut every node with at least two values of ``a`` at a value inside it
        cc = pooled.codes_in_box(nodes, 0)
        lo = np.full(nodes.size, -1)
        hi = np.full(nodes.size, -1)
        for b, code in zip(cc.box.tolist(), cc.code.tolist(), strict=True):
            lo[b] = code if lo[b] < 0 else lo[b]
            hi[b] = code
        cut = lo < hi
        if not cut.any():
            break
        left = next_id + 2 * np.arange(int(cut.sum()))
        next_id += 2 * int(cut.sum())
        cuts = Cuts(nodes[cut], np.zeros(int(cut.sum()), np.int64), lo[cut],
                    np.zeros((int(cut.sum()), n_prov), bool), left, left + 1)  # fmt: skip
        for back in (pooled, *sites):
            back.split(cuts, nodes[~cut])
        nodes = np.stack([left, left + 1], 1).reshape(-1)
    final = nodes
    for back in (pooled, *sites):
        back.split(Cuts(*(np.zeros(0, np.int64),) * 3, np.zeros((0, n_prov), bool),
                        np.zeros(0, np.int64), np.zeros(0, np.int64)), final)  # fmt: skip
    leaves = np.arange(next_id)
    whole = pooled.generalize_and_submit(leaves)
    for p, s in enumerate(sites):
        assert np.array_equal(s.generalize_and_submit(leaves).group, whole.group[t.provider == p])


def test_a_pooled_back_end_still_refuses_a_one_sided_cut() -> None:
    t = Table.encode(frame(1), SCHEMA)
    top = t.qi_columns[0].size
    no_provider_cut = np.zeros((1, len(t.provider_values)), bool)
    cuts = Cuts(np.zeros(1, np.int64), np.zeros(1, np.int64), np.array([top]), no_provider_cut,
                np.array([1]), np.array([2]))  # fmt: skip
    with pytest.raises(ParameterError, match="both sides"):
        LocalProviders(t).split(cuts, np.zeros(0, np.int64))
    site = LocalProviders(slice_of(t, 0), pooled=False)
    site.split(cuts, np.zeros(0, np.int64))  # one provider's records may all go left
    h = site.hist_in_box(Boxes.whole(np.array([1, 2])))
    assert set(h.box.tolist()) == {0}


# -- on a LocalCluster ----------------------------------------------------------------------------
CASES = [
    ("provider-aware", [MPrivacy(1), KAnonymity(4)], {}),
    ("provider-aware", [MPrivacy(1), DistinctLDiversity(2)], {"score": "sum"}),
    ("provider-aware", [MPrivacy(2), KAnonymity(3)], {"provider_order": "size"}),
    ("mondrian-mprivacy", [MPrivacy(1), KAnonymity(3)], {}),
    ("mondrian-mprivacy", [MPrivacy(1), KAnonymity(2), DistinctLDiversity(2)], {"cut": "median"}),
]


@pytest.mark.parametrize(
    ("seed", "case"),
    # one case of each anonymizer in the default suite; the others (score, provider order, a
    # second mondrian-mprivacy setting) in the slow suite: each case costs a second of cluster
    [
        (i, c) if i in (0, 3) else pytest.param(i, c, marks=pytest.mark.slow)
        for i, c in enumerate(CASES)
    ],
)
def test_same_partition_as_in_memory(dask_client: Any, seed: int, case: tuple) -> None:
    from kerckhoffs.engines.dask_providers import mprivacy_dask
    from kerckhoffs.engines.dask_table import encode_dask

    algorithm, models, options = case
    df = frame(100 + seed)
    t = Table.encode(df, SCHEMA)
    setting = setting_from_models(models, algorithm)
    try:
        want = coordinate(LocalProviders(t), setting,
                          provider_aware=algorithm == "provider-aware", **options)  # fmt: skip
    except ParameterError:
        pytest.skip("the whole table is not m-private")
    dt = encode_dask(dd.from_pandas(df, npartitions=3), SCHEMA, dask_client)
    groups, providers = mprivacy_dask(dt, models, algorithm, **options)
    got = np.concatenate(dask_client.gather(groups.groups))
    assert np.array_equal(got, want)
    assert groups.n_groups == int(want.max()) + 1 > 1
    assert providers.bytes == providers.bytes_by_provider.sum()


def test_only_counts_cross_and_their_size_does_not_grow_with_the_rows(dask_client: Any) -> None:
    """Every row of the table repeated 10 times, k scaled by 10: the same decisions, so the
    same replies, byte for byte, until the submission (which carries one (group, SA) pair per
    record: the release)."""
    from kerckhoffs.engines.dask_providers import mprivacy_dask
    from kerckhoffs.engines.dask_table import encode_dask

    df = frame(7, n=300, n_prov=4)
    runs = []
    for times in (1, 10):
        big = pd.concat([df] * times, ignore_index=True)
        dt = encode_dask(dd.from_pandas(big, npartitions=4), SCHEMA, dask_client)
        models = [MPrivacy(1), KAnonymity(3 * times)]
        _, providers = mprivacy_dask(dt, models, "mondrian-mprivacy")
        runs.append(providers)
        counts = [r for r in providers.replies if r.kind != "generalize_and_submit"]
        subs = [r for r in providers.replies if r.kind == "generalize_and_submit"]
        assert providers.replies[-4:] == subs and len(subs) == 4  # one per provider, at the end
        assert sum(r.entries for r in subs) == len(big)
        n_sa, widest = dt.n_sa, max(c.size for c in dt.qi_columns)
        for r in counts:
            # a provider's reply: at most one entry per (box, SA value) or (box, code)
            assert r.entries <= r.boxes * max(n_sa, widest)
            assert r.bytes <= 1_000 + 40 * r.entries
    small, large = ([(r.kind, r.boxes, r.entries, r.bytes) for r in p.replies[:-4]] for p in runs)
    assert small == large and len(small) > 20


def test_refusals(dask_client: Any) -> None:
    from kerckhoffs.engines.dask_providers import mprivacy_dask
    from kerckhoffs.engines.dask_table import encode_dask

    df = frame(3)
    dt = encode_dask(dd.from_pandas(df, npartitions=2), SCHEMA, dask_client)
    with pytest.raises(ParameterError, match="run provider-aware and mondrian-mprivacy"):
        mprivacy_dask(dt, [MPrivacy(1), KAnonymity(2)], "mondrian")
    with pytest.raises(ParameterError, match="frob"):
        mprivacy_dask(dt, [MPrivacy(1), KAnonymity(2)], "provider-aware", frob=1)
    with pytest.raises(ParameterError, match="m-privacy model"):
        mprivacy_dask(dt, [KAnonymity(2)], "provider-aware")
    plain = Schema.build({"a": {"kind": "numeric"}}, "s")
    dt2 = encode_dask(dd.from_pandas(df[["a", "s"]], npartitions=2), plain, dask_client)
    with pytest.raises(ParameterError, match="provider column"):
        mprivacy_dask(dt2, [MPrivacy(1), KAnonymity(2)], "provider-aware")


def test_dask_sites_answer_each_query_as_the_pooled_back_end(dask_client: Any) -> None:
    """The queries the coordinator does not use every level (count_in_box, one QI's code
    histogram, whole boxes) answer as the pooled back-end does."""
    from kerckhoffs.engines.dask_providers import DaskProviders
    from kerckhoffs.engines.dask_table import encode_dask

    df = frame(11)
    t = Table.encode(df, SCHEMA)
    pooled = LocalProviders(t)
    sites = DaskProviders(encode_dask(dd.from_pandas(df, npartitions=3), SCHEMA, dask_client))
    root = Boxes.whole(np.array([0]))
    for got, want in (
        (sites.count_in_box(root), pooled.count_in_box(root)),
        (sites.codes_in_box(np.array([0]), 1), pooled.codes_in_box(np.array([0]), 1)),
        (sites.hist_in_box(root), pooled.hist_in_box(root)),
    ):
        for name in ("box", "provider", "code", "sa", "count"):
            if hasattr(want, name):
                assert np.array_equal(getattr(got, name), getattr(want, name)), name
    assert len(sites.replies) == 3 * sites.n_providers
