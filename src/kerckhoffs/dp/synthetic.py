"""DP synthetic microdata: rows drawn from a graphical model fitted to noisy marginals, MST or
AIM through OpenDP (:mod:`kerckhoffs.dp.synthetic_mbi`; MST: McKenna, Miklau and Sheldon,
"Winning the NIST Contest", Journal of Privacy and Confidentiality 2021; AIM: McKenna et al.,
VLDB 2022). Published as a table a user analyses like any other release
(:class:`~kerckhoffs.release.synthetic.SyntheticRelease`).

What is private and what is public:

* The *domain* is public: each column's values are a hierarchy's nodes at a level
  (:func:`kerckhoffs.dp.domain.cell_domain`: a hierarchy file the schema gives, never values
  read from the data). Rows are encoded to node codes with numpy and OpenDP sees integer keys
  ``0..k-1`` (it adds one "null" key per column, which no row has).
* Every noise draw and every private choice of marginals is OpenDP's; the privacy loss
  recorded is OpenDP's map of the whole measurement at the neighbour distance (a symmetric
  distance of ``contributions`` rows under add/remove, twice that under substitution).
  ``delta == 0``: pure epsilon-DP (discrete Laplace noise, ``max_divergence``); ``delta > 0``:
  rho-zCDP with the largest rho OpenDP converts to at most ``(epsilon, delta)``
  (discrete Gaussian noise).
* Everything after the noisy marginals is post-processing (Dwork and Roth 2014, Prop. 2.1):
  the model fit (mirror descent), drawing rows from the model, dropping rows that fall in a
  "null" key, sorting. Rows are drawn i.i.d. from the model's conditionals (mbi's
  ``method="sample"``), made deterministic given the fitted model (its generator is seeded
  from the noisy marginals and the caller's global numpy state is restored), so no random
  draw other than OpenDP's decides anything. Not mbi's ``"round"``: it gives each later column
  by the rank of a row inside its parent's group, in row order, so two columns drawn from the
  same parent come out correlated by rank (measured on Adult at epsilon 1: no synthetic woman
  below 12th grade, and every Masters and Doctorate a woman).
  The number of rows is mbi's estimate from the noisy marginals, never the true count.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs.data.schema import Kind
from kerckhoffs.data.table import Table
from kerckhoffs.dp.counts import refuse_missing_drop
from kerckhoffs.dp.domain import cell_domain, parse_levels
from kerckhoffs.dp.loss import Measure
from kerckhoffs.dp.mechanisms import (
    Mechanism,
    Neighbours,
    NoiseSpec,
    check_budget,
    count_neighbours,
    opendp_version,
)
from kerckhoffs.dp.synthetic_mbi import DEFAULT_ITERS, budgeted_mst, estimator, load, zcdp_rho
from kerckhoffs.errors import ParameterError, PrivacyCheckFailed
from kerckhoffs.models.base import PrivacyModel
from kerckhoffs.release.provenance import Provenance
from kerckhoffs.release.synthetic import (
    INTERVAL_LEVEL,
    POST_PROCESSING,
    SyntheticRelease,
    qi_groups,
    synthetic_table,
)

METHODS = ("mst", "aim")
"""The synthesizers: MST (default; about 10 s on Adult) and AIM (much slower: it did not
finish on Adult in 10 minutes)."""


def default_levels(table: Table, levels: Mapping[str, int] | str | None) -> dict[str, int]:
    """Each column's level: ``levels`` where given, else the leaves, except a numeric column
    whose hierarchy file has a level between its leaves and its root, which starts at level 1
    (Adult's age in 5-year bins rather than 74 single years)."""
    given = parse_levels(levels)
    out: dict[str, int] = {}
    for col in [*table.qi_columns, table.sa_column]:
        h = col.hierarchy
        from_file = table.schema.column(col.name).hierarchy is not None
        if col.name in given:
            out[col.name] = given[col.name]
        elif col.kind == Kind.NUMERIC and from_file and h is not None and h.height >= 2:
            out[col.name] = 1
        else:
            out[col.name] = 0
    return out


def public_axes(
    table: Table, levels: Mapping[str, int] | str | None
) -> tuple[list[dict[str, Any]], list[np.ndarray], list[np.ndarray]]:
    """The axes (role, name, kind, level), each axis's node labels and each row's node code
    (int64), for every QI and the SA; a column without a public domain is a one-line
    ParameterError (:func:`~kerckhoffs.dp.domain.cell_domain`)."""
    lv = default_levels(table, levels)
    domain, _ = cell_domain(table, lv, with_sa=True, max_cells=2**62)
    columns = [*table.qi_columns, table.sa_column]
    raw = [table.qi[:, j] for j in range(table.d)] + [table.sa]
    axes, labels, codes = [], [], []
    for i, (col, code) in enumerate(zip(columns, raw, strict=True)):
        h = col.hierarchy
        if h is None:  # pragma: no cover (cell_domain refused it)
            raise ParameterError(f"column {col.name!r} has no public domain")
        level = domain.levels[i]
        axes.append(
            {
                "role": "quasi" if i < table.d else "sensitive",
                "name": col.name,
                "kind": col.kind.value,
                "level": level,
            }
        )
        labels.append(np.asarray(domain.labels[i]).astype(str))
        codes.append(h.node_ids[level][col.leaves(code)].astype(np.int64))
    return axes, labels, codes


def dp_synthetic(
    table: Table,
    epsilon: float,
    *,
    delta: float = 0.0,
    method: str = "mst",
    levels: Mapping[str, int] | str | None = None,
    neighbours: Neighbours | str = Neighbours.SUBSTITUTION,
    contributions: int = 1,
    models: Sequence[PrivacyModel] = (),
    iters: int = DEFAULT_ITERS,
    provenance: Provenance | None = None,
) -> SyntheticRelease:
    """``(epsilon, delta)``-DP synthetic rows of ``table`` (every QI and the SA) over a
    public domain, by OpenDP's MST (default) or AIM (module docstring).

    ``neighbours``: ``substitution`` (default) or ``add-remove``; ``contributions``: the most
    rows one person has (the privacy map is OpenDP's at that many rows, twice as many under
    substitution). ``iters``: mirror-descent iterations of the model fit. Fails closed
    (:class:`~kerckhoffs.errors.PrivacyCheckFailed`) when OpenDP's map exceeds the target.

    >>> # doctest: +SKIP
    >>> release = dp_synthetic(table, 1.0)           # doctest: +SKIP
    >>> release.to_pandas().head()                   # doctest: +SKIP
    """
    eps, dlt = check_budget(epsilon, delta)
    nb = count_neighbours(neighbours)
    how = str(method).strip().lower()
    if how not in METHODS:
        raise ParameterError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    k = _positive_int(contributions, "contributions")
    fit_iters = _positive_int(iters, "iters")
    refuse_missing_drop(table, "dp-synthetic")
    axes, labels, codes = public_axes(table, levels)
    load()
    sizes = tuple(len(x) for x in labels)
    d_rows = k * (2 if nb == Neighbours.SUBSTITUTION else 1)
    rho = zcdp_rho(eps, dlt) if dlt > 0 else None
    meas = _measurement(
        sizes, rho is not None, d_rows, rho if rho is not None else eps, how, fit_iters
    )
    loss, rho_map = privacy_map(meas, d_rows, dlt)
    if loss > eps or (rho is not None and rho_map is not None and rho_map > rho):
        raise PrivacyCheckFailed(f"OpenDP's privacy map {loss} exceeds epsilon {eps}")
    fitted = meas(_frame(codes).lazy())
    rows = synthesize(fitted.model, sizes)
    measured = measured_marginals(fitted, axes, labels, rho is not None)
    synth = pd.DataFrame({a["name"]: lab[r] for a, lab, r in zip(axes, labels, rows, strict=True)})
    _fit_errors(measured, rows)
    noise = NoiseSpec(
        Mechanism.GAUSSIAN if rho is not None else Mechanism.GEOMETRIC,
        nb,
        d_rows,
        float(min(m["scale"] for m in measured)),
        eps,
        dlt,
        loss,
        opendp_version(),
        int(sum(m["cells"] for m in measured)),
        tuple(_part(m, rho is not None) for m in measured),
        "records",
        POST_PROCESSING,
    )
    table_out = synthetic_table(synth, [a["name"] for a in axes[:-1]], axes[-1]["name"])
    return SyntheticRelease(
        table_out,
        qi_groups(table_out),
        rows=synth,
        marginal_table=_marginal_frame(measured, axes),
        noise=noise,
        axes=axes,
        method=how,
        measure=Measure.ZCDP if rho is not None else Measure.PURE,
        rho=rho_map,
        contributions=k,
        iters=fit_iters,
        provenance=provenance or Provenance("dp-synthetic"),
        models=tuple(models),
    )


def _positive_int(value: Any, name: str) -> int:
    try:
        out = int(str(value))
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a positive integer, got {value!r}") from None
    if out < 1:
        raise ParameterError(f"{name} must be a positive integer, got {value!r}")
    return out


def _names(count: int) -> list[str]:
    """The column names OpenDP sees (``c0, c1, ...``: a user column named ``len`` would clash
    with OpenDP's count column)."""
    return [f"c{i}" for i in range(count)]


def _frame(codes: list[np.ndarray]) -> Any:
    import polars as pl

    return pl.DataFrame({n: c for n, c in zip(_names(len(codes)), codes, strict=True)})


@functools.lru_cache(maxsize=32)
def _measurement(
    sizes: tuple[int, ...], zcdp: bool, d_rows: int, d_out: float, method: str, iters: int
) -> Any:
    """OpenDP's contingency-table measurement over columns of ``sizes`` integer keys
    (remembered: it depends on public parameters only, and building it takes seconds)."""
    dp = load()
    from opendp.extras.mbi import AIM, make_contingency_table

    names = _names(len(sizes))
    domain = dp.lazyframe_domain([dp.series_domain(n, dp.atom_domain(T=dp.i64)) for n in names])
    algorithm = (
        budgeted_mst()(estimator=estimator(iters), oneway="unkeyed")
        if method == "mst"
        else AIM(estimator=estimator(iters))
    )
    measure = dp.zero_concentrated_divergence() if zcdp else dp.max_divergence()
    meas, _, _ = make_contingency_table(
        domain,
        dp.frame_distance(dp.symmetric_distance()),
        measure,
        d_in=[dp.polars.Bound(per_group=d_rows)],
        d_out=d_out,
        keys={n: list(range(s)) for n, s in zip(names, sizes, strict=True)},
        algorithm=algorithm,
    )
    return meas


def privacy_map(meas: Any, d_rows: int, delta: float) -> tuple[float, float | None]:
    """``(epsilon, rho)`` OpenDP's map gives at ``d_rows`` rows: a pure measurement's epsilon
    (rho None), or a zCDP measurement's rho and its conversion to epsilon at ``delta``."""
    dp = load()
    d_in = [dp.polars.Bound(per_group=d_rows)]
    if delta == 0:
        return float(meas.map(d_in)), None
    approx = dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(meas), delta)
    return float(approx.map(d_in)[0]), float(meas.map(d_in))


