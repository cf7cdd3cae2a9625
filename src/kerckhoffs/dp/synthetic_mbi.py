"""OpenDP's marginal-based synthetic data (``opendp.extras.mbi``: MST and AIM contingency
tables, that is Private-PGM), as :mod:`kerckhoffs.dp.synthetic` uses it.

MST: McKenna, Miklau and Sheldon, "Winning the NIST Contest: A scalable and general approach
to differentially private synthetic data", Journal of Privacy and Confidentiality, 2021.
AIM: McKenna, Mullins, Sheldon and Miklau, "AIM: An Adaptive and Iterative Mechanism for
Differentially Private Synthetic Data", VLDB 2022. Both measure noisy marginals (every noise
draw and every private selection is OpenDP's) and fit a graphical model to them (Private-PGM:
McKenna, Sheldon and Miklau, "Graphical-model based estimation and inference for differential
privacy", ICML 2019), which is post-processing.

Two things are ours, both inside OpenDP's accounting:

* :class:`BudgetedMST`: OpenDP 0.16's MST splits the selection budget into one share per
  selected edge, each rounded up, so the shares add up to one ulp more than the budget and
  every release fails with ``insufficient budget for query`` (upstream issue "Budget
  accounting error in MST and AIM implementation"). The subclass asks its selection for
  ``d_out * (1 - 1e-9)`` instead; the composition that checks every query is OpenDP's, and
  the release's recorded loss is OpenDP's own map of the whole measurement. No OpenDP module
  state is touched.
* The noise scales OpenDP's MST searches for on every run (about a thousand measurements
  built per release) are remembered by their public inputs (measure, sensitivity, budget,
  marginal shapes): the remembered scale still goes through OpenDP's measurement and its
  compositor, which refuses a query over its budget, so a wrong cache fails closed.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from kerckhoffs.errors import ParameterError, PrivacyCheckFailed

INSTALL_HINT = "pip install 'kerckhoffs[dp]'"
"""What a user without OpenDP's synthetic-data extra is told to run."""

DEFAULT_ITERS = 1000
"""Mirror-descent iterations of the graphical-model fit (mbi's default). On Adult at epsilon
1 the mean total variation distance of the 2-way marginals was 0.133 at 100 iterations,
0.103 at 300 and 0.096 at 1,000, at about the same CPU time (jax's compilation dominates)."""


def load() -> Any:
    """``opendp.prelude`` with the ``contrib`` features on, after checking that OpenDP's
    synthetic-data extra (mbi, jax, polars) is installed: a one-line ParameterError naming
    the install command otherwise."""
    try:
        import mbi  # type: ignore[import-untyped]  # noqa: F401
        import opendp.prelude as dp
        import polars  # noqa: F401
    except ImportError as exc:
        raise ParameterError(
            f"dp-synthetic needs OpenDP's synthetic-data extra ({exc.name} is missing): "
            f"{INSTALL_HINT}"
        ) from None
    dp.enable_features("contrib")
    return dp


@functools.cache
def estimator(iters: int) -> Callable[..., Any]:
    """mbi's mirror descent with ``iters`` iterations (one function per count, so a
    measurement built with it can be remembered)."""

    def fit(domain: Any, loss_fn: Any, *, potentials: Any = None) -> Any:
        from mbi.estimation import mirror_descent  # type: ignore[import-untyped]

        return mirror_descent(domain, loss_fn, potentials=potentials, iters=iters)

    fit.__name__ = f"mirror_descent_{iters}"
    return fit


ONEWAY_SHARE = 0.5
"""The share of the budget on the one-way marginals (OpenDP 0.16's default for MST)."""

_SCALES: dict[tuple[Any, ...], float] = {}
"""Noise scales found by OpenDP's binary search, by the search's public inputs."""


def _scaled(make: Callable[[float], Any], d_in: Any, d_out: float, key: tuple[Any, ...]) -> Any:
    """``make(scale)`` at the smallest scale whose OpenDP map at ``d_in`` is within
    ``d_out``, remembered by ``key``.

    Noise of scale ``s`` costs ``c / s`` (Laplace-type noise, pure DP) or ``c / s²``
    (Gaussian, zCDP); one probe at ``s = 1`` gives ``c``, the scale follows, and it moves up
    an ulp at a time until OpenDP's own map is within ``d_out`` (a few measurements built
    instead of the thousand of a binary search). Whatever the arithmetic, the measurement
    used is the one whose map OpenDP checked, and OpenDP's compositor checks it again."""
    scale = _SCALES.get(key)
    if scale is None:
        probe = float(make(1.0).map(d_in))
        power = 2.0 if "ZeroConcentrated" in key[1] else 1.0
        scale = (probe / d_out) ** (1 / power)
        for _ in range(200):
            if float(make(scale).map(d_in)) <= d_out:
                break
            scale = float(np.nextafter(scale, np.inf)) * (1 + 1e-12)
        else:  # pragma: no cover (the map is proportional to 1/s or 1/s²)
            raise PrivacyCheckFailed(f"no noise scale meets the budget {d_out} for {key[0]}")
        _SCALES[key] = scale
    return make(scale)


