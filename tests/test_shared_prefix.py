"""The branches of one enumeration share the deterministic steps computed before their first
draw (:class:`kerckhoffs.randomness.SharedPrefix`), and the outcomes stay exactly those of
recomputing everything in every branch."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs.algorithms.registry import get
from kerckhoffs.audits.algorithm import default_models
from kerckhoffs.audits.enumerating_rng import EnumeratingRNG, enumerate_outcomes
from kerckhoffs.audits.random_tables import random_table
from kerckhoffs.audits.random_worlds import random_worlds, release_key
from kerckhoffs.errors import ParameterError
from kerckhoffs.models import LDiversity
from kerckhoffs.randomness import deterministic_stage

calls: dict[str, int] = {}


@deterministic_stage
def _before(x: int) -> np.ndarray:
    calls["before"] = calls.get("before", 0) + 1
    return np.arange(x)


@deterministic_stage
def _after(x: int) -> np.ndarray:
    calls["after"] = calls.get("after", 0) + 1
    return np.full(2, x)


@deterministic_stage
def _logged(x: int, *, sa_log: Any = None) -> np.ndarray:
    calls["logged"] = calls.get("logged", 0) + 1
    return np.zeros(x)


@deterministic_stage
def _sorts(keys: np.ndarray) -> np.ndarray:
    return np.argsort(keys)


@pytest.fixture(autouse=True)
def _reset() -> None:
    calls.clear()


def test_a_stage_before_the_first_draw_runs_once_per_enumeration() -> None:
    def run(rng: EnumeratingRNG) -> tuple[int, ...]:
        a = _before(3)
        a[0] += 10  # the caller owns its copy: the next branch must still get [0, 1, 2]
        b = int(rng.integers(3))
        c = _after(b)
        return (int(a.sum()), b, int(c.sum()))

    out = enumerate_outcomes(run)
    third = Fraction(1, 3)
    assert out == {(13, 0, 0): third, (13, 1, 2): third, (13, 2, 4): third}
    assert calls == {"before": 1, "after": 3}
    calls.clear()
    assert enumerate_outcomes(run, share_prefix=False) == out
    assert calls == {"before": 3, "after": 3}


def test_outside_an_enumeration_every_call_runs() -> None:
    _before(2)
    _before(2)
    assert calls == {"before": 2}


def test_a_call_that_records_its_reads_is_never_shared() -> None:
    def run(rng: EnumeratingRNG) -> int:
        _logged(2, sa_log=object())
        return int(rng.integers(4))

    enumerate_outcomes(run)
    assert calls == {"logged": 4}


def test_a_stage_that_draws_is_the_branchs_own() -> None:
    """Random sort keys are drawn when first used: here inside the stage, before the branch's
    generator had drawn. Sharing that result would give every branch the first one's order."""

    def run(rng: EnumeratingRNG) -> tuple[int, ...]:
        return tuple(_sorts(rng.random(3)).tolist())

    out = enumerate_outcomes(run)
    assert len(out) == 6 and set(out.values()) == {Fraction(1, 6)}


RANDOMIZED = ["mondrian++", "hilb++", "hilb++strict", "mask++", "anatomy"]
ROWS = {"mask++": 5}  # MASK++ draws hundreds of branches on 6 rows


def _distribution(name: str, seed: int, share: bool) -> dict[Any, Fraction] | str:
    info = get(name)
    table = random_table(np.random.default_rng(seed), ROWS.get(name, 6), n_sa=3)
    models = default_models(info)

    def run(rng: EnumeratingRNG) -> Any:
        return release_key(info.run(table, models, seed=rng))

    try:
        return enumerate_outcomes(run, share_prefix=share)
    except ParameterError as exc:
        return str(exc)


@settings(max_examples=examples(30), deadline=None)
@given(name=st.sampled_from(RANDOMIZED), seed=st.integers(0, 10_000))
def test_sharing_never_changes_a_randomized_algorithms_distribution(name: str, seed: int) -> None:
    assert _distribution(name, seed, True) == _distribution(name, seed, False)


def test_the_auditor_weighs_candidates_alike_with_and_without_sharing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Mondrian++ on random 6-row tables: the smart weights of every candidate world."""
    import kerckhoffs.audits.random_worlds as rw

    tables = [random_table(np.random.default_rng(s), 6, n_sa=3) for s in range(5)]
    shared = [random_worlds("mondrian++", t, [LDiversity(2)], seed=0).weights for t in tables]
    plain = enumerate_outcomes

    def unshared(run: Any, **kw: Any) -> Any:
        return plain(run, **kw, share_prefix=False)

    monkeypatch.setattr(rw, "enumerate_outcomes", unshared)
    assert [random_worlds("mondrian++", t, [LDiversity(2)], seed=0).weights for t in tables] == (
        shared
    )
    assert any(0 < w < 1 for ws in shared for w in ws)  # some weights are real probabilities