def synthesize(model: Any, sizes: tuple[int, ...]) -> list[np.ndarray]:
    """Rows drawn i.i.d. from the fitted model (mbi's ``method="sample"``; module docstring:
    why not its rounding), each column's node codes; rows with a "null" key (code ``size``: a
    value no row has, which noise can give mass) dropped; rows sorted, so their order says
    nothing but their values. mbi draws from numpy's global generator: it is seeded here from
    the model's potentials (a function of the noisy marginals only) and the caller's state
    restored."""
    names = _names(len(sizes))
    digest = hashlib.sha256()
    for clique in sorted(model.potentials.cliques):
        digest.update(np.asarray(model.potentials[clique].values).tobytes())
    state = np.random.get_state()  # noqa: NPY002 (mbi draws from the global generator)
    try:
        np.random.seed(int.from_bytes(digest.digest()[:4], "little"))  # noqa: NPY002
        df = model.synthetic_data(None, "sample").df
    finally:
        np.random.set_state(state)  # noqa: NPY002
    cols = [df[n].to_numpy(dtype=np.int64) for n in names]
    keep = np.ones(len(df), dtype=bool)
    for c, s in zip(cols, sizes, strict=True):
        keep &= c < s
    cols = [c[keep] for c in cols]
    order = np.lexsort(cols[::-1]) if cols and cols[0].size else np.zeros(0, dtype=np.int64)
    return [c[order] for c in cols]