def budgeted_mst() -> type:
    """The :class:`BudgetedMST` class (built on first use: OpenDP's extra is optional)."""
    return _budgeted_mst()


@functools.cache
def _budgeted_mst() -> type:
    load()
    from opendp.combinators import then_adaptive_composition
    from opendp.extras.mbi import MST
    from opendp.extras.mbi._utilities import (
        get_associated_metric,
        get_cardinalities,
        make_noise_marginals,
        make_stable_marginals,
        prior,
    )

    class BudgetedMST(MST):
        """OpenDP 0.16's MST (one-way marginals, report-noisy-max choice of a spanning tree of
        pairs, the chosen pairs measured, a model fitted) with its selection asked for
        ``d_out * (1 - 1e-9)`` (module docstring), its noise scales found by
        :func:`_scaled`, and the one-way marginals measured here, with the shares OpenDP
        gives them (half the budget; of the rest, ``1 - measure_split`` to the choice),
        rather than by OpenDP's table builder, which binary-searches their scale over a
        thousand compiled Polars plans each time it is built. Build it with
        ``oneway="unkeyed"`` so the table builder leaves the one-way marginals to it."""

        @property
        def needs_model(self) -> bool:
            """The model is fitted here, after the one-way marginals."""
            return False

        def make_marginals(
            self,
            input_domain: Any,
            input_metric: Any,
            output_measure: Any,
            d_in: Any,
            d_out: float,
            *,
            marginals: Any,
            model: Any,
        ) -> Any:
            from mbi import Domain
            from opendp._internal import _new_pure_function

            d_one = d_out * ONEWAY_SHARE
            rest = prior(prior(d_out - d_one))
            d_measure = rest * self.measure_split
            d_select = prior(prior(rest - d_measure))
            lp_metric = get_associated_metric(output_measure)
            singles: list[tuple[str, ...]] = [(c,) for c in input_domain.columns]
            edges: list[tuple[str, ...]] = list(itertools.combinations(input_domain.columns, 2))
            t_marginals = make_stable_marginals(
                input_domain, input_metric, lp_metric, singles + edges
            )
            d_marginals = t_marginals.map(d_in)
            sizes = get_cardinalities(input_domain)
            domain = Domain.fromdict(sizes)
            estimator = self.estimator
            num_selections = self.num_selections

            def noisy(cliques: list[tuple[str, ...]], budget: float, name: str) -> Any:
                key = (
                    name,
                    str(output_measure),
                    tuple((tuple(sizes[x] for x in c), d_marginals[c]) for c in cliques),
                    float(budget),
                )
                return _scaled(
                    lambda s: make_noise_marginals(
                        *t_marginals.output_space, output_measure, cliques, scale=s
                    ),
                    d_marginals,
                    budget,
                    key,
                )

            def function(qbl: Any) -> Any:
                ones = marginals.add(*qbl(noisy(singles, d_one, "one-way")))
                first = estimator(domain, ones.flatten())
                m_select = _mst_select(
                    *t_marginals.output_space,
                    output_measure,
                    d_in=d_marginals,
                    d_out=d_select * (1 - 1e-9),
                    edges=edges,
                    model=first,
                    num_selections=num_selections,
                )
                selected = qbl(m_select)
                all_marginals = ones.add(*qbl(noisy(selected, d_measure, "measure")))
                fitted = estimator(domain, all_marginals.flatten(), potentials=first.potentials)
                return all_marginals, fitted

            return (
                t_marginals
                >> then_adaptive_composition(
                    output_measure=output_measure,
                    d_in=t_marginals.map(d_in),
                    d_mids=[d_one, d_select, d_measure],
                )
                >> _new_pure_function(function)
            )

    return BudgetedMST


