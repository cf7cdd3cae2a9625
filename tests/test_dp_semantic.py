"""The exact semantic-privacy checker (paper 004 section 4; spec ``composition.md`` 2.10-2.12,
3.9, 4.3 and properties P13, P15-P18): the spec's toy vectors exactly, then Proposition 14 and
Theorem 15 as properties over random tiny priors."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budget import examples
from kerckhoffs.dp.semantic import (
    Database,
    geometric_count,
    geometric_pmf,
    neighbour_ratio,
    neighbour_tv,
    posterior,
    product_prior,
    proposition14_bound,
    random_record,
    randomized_response,
    semantic_privacy,
    statistical_distance,
    tanh_bound,
    theorem15_bound,
    uniform_prior,
    with_verbatim,
    worst_over_priors,
)
from kerckhoffs.errors import ParameterError

F = Fraction


# -- spec 4.3: randomized response, n = 2, eps = ln 3 ----------------------------------------------
def test_randomized_response_posteriors_spec_4_3() -> None:
    rr = randomized_response(3, (0, 1))  # each bit kept w.p. 3/4
    prior = uniform_prior((0, 1), 2)
    b0 = posterior(rr, prior, (1, 1), game=0, default=0)
    b1 = posterior(rr, prior, (1, 1), game=1, default=0)
    assert b0 == {(0, 0): F(1, 16), (0, 1): F(3, 16), (1, 0): F(3, 16), (1, 1): F(9, 16)}
    assert b1 == {(0, 0): F(1, 8), (0, 1): F(3, 8), (1, 0): F(1, 8), (1, 1): F(3, 8)}
    # record 1's marginal moves from 1/2 (Game 1) to 3/4 (Game 0)
    assert b0[(1, 0)] + b0[(1, 1)] == F(3, 4)
    assert b1[(1, 0)] + b1[(1, 1)] == F(1, 2)
    assert statistical_distance(b0, b1) == F(1, 4)
    report = semantic_privacy(rr, prior, default=0)
    assert report.sd[((1, 1), 1)] == F(1, 4)
    assert not report.undefined
    assert proposition14_bound(3) == 2
    assert tanh_bound(3) == F(4, 5)
    assert report.worst_sd <= tanh_bound(3)


def test_randomized_response_is_exactly_eps_dp() -> None:
    """P15: the pointwise output ratio between neighbours is exactly e^eps (k-ary too)."""
    assert neighbour_ratio(randomized_response(3, (0, 1)), (0, 1), 2) == 3
    assert neighbour_ratio(randomized_response(F(5, 2), "abc"), "abc", 2) == F(5, 2)
    dist = randomized_response(F(5, 2), "abc")(("a",))
    assert dist == {("a",): F(5, 9), ("b",): F(2, 9), ("c",): F(2, 9)}


def test_mechanism_as_a_table() -> None:
    """A mechanism given as {database: {transcript: probability}} (spec 3.9's pmf(D, t))."""
    table = {(0,): {"yes": F(1, 4), "no": F(3, 4)}, (1,): {"yes": F(3, 4), "no": F(1, 4)}}
    report = semantic_privacy(table, uniform_prior((0, 1), 1), default=0)
    # one person: Game 1 runs on (0,) whatever D is, so its posterior is the prior (1/2, 1/2);
    # Game 0 after "yes" is (1/4, 3/4): SD 1/4; after "no" likewise
    assert report.sd == {("yes", 1): F(1, 4), ("no", 1): F(1, 4)}
    assert report.transcript_probability == {"yes": F(1, 2), "no": F(1, 2)}
    with pytest.raises(ParameterError, match="no row"):
        semantic_privacy({(0,): {"yes": 1}}, uniform_prior((0, 1), 1), default=0)


# -- spec 4.3: geometric mechanism, eps = ln 2 -----------------------------------------------------
def test_geometric_pmf_spec_4_3() -> None:
    alpha = F(1, 2)
    assert geometric_pmf(alpha, 0) == F(1, 3)
    assert geometric_pmf(alpha, 1) == geometric_pmf(alpha, -1) == F(1, 6)
    assert geometric_pmf(alpha, 2) == geometric_pmf(alpha, -2) == F(1, 12)
    # P13: sums to 1 (the tail beyond |z| = 40 is 2 * (1/3) * 2^-40, below the partial sum's gap)
    partial = sum(geometric_pmf(alpha, z) for z in range(-40, 41))
    assert 1 - partial == F(2, 3) * F(1, 2) ** 40


def test_geometric_count_is_exactly_eps_dp() -> None:
    """P13: the clamped count's neighbour ratio is at most exactly e^eps = 2, and reached."""
    for n in (1, 2, 3):
        mech = geometric_count(2, n)
        for d in itertools.product((0, 1), repeat=n):
            assert sum(mech(d).values()) == 1
        assert neighbour_ratio(mech, (0, 1), n) == 2
    # n = 2, count 1: Pr[0] = (1/2)/(3/2), Pr[1] = 1/3, Pr[2] = 1/3 (tails folded into the ends)
    assert geometric_count(2, 2)((1, 0)) == {0: F(1, 3), 1: F(1, 3), 2: F(1, 3)}
    assert geometric_count(2, 2)((0, 0)) == {0: F(2, 3), 1: F(1, 6), 2: F(1, 6)}


# -- spec 4.3 / P18: the total-variation counterexample, n = 3 -------------------------------------
def test_tv_counterexample_spec_4_3() -> None:
    mech = random_record()
    prior = uniform_prior((0, 1), 3)
    assert neighbour_tv(mech, (0, 1), 3) == F(1, 3)  # 1/n: "private" in total variation
    assert neighbour_ratio(mech, (0, 1), 3) == math.inf  # no eps makes it DP
    b0 = posterior(mech, prior, (1, 0), game=0, default=0)
    b1 = posterior(mech, prior, (1, 0), game=1, default=0)
    assert b0 == {d: F(1, 4) for d in itertools.product((0, 1), repeat=3) if d[0] == 0}
    assert b1 == prior
    report = semantic_privacy(mech, prior, default=0)
    assert report.sd[((1, 0), 1)] == F(1, 2)
    # t = (1, 1) is impossible in Game 1 (record 1 replaced by 0): undefined, counted as SD 1
    assert posterior(mech, prior, (1, 1), game=1, default=0) is None
    assert ((1, 1), 1) in report.undefined
    assert report.sd[((1, 1), 1)] == 1
    assert report.worst_sd == 1
    # Def. 13: the transcripts (j, 1) (probability 1/6 each) have an SD-1 game; (j, 0) reach 1/2
    assert report.bad_mass(F(1, 2)) == F(1, 2)
    assert report.bad_mass(F(1, 3)) == 1
    # an undefined posterior is a violation at every threshold, 1 and above included: the
    # transcripts (j, 1), impossible in Game j, still weigh 3 x 1/6 (by hand)
    assert report.bad_mass(1) == report.bad_mass(2) == F(1, 2)


# -- Theorem 15 exact vector (P17) -----------------------------------------------------------------
def test_theorem15_verbatim_vector() -> None:
    """RR with e^eps = 11/10 that publishes D verbatim w.p. delta = 1/100; n = 2, uniform prior.

    eps' = 1.331 - 1 + 2 * 0.1 = 0.531. The verbatim transcripts of the three databases holding a
    1 are impossible in the Game of the person holding it (undefined: SD 1); for D = (0, 0) each
    Game's posterior is uniform on {(0, 0), (1, 0)} (or {(0, 0), (0, 1)}) against the point mass:
    SD 1/2 <= 0.531. The RR transcripts stay within tanh(eps) ~ 0.095. Bad mass: 3/4 * delta.
    """
    delta = F(1, 100)
    mech = with_verbatim(randomized_response(F(11, 10), (0, 1)), delta)
    report = semantic_privacy(mech, uniform_prior((0, 1), 2), default=0)
    eps_prime, delta_prime = theorem15_bound(F(11, 10), delta, 2)
    assert eps_prime == pytest.approx(0.531)
    assert delta_prime == pytest.approx(2 * (0.1 + 0.02 / (math.log(1.1) * 1.1)))
    assert report.bad_mass(eps_prime) == F(3, 400)
    # the verbatim transcripts of the databases holding a 1 are undefined in that person's
    # Game: a violation at any threshold (3/4 * delta), the SD-1/2 one only below 1/2
    assert report.bad_mass(1) == report.bad_mass(10) == F(3, 400)
    assert report.bad_mass(F(1, 4)) == delta
    assert report.sd[(("verbatim", (0, 0)), 1)] == F(1, 2)
    assert report.sd[(("verbatim", (0, 1)), 2)] == 1
    mechanism_sds = [s for (t, _), s in report.sd.items() if t[0] == "mechanism"]
    assert max(mechanism_sds) <= tanh_bound(F(11, 10))


# -- Proposition 14 and Theorem 15 as properties on random tiny priors -----------------------------
exp_eps_values = st.fractions(min_value=1, max_value=5, max_denominator=12)


@st.composite
def joint_priors(draw: st.DrawFn, domain: tuple[int, ...], n: int) -> dict[Database, Fraction]:
    """An arbitrary prior on domain^n (correlated people allowed; near point masses when one
    weight dominates, exact point masses when all but one are 0)."""
    databases = list(itertools.product(domain, repeat=n))
    weights = draw(
        st.lists(
            st.one_of(st.just(0), st.integers(1, 10), st.integers(1000, 10**6)),
            min_size=len(databases),
            max_size=len(databases),
        ).filter(any)
    )
    total = sum(weights)
    return {d: F(w, total) for d, w in zip(databases, weights, strict=True) if w}


@st.composite
def rr_cases(draw: st.DrawFn) -> tuple[Fraction, tuple[int, ...], dict[Database, Fraction], int]:
    domain, n = draw(st.sampled_from([((0, 1), 1), ((0, 1), 2), ((0, 1), 3), ((0, 1, 2), 2)]))
    return (
        draw(exp_eps_values),
        domain,
        draw(joint_priors(domain, n)),
        draw(st.sampled_from(domain)),
    )


@settings(max_examples=examples(40), deadline=None)
@given(rr_cases())
def test_proposition14_randomized_response(
    case: tuple[Fraction, tuple[int, ...], dict[Database, Fraction], int],
) -> None:
    """P16: eps-DP => worst SD <= e^eps - 1, and <= tanh(eps) (the spec's derived bound)."""
    exp_eps, domain, prior, default = case
    report = semantic_privacy(randomized_response(exp_eps, domain), prior, default=default)
    assert not report.undefined  # full support: every posterior is defined
    assert report.worst_sd <= tanh_bound(exp_eps) <= proposition14_bound(exp_eps)


@settings(max_examples=examples(25), deadline=None)
@given(rr_cases())
def test_posterior_ratio_within_e_2eps(
    case: tuple[Fraction, tuple[int, ...], dict[Database, Fraction], int],
) -> None:
    """Spec 2.12 (derived): for eps-DP, every database's posterior ratio b_0(D) / b_i(D) lies in
    [e^-2eps, e^2eps] (likelihood ratio and normaliser ratio each within e^+-eps): the pointwise
    statement behind SD <= tanh(eps)."""
    exp_eps, domain, prior, default = case
    rr = randomized_response(exp_eps, domain)
    n = len(next(iter(prior)))
    for t in itertools.product(domain, repeat=n):
        b0 = posterior(rr, prior, t, game=0, default=default)
        assert b0 is not None and b0.keys() == prior.keys()
        for i in range(1, n + 1):
            bi = posterior(rr, prior, t, game=i, default=default)
            assert bi is not None
            for d, p in b0.items():
                assert exp_eps**-2 <= p / bi[d] <= exp_eps**2


@settings(max_examples=examples(30), deadline=None)
@given(exp_eps_values.filter(lambda x: x > 1), st.integers(1, 3), st.data())
def test_proposition14_geometric(exp_eps: Fraction, n: int, data: st.DataObject) -> None:
    prior = data.draw(joint_priors((0, 1), n))
    report = semantic_privacy(
        geometric_count(exp_eps, n), prior, default=data.draw(st.sampled_from((0, 1)))
    )
    assert report.worst_sd <= tanh_bound(exp_eps) <= proposition14_bound(exp_eps)


@settings(max_examples=examples(30), deadline=None)
@given(
    st.fractions(min_value=F(21, 20), max_value=F(6, 5), max_denominator=20),
    st.sampled_from([F(1, 100), F(1, 400), F(1, 10_000)]),
    st.integers(1, 2),
    st.data(),
)
def test_theorem15_verbatim(
    exp_eps: Fraction, delta: Fraction, n: int, data: st.DataObject
) -> None:
    """P17: with eps small (eps' < 1, so the SD part is not vacuous), the prior mass of (D, t)
    with some SD > eps' is <= delta' (Theorem 15), and for this mechanism in fact <= delta."""
    prior = data.draw(joint_priors((0, 1), n))
    mech = with_verbatim(randomized_response(exp_eps, (0, 1)), delta)
    report = semantic_privacy(mech, prior, default=0)
    eps_prime, delta_prime = theorem15_bound(exp_eps, delta, n)
    assert eps_prime < 1
    assert report.bad_mass(eps_prime) <= delta <= delta_prime


def test_the_bound_is_not_vacuous() -> None:
    """The checker reports SDs the bound constrains, not just small ones.

    RR with e^eps = 3, product prior: person 1 holds 1 with probability p = 2/5, person 2 is
    uniform. In Game 1 the output ignores person 1, so their marginal stays p; in Game 0 after
    reporting 1 it is 3p / (3p + 1 - p) = 2/3; the posteriors differ only in that marginal, so
    SD = 2/3 - 2/5 = 4/15 (about 0.267, near spec 4.3's worst 0.268 found by random search;
    the uniform person gives 1/4, and reporting 0 gives 2/5 - 2/11 = 12/55). The TV sanitizer,
    which is not DP, breaks every bound below 1.
    """
    prior = product_prior([{0: F(3, 5), 1: F(2, 5)}, {0: F(1, 2), 1: F(1, 2)}])
    report = semantic_privacy(randomized_response(3, (0, 1)), prior, default=0)
    assert report.sd[((1, 0), 1)] == report.sd[((1, 1), 1)] == F(4, 15)
    assert report.sd[((0, 1), 1)] == F(12, 55)
    assert report.sd[((0, 1), 2)] == F(1, 4)
    assert report.worst_sd == F(4, 15)
    assert report.worst[1] == 1
    assert semantic_privacy(random_record(), prior, default=0).worst_sd == 1


# -- an independent float computation of the same SDs ----------------------------------------------
@settings(max_examples=examples(20), deadline=None)
@given(exp_eps_values, st.data())
def test_matches_brute_force_floats(exp_eps: Fraction, data: st.DataObject) -> None:
    """Every (t, i) SD equals a direct numpy evaluation of spec 2.10's formulas (binary RR, n = 2,
    default 0): likelihood matrices built from p = x / (x + 1), not from the module."""
    prior = data.draw(joint_priors((0, 1), 2))
    x = float(exp_eps)
    keep = x / (x + 1)
    dbs = list(itertools.product((0, 1), repeat=2))
    b = np.array([float(prior.get(d, 0)) for d in dbs])

    def lik(d: tuple[int, ...], t: tuple[int, ...]) -> float:
        return math.prod(keep if a == c else 1 - keep for a, c in zip(d, t, strict=True))

    report = semantic_privacy(randomized_response(exp_eps, (0, 1)), prior, default=0)
    for t in dbs:
        w0 = np.array([lik(d, t) for d in dbs]) * b
        for i in (1, 2):
            wi = (
                np.array(
                    [lik(tuple(0 if k == i - 1 else v for k, v in enumerate(d)), t) for d in dbs]
                )
                * b
            )
            sd = 0.5 * np.abs(w0 / w0.sum() - wi / wi.sum()).sum()
            assert float(report.sd[(t, i)]) == pytest.approx(sd, abs=1e-12)


# -- bad input -------------------------------------------------------------------------------------
def test_bad_input() -> None:
    rr = randomized_response(3, (0, 1))
    with pytest.raises(ParameterError, match="sums to"):
        semantic_privacy(rr, {(0,): F(1, 2)})
    with pytest.raises(ParameterError, match="exact"):
        semantic_privacy(rr, {(0,): 0.5, (1,): 0.5})
    with pytest.raises(ParameterError, match="same number"):
        semantic_privacy(rr, {(0,): F(1, 2), (0, 1): F(1, 2)})
    with pytest.raises(ParameterError, match="sums to"):
        semantic_privacy({(0,): {"a": F(1, 2)}}, {(0,): 1})
    with pytest.raises(ParameterError, match="at least 1"):
        randomized_response(F(1, 2), (0, 1))
    with pytest.raises(ParameterError, match="game"):
        posterior(rr, uniform_prior((0, 1), 2), (0, 0), game=3)
    with pytest.raises(ParameterError, match="alpha"):
        geometric_pmf(1, 0)


def test_docstring_examples_run() -> None:
    import doctest

    from kerckhoffs.dp import semantic

    failed, tried = doctest.testmod(semantic)
    assert tried > 0 and failed == 0


def test_worst_over_priors() -> None:
    """X3's search: at least the uniform prior's 1/4 (spec 4.3), at most tanh(ln 3) = 4/5; the
    same seed gives the same answer; the TV sanitizer reaches 1."""
    rr = randomized_response(3, (0, 1))
    worst, prior = worst_over_priors(rr, (0, 1), 2, trials=30, seed=7)
    assert F(1, 4) <= worst <= tanh_bound(3)
    assert sum(prior.values()) == 1
    assert worst_over_priors(rr, (0, 1), 2, trials=30, seed=7) == (worst, prior)
    assert worst_over_priors(random_record(), (0, 1), 2, trials=0)[0] == 1