def measured_marginals(
    fitted: Any, axes: list[dict[str, Any]], labels: list[np.ndarray], zcdp: bool
) -> list[dict[str, Any]]:
    """Each marginal OpenDP measured: its attributes, noisy counts over the public cells
    (the "null" keys dropped), noise standard deviation and scale, and the half-width of the
    interval that holds the noise with probability :data:`INTERVAL_LEVEL`, from OpenDP's
    accuracy functions for the discrete Laplace (pure DP) or discrete Gaussian (zCDP)."""
    load()
    from opendp.accuracy import (
        discrete_gaussian_scale_to_accuracy,
        discrete_laplacian_scale_to_accuracy,
    )

    index = {n: i for i, n in enumerate(_names(len(axes)))}
    out = []
    for m in fitted.marginals.flatten():
        where = [index[c] for c in m.clique]
        shape = tuple(len(labels[i]) + 1 for i in where)
        values = np.asarray(m.noisy_measurement, dtype=np.float64).reshape(shape)
        values = values[tuple(slice(0, s - 1) for s in shape)]
        std = float(m.stddev)
        scale = std if zcdp else std / math.sqrt(2)
        alpha = 1 - INTERVAL_LEVEL
        acc = (
            discrete_gaussian_scale_to_accuracy(scale, alpha)
            if zcdp
            else discrete_laplacian_scale_to_accuracy(scale, alpha)
        )
        out.append(
            {
                "attributes": [axes[i]["name"] for i in where],
                "where": where,
                "labels": [labels[i] for i in where],
                "noisy": values,
                "stddev": std,
                "scale": scale,
                "accuracy": float(acc),
                "cells": int(values.size),
            }
        )
    return out