def _mst_select(
    input_domain: Any,
    input_metric: Any,
    output_measure: Any,
    d_in: Any,
    d_out: float,
    edges: list[tuple[str, ...]],
    model: Any,
    num_selections: int | None,
) -> Any:
    """OpenDP 0.16's ``_make_mst_select`` (report-noisy-max over the unconnected edges, one
    share of ``d_out`` per selection) with its noise scale remembered."""
    from opendp._internal import _make_transformation, _new_pure_function
    from opendp.combinators import then_adaptive_composition
    from opendp.extras.mbi._utilities import prior
    from opendp.measurements import make_noisy_max
    from scipy.cluster.hierarchy import DisjointSet

    max_selections = len(model.domain.attrs) - 1
    count = min(max(0, num_selections or max_selections), max_selections)
    d_select = prior(d_out / count)
    t_scores = _mst_scores(input_domain, input_metric, edges, model)
    d_scores = t_scores.map(d_in)

    def function(qbl: Any) -> list[tuple[str, ...]]:
        selected: list[tuple[str, ...]] = []
        components = DisjointSet(model.domain.attrs)
        for _ in range(count):
            unconnected = [i for i, e in enumerate(edges) if not components.connected(*e)]
            t_unconnected = _make_transformation(
                t_scores.output_domain,
                t_scores.output_metric,
                t_scores.output_domain,
                t_scores.output_metric,
                function=lambda scores, idx=unconnected: [scores[i] for i in idx],
                stability_map=lambda d: d,
            )

            def rnm(s: float, t: Any = t_unconnected) -> Any:
                return t >> make_noisy_max(
                    t.output_domain, t.output_metric, output_measure=output_measure, scale=s
                )

            m_rnm = _scaled(
                rnm,
                d_scores,
                d_select,
                ("select", str(output_measure), float(d_scores), float(d_select)),
            )
            edge = edges[unconnected[qbl(m_rnm)]]
            selected.append(edge)
            components.merge(*edge)
        return selected

    return (
        t_scores
        >> then_adaptive_composition(output_measure, d_in=d_scores, d_mids=[d_select] * count)
        >> _new_pure_function(function)
    )


def _mst_scores(
    input_domain: Any, input_metric: Any, queries: list[tuple[str, ...]], model: Any
) -> Any:
    """OpenDP 0.16's ``_make_mst_scores`` (each pair's L1 distance between its exact marginal
    and the model's, stability ``max`` of the marginals' distances), with the model's pair
    marginals computed as outer products when the model is a product of one-way marginals
    (what MST selects on: the fit to its one-way marginals), instead of one compiled
    variable elimination per pair. The model is a DP output, so this changes speed only."""
    from opendp._internal import _make_transformation
    from opendp.domains import atom_domain, vector_domain
    from opendp.metrics import linf_distance

    independent = all(len(c) <= 1 for c in model.cliques)
    if independent:
        ones = {
            a: np.asarray(model.project((a,)).values, dtype=np.float64) for a in model.domain.attrs
        }
        total = float(model.total)

    def synth(query: tuple[str, ...]) -> np.ndarray:
        if independent:
            return np.outer(ones[query[0]], ones[query[1]]) / max(total, 1e-300)
        return np.asarray(model.project(query).values)

    def scores(exact: Any) -> list[float]:
        return [float(np.abs(np.asarray(exact[q]) - synth(q)).sum()) for q in queries]

    return _make_transformation(
        input_domain=input_domain,
        input_metric=input_metric,
        output_domain=vector_domain(atom_domain(T="f64", nan=False)),
        output_metric=linf_distance(T="f64", monotonic=False),
        function=scores,
        stability_map=lambda d_in: max(d_in.values()),
    )


def zcdp_rho(epsilon: float, delta: float) -> float:
    """The largest rho whose conversion to ``(epsilon', delta)`` by OpenDP
    (``make_zCDP_to_approxDP`` then ``make_fix_delta``) has ``epsilon' <= epsilon`` (Bun and
    Steinke, TCC 2016, Prop. 1.3, as OpenDP computes it), by bisection on OpenDP's map."""
    lo, hi = 0.0, max(epsilon, 1e-12)
    if _approx_epsilon(hi, delta) <= epsilon:  # pragma: no cover (rho <= epsilon always)
        return hi
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if _approx_epsilon(mid, delta) <= epsilon:
            lo = mid
        else:
            hi = mid
    if lo <= 0:
        raise ParameterError(f"epsilon {epsilon:g} with delta {delta:g} leaves no zCDP budget")
    return lo


@functools.lru_cache(maxsize=4096)
def _approx_epsilon(rho: float, delta: float) -> float:
    """OpenDP's epsilon for a ``rho``-zCDP measurement at ``delta``."""
    dp = load()
    proxy = dp.m.make_gaussian(
        dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=1.0
    )
    # the Gaussian at scale 1 has rho = d_in**2 / 2, so d_in = sqrt(2 rho) gives rho
    approx = dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(proxy), delta)
    return float(approx.map(math.sqrt(2 * rho))[0])


__all__ = ["DEFAULT_ITERS", "INSTALL_HINT", "budgeted_mst", "estimator", "load", "zcdp_rho"]