def _fit_errors(measured: list[dict[str, Any]], rows: list[np.ndarray]) -> None:
    """Add to each measured marginal the L1 distance between the synthetic rows' marginal
    and the noisy one (both DP outputs: post-processing)."""
    for m in measured:
        shape = m["noisy"].shape
        flat = np.zeros(rows[0].shape, dtype=np.int64) if rows else np.zeros(0, np.int64)
        for i, s in zip(m["where"], shape, strict=True):
            flat = flat * s + rows[i]
        counts = np.bincount(flat, minlength=int(np.prod(shape))).reshape(shape)
        m["l1_synthetic"] = float(np.abs(counts - m["noisy"]).sum())


def _part(m: dict[str, Any], zcdp: bool) -> dict[str, Any]:
    """What release.json states about one measured marginal (the expected absolute error of
    a cell: ``b`` for Laplace noise of scale ``b``, ``sigma sqrt(2/pi)`` for Gaussian noise,
    the continuous distributions' values)."""
    return {
        "name": "+".join(m["attributes"]),
        "attributes": list(m["attributes"]),
        "cells": m["cells"],
        "noise_scale": m["scale"],
        "noise_stddev": m["stddev"],
        "interval_level": INTERVAL_LEVEL,
        "interval_half_width": m["accuracy"],
        "expected_abs_error_per_cell": m["scale"] * (math.sqrt(2 / math.pi) if zcdp else 1.0),
        "l1_synthetic_vs_noisy": m["l1_synthetic"],
    }


def _marginal_frame(measured: list[dict[str, Any]], axes: list[dict[str, Any]]) -> pd.DataFrame:
    """The measured marginals, one row per public cell: ``marginal`` (its attributes joined
    by ``+``), each axis's label (``*`` for axes outside the marginal), the noisy ``count``
    and its interval ``lower``, ``upper`` at :data:`INTERVAL_LEVEL`."""
    parts = []
    for m in measured:
        shape = m["noisy"].shape
        grid = np.indices(shape).reshape(len(shape), -1) if shape else np.zeros((0, 1), int)
        cells = int(np.prod(shape))
        frame: dict[str, Any] = {"marginal": np.full(cells, "+".join(m["attributes"]), object)}
        for a in axes:
            frame[a["name"]] = np.full(cells, "*", dtype=object)
        for j, i in enumerate(m["where"]):
            frame[axes[i]["name"]] = m["labels"][j][grid[j]].astype(object)
        noisy = m["noisy"].reshape(-1)
        frame["count"] = noisy.astype(np.int64)
        frame["lower"] = noisy - m["accuracy"]
        frame["upper"] = noisy + m["accuracy"]
        parts.append(pd.DataFrame(frame))
    return pd.concat(parts, ignore_index=True)


__all__ = ["METHODS", "default_levels", "dp_synthetic", "public_axes", "synthesize"]
