"""The insider attack of paper 003 (Goryczka, Xiong, Fung, "m-Privacy for Collaborative Data
Publishing", section I and Table I; ``docs/theory/m-privacy.md#scenarios``,
``docs/theory/m-privacy.md#table-i-attack``, ``docs/theory/m-privacy.md#coalitions``,
``docs/theory/m-privacy.md#definition`` and ``docs/theory/m-privacy.md#insider-attack``).

Several data providers publish one anonymized table built from the union of their records. An
outsider sees each published group as it is; an *insider*, a provider or a coalition of up to
``m`` colluding providers, also knows its own records, subtracts them from every group and
reads what is left. In the paper's Table I, hospital P1 removes its two records from the
``[20-30]`` group of the 3-anonymous, 2-diverse ``T_a*``: one record is left, Sara's, and P1
learns she has epilepsy.

**What the coalition knows** (:class:`~kerckhoffs.attacks.knowledge.Coalition`):

* its provider ids, when the attacked release is in-process and its table has a provider
  column (files never publish it: the paper's Algorithm 2 does not say whether the provider
  column is published and we do not publish it,
  ``docs/theory/m-privacy.md#err-provider-published``): its rows are exactly known;
* or its own records (QI and SA columns, original values), placed in the published groups
  by their QIs *and* SA values together (:mod:`kerckhoffs.attacks.insider.placement`): a record
  fits a group whose cells cover its QIs (:func:`kerckhoffs.attacks.locate.locate`) and whose
  published SA counts hold its value, and the records are assigned to groups all at once, no
  group receiving more records of a value than it publishes (a transportation problem). The
  boxes of a ``provider-aware`` release may overlap, so a record may fit several groups; the
  exact assignment usually settles it (a record of a value only one of them publishes). Rows of
  one group holding the same SA value are indistinguishable in the release, so the
  coalition's records of value ``v`` in group ``g`` take the first ``C[g, v]`` such rows; the
  remainder is the same multiset whichever rows are taken. When several assignments remain
  and they subtract different numbers from a group, the coalition cannot tell its own rows
  there from the others'. Such a group is settled when every possible subtraction leaves a
  remainder that keeps the promise (then no placement, the true one included, discloses a
  row there; ``details["groups_safe_in_every_placement"]``); otherwise it is not attacked,
  and the verdict says so and is never SAFE (``details["groups_undecided"]``). A record that
  fits no group is taken as not published (``details["records_unplaced"]``, said in the
  verdict);
* or only a size ``m``: the attack then searches each group's worst coalition of ``m`` of
  its providers (``worst=True``; needs the providers, so an in-process release).

**Posterior.** Per group the coalition removes its rows; for each remaining row and each SA
value ``v`` it reports ``R[g, v] / |R[g]|``, the share of ``v`` among the remaining rows
(uniform over the remaining multiset: the release says nothing else about who holds what).
Groups the coalition does not touch tell it nothing an outsider does not know and are not
reported; groups it owns entirely have no victim (the paper's Definition 2.1 does not treat a
coalition owning a whole group; we ignore such coalitions, ``docs/theory/m-privacy.md#err-owning``).

**Breach.** The promise is the release's models (:attr:`Release.models`, else its
provenance, else ``models=``), evaluated on each group's remainder, as m-privacy does
(``docs/theory/m-privacy.md#definition`` and ``docs/theory/m-privacy.md#per-group``: m-private
w.r.t. C iff every group still satisfies C after any ``m`` providers' records are removed). A model
bounding a posterior (frequency l-diversity ``1/l``, m-confidentiality ``1/m``) breaches the
remaining rows whose sensitive value (or sensitive set) has a posterior above the bound; any other
violated model (fewer than ``k`` rows left: each remaining row is identified; fewer than ``l``
distinct values; ...) breaches every remaining row of the group. ``tuples`` has a ``violates``
column naming the models.

**Worst coalition** (``worst=True``, ``m=M``): per group, ``m_eff = min(M, n_G - 1)`` of the
group's ``n_G`` providers (``docs/theory/m-privacy.md#per-group``). The coalition chosen is the one
whose remainder violates a model, then has the largest posterior, then the fewest rows left. It is
found by brute force over the ``C(n_G, m_eff)`` coalitions, vectorized per group (every coalition's
remainder is one row of a count matrix the models evaluate at once); above :data:`MAX_COALITIONS`
coalitions in a group, the search is capped: the group is attacked by the ``m_eff`` providers with
the most records in it (the exact worst coalition for k-anonymity,
``docs/theory/m-privacy.md#verifier-machinery``) and counted in
``details["groups_capped"]``. The loop runs over groups, not rows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from kerckhoffs.attacks.insider.claim import recorded_check, settle
from kerckhoffs.attacks.insider.placement import Placement, place
from kerckhoffs.attacks.knowledge import Coalition, Knowledge
from kerckhoffs.attacks.locate import concat_ranges, locate
from kerckhoffs.attacks.registry import register_attack
from kerckhoffs.attacks.result import AttackResult, tuple_table
from kerckhoffs.data.hierarchy import format_value
from kerckhoffs.data.schema import Schema, SensitiveMode
from kerckhoffs.errors import ParameterError
from kerckhoffs.models import LDiversity, MConfidentiality, MPrivacy, parse_model
from kerckhoffs.models.base import PrivacyModel
from kerckhoffs.models.histogram import GroupHistogram
from kerckhoffs.release import Release

__all__ = [
    "MAX_COALITIONS",
    "CoalitionRows",
    "InsiderResult",
    "coalition_rows",
    "insider_attack",
    "remainder_posteriors",
]

ATTACK = "insider"
MAX_COALITIONS = 20_000
"""Most coalitions the worst-coalition search tries in one group (see the module docstring)."""


# -- the promise ----------------------------------------------------------------------------------
def _promised(release: Release, models: Sequence[PrivacyModel | str] | str | None) -> list:
    if isinstance(models, str):
        models = [m for m in models.split(";") if m.strip()]
    if models:
        return [parse_model(m) if isinstance(m, str) else m for m in models]
    chosen = list(release.models) or release.provenance.models()
    if not chosen:
        raise ParameterError(
            f"{ATTACK}: the release records no privacy model to hold the remainder to; pass "
            "models (CLI: -O model='k=3;distinct-l=2')"
        )
    return _constraints(chosen)


def _constraints(models: list[PrivacyModel]) -> list[PrivacyModel]:
    """The models the remainder is held to: an m-privacy model stands for its constraint
    (m-privacy promises that the remainder after any coalition of up to m providers still
    meets it), each model once."""
    out: list[PrivacyModel] = []
    for x in models:
        for part in x.models if isinstance(x, MPrivacy) else (x,):
            if all(part.to_dict() != y.to_dict() for y in out):
                out.append(part)
    return out


def _posterior_bound(model: PrivacyModel) -> float | None:
    """The posterior a model bounds (None: the model promises something else)."""
    if isinstance(model, LDiversity):
        return 1.0 / model.l
    if isinstance(model, MConfidentiality):
        return 1.0 / model.m
    return None


# -- whose rows -----------------------------------------------------------------------------------
class CoalitionRows(NamedTuple):
    """The coalition's rows of a release: ``mine`` (bool per row), ``undecided`` (bool per
    group: its records fit the group in more than one way, so the rows it removes there are
    unknown), figures for ``details``, and, for records placed from the files, the fewest and
    most records of each (group, value) any placement removes (``low``, ``high``) and the
    placement itself (:class:`~kerckhoffs.attacks.insider.placement.Placement`, cells ``group *
    n_values + value``)."""

    mine: np.ndarray
    undecided: np.ndarray
    details: dict[str, Any]
    low: np.ndarray | None = None
    high: np.ndarray | None = None
    placement: Placement | None = None


def coalition_rows(
    release: Release, coalition: Coalition, schema: Schema | None = None
) -> CoalitionRows:
    """The coalition's rows of ``release`` (module docstring): by provider id, or its records
    placed by QI box and SA value together (:func:`kerckhoffs.attacks.insider.placement.place`); a
    coalition giving both is placed by its records when the release has no provider column
    (one read from its files)."""
    t = release.table
    n_groups = release.partition.n_groups
    if coalition.providers and (coalition.records is None or t.provider is not None):
        if t.provider is None or t.provider_values is None:
            raise ParameterError(
                f"{ATTACK}: the coalition is given by provider ids, but the release's table has "
                "no provider column (published files never hold it): give the coalition's "
                'records instead ([coalition] records = "file.csv")'
            )
        known = [format_value(v) for v in t.provider_values.tolist()]
        missing = [p for p in coalition.providers if p not in known]
        if missing:
            raise ParameterError(
                f"{ATTACK}: provider {missing[0]!r} is not in the table "
                f"(providers: {', '.join(known[:12])})"
            )
        codes = [known.index(p) for p in coalition.providers]
        return CoalitionRows(
            np.isin(t.provider, codes),
            np.zeros(n_groups, dtype=bool),
            {"providers": list(coalition.providers)},
        )
    if coalition.records is None:
        raise ParameterError(f"{ATTACK}: the coalition names no providers and no records")
    records = coalition.records
    if t.sa_name not in records.columns:
        raise ParameterError(
            f"{ATTACK}: the coalition's records lack the sensitive column {t.sa_name!r}"
        )
    loc = locate(release, records, schema)
    labels = [format_value(x) for x in t.sa_column.labels.tolist()]
    code = pd.Index(labels).get_indexer([format_value(x) for x in records[t.sa_name].tolist()])
    n_sa = t.n_sa
    hist = release.histogram().counts
    # candidate cells (group, SA value): every group covering the record, at its own value
    who = np.repeat(np.arange(len(records), dtype=np.int64), loc.n_matches)
    known = code[who] >= 0
    cells = loc.candidates[known].astype(np.int64) * n_sa + code[who[known]]
    placement = place(who[known], cells, len(records), hist.ravel())
    take = placement.load.reshape(hist.shape)
    undecided = np.asarray(placement.variable.reshape(hist.shape).any(axis=1), dtype=bool)
    group, sa = release.partition.group, release.sa_published
    key = group.astype(np.int64) * n_sa + sa
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    first = np.searchsorted(sorted_key, sorted_key, side="left")
    rank = np.arange(key.size) - first  # position of each row among its (group, value) rows
    mine = np.zeros(t.n, dtype=bool)
    mine[order] = rank < take.ravel()[sorted_key]
    details = {
        "records": len(records),
        "records_unplaced": len(records) - placement.placed,
        "groups_undecided": int(undecided.sum()),
    }
    low, high = placement.low.reshape(hist.shape), placement.high.reshape(hist.shape)
    return CoalitionRows(mine, undecided, details, low, high, placement)


# -- posteriors -----------------------------------------------------------------------------------
def remainder_posteriors(counts: np.ndarray, removed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The remaining counts ``counts - removed`` (groups x SA values) and each value's share
    among the remaining rows (0 where a group has none left)."""
    rem = counts - removed
    size = rem.sum(axis=1, keepdims=True)
    return rem, np.divide(rem, size, out=np.zeros(rem.shape), where=size > 0)


def _violations(
    rem: np.ndarray, like: GroupHistogram, models: Sequence[PrivacyModel]
) -> np.ndarray:
    """bool [rows of rem, models]: the remainder violates the model (empty rows never do)."""
    alive = rem.sum(axis=1) > 0
    out = np.zeros((rem.shape[0], len(models)), dtype=bool)
    if alive.any():
        h = GroupHistogram(rem[alive], like.sensitive, like.mode, like.sa_kind)
        for j, model in enumerate(models):
            out[alive, j] = ~np.asarray(model.evaluate(h).group_ok, dtype=bool)
    return out


def _breached_cells(
    post: np.ndarray, viol: np.ndarray, like: GroupHistogram, models: Sequence[PrivacyModel]
) -> np.ndarray:
    """bool [groups, values]: the (group, value) tuples a violated model breaches."""
    sens = np.asarray(like.sensitive, dtype=bool)
    subset_set = not sens.all() and like.mode == SensitiveMode.SET
    set_post = post[:, sens].sum(axis=1, keepdims=True)
    out = np.zeros(post.shape, dtype=bool)
    for j, model in enumerate(models):
        bound = _posterior_bound(model)
        if bound is None:
            out |= viol[:, j : j + 1]
        elif subset_set:
            out |= viol[:, j : j + 1] & (set_post > bound + 1e-12) & sens[None, :]
        else:
            out |= viol[:, j : j + 1] & (post > bound + 1e-12) & sens[None, :]
    return out


# -- the result ----------------------------------------------------------------------------------
@dataclass
class InsiderResult(AttackResult):
    """An :class:`AttackResult` that may leave groups out: ``undecided_groups`` groups (holding
    ``undecided_rows`` rows) where the coalition's records fit in more than one way, so the
    coalition cannot tell which rows there are its own. Those groups are not attacked; the
    verdict says so and is never SAFE (the attack did not run on all of the release);
    ``settled_groups`` groups whose placement varies but whose remainder keeps the promise in
    every placement are attacked (no row of them disclosed, whatever the placement) and
    named; ``unplaced`` coalition records that fit no group are named too.

    ``claim_settled`` groups were settled only by the release's recorded m-privacy check
    (``claim``, its name: :mod:`kerckhoffs.attacks.insider.claim`), and the verdict says it
    relied on it; ``claim_unused`` says why the check was not relied on while groups stay
    undecided; ``claim_false`` that the coalition's records contradict it (a gap: never
    SAFE)."""

    undecided_groups: int = 0
    undecided_rows: int = 0
    unplaced: int = 0
    settled_groups: int = 0
    claim_settled: int = 0
    claim: str = ""
    claim_unused: str = ""
    claim_false: str = ""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.undecided_groups:  # a gap: the verdict is INCOMPLETE or UNSAFE, never SAFE
            why = f" ({self.claim} not relied on: {self.claim_unused})" if self.claim_unused else ""
            self.gaps.append(
                f"{self.undecided_groups:,} group(s) ({self.undecided_rows:,} of "
                f"{self.n_rows:,} rows) not attacked: the coalition's own records fit them in "
                f"more than one way, so it cannot tell its rows there from the others'{why}"
            )
        if self.claim_false:
            self.gaps.append(self.claim_false)
        if self.claim_settled:  # the verdict holds if the recorded check is true: say so
            self.assumptions.append(
                f"{self.claim} settled {self.claim_settled:,} group(s) the coalition's "
                "records fit in more than one way"
            )

    def _verdict(self, claim: bool = True) -> str:
        base = super()._verdict(claim)
        if self.settled_groups:
            base += (
                f"; {self.settled_groups:,} group(s) the coalition's records fit in more than "
                "one way are safe in every way (no posterior shown for them)"
            )
        if self.claim_settled:
            base += (
                f"; {self.claim_settled:,} group(s) with more than one placement settled by "
                f"{self.claim} (every placement it allows keeps the promise; no posterior "
                "shown for them)"
            )
        if self.unplaced:
            base += (
                f"; {self.unplaced:,} of the coalition's records fit no group (taken as not "
                "published)"
            )
        return base


# -- the worst coalition of each group ------------------------------------------------------------
def _worst_rows(
    release: Release, m: int, models: Sequence[PrivacyModel], cap: int
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """bool per row: the rows of each group's worst coalition of ``m`` providers; and per group
    its providers as text (``P1|P3``)."""
    t = release.table
    if t.provider is None or t.provider_values is None:
        raise ParameterError(
            f"{ATTACK}: the worst-coalition search needs the providers (an in-process release "
            "whose table has a provider column)"
        )
    like = release.histogram()
    group, sa = release.partition.group, release.sa_published
    n_groups, n_sa = like.counts.shape
    n_prov = len(t.provider_values)
    # per (group, provider) SA counts, one bincount over the present pairs
    pair = group.astype(np.int64) * n_prov + t.provider
    pairs, pair_idx = np.unique(pair, return_inverse=True)
    ph = np.bincount(pair_idx * n_sa + sa, minlength=pairs.size * n_sa).reshape(-1, n_sa)
    p_group = pairs // n_prov
    starts = np.searchsorted(p_group, np.arange(n_groups + 1))
    chosen = np.zeros(pairs.size, dtype=bool)
    capped = 0
    tried = 0
    prov_text = [format_value(v) for v in t.provider_values.tolist()]
    label = np.full(n_groups, "", dtype=object)
    for g in range(n_groups):  # a loop over groups; each group's coalitions are vectorized
        lo, hi = int(starts[g]), int(starts[g + 1])
        n_g = hi - lo
        m_eff = min(m, n_g - 1)
        if m_eff <= 0:
            continue
        hg = ph[lo:hi]
        if math.comb(n_g, m_eff) > cap:
            capped += 1
            best = np.argsort(-hg.sum(axis=1), kind="stable")[:m_eff]
        else:
            combos = np.array(list(combinations(range(n_g), m_eff)), dtype=np.int64)
            tried += combos.shape[0]
            rem, post = remainder_posteriors(like.counts[g][None, :], hg[combos].sum(axis=1))
            viol = _violations(rem, like, models).any(axis=1)
            score = np.lexsort((rem.sum(axis=1), -post.max(axis=1), ~viol))
            best = combos[score[0]]
        chosen[lo + best] = True
        who = pairs[lo + best] % n_prov
        label[g] = "|".join(prov_text[i] for i in sorted(who.tolist()))
    details = {"m": m, "coalitions_tried": tried, "groups_capped": capped, "cap": cap}
    return chosen[pair_idx], label, details


# -- the attack -----------------------------------------------------------------------------------
def insider_attack(
    release: Release,
    coalition: Coalition,
    *,
    models: Sequence[PrivacyModel | str] | str | None = None,
    worst: bool = False,
    m: int | None = None,
    schema: Schema | None = None,
    max_coalitions: int = MAX_COALITIONS,
) -> AttackResult:
    """What ``coalition`` learns from ``release`` by subtracting its own records (module
    docstring).

    ``models`` (default: the release's) is the promise the remainder is held to; ``worst``
    searches each group's worst coalition of ``m`` providers (``m`` defaults to the
    coalition's). ``schema`` reads published cells when locating the coalition's records.
    Tuples: ``row``, ``sa_value``, ``posterior`` (the value's share of the group's remaining
    rows), ``breached``, ``group``, ``remaining`` (rows left in the group), ``violates``
    (the models the remainder violates, ``;``-separated) and, with ``worst``, ``coalition``.
    """
    chosen = _promised(release, models)
    like = release.histogram()
    group, sa = release.partition.group, release.sa_published
    n_groups, n_sa = like.counts.shape
    label = None
    claim_result: dict[str, Any] = {}
    if worst or (not coalition.providers and coalition.records is None):
        size = m if m is not None else coalition.m
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ParameterError(
                f"{ATTACK}: worst=true needs m, a whole number >= 1 (got {size!r})"
            )
        mine, label, details = _worst_rows(release, size, chosen, max_coalitions)
        details["worst"] = True
        undecided = np.zeros(n_groups, dtype=bool)
        settled = undecided
    else:
        found = coalition_rows(release, coalition, schema)
        mine, undecided, details = found.mine, found.undecided, found.details
        settled = np.zeros(n_groups, dtype=bool)
        if found.placement is not None:  # records placed from the files
            settled, claim_result = _settle(release, like, chosen, coalition, schema, found)
            details["groups_undecided"] = int((undecided & ~settled).sum())
    removed = np.bincount(
        group[mine].astype(np.int64) * n_sa + sa[mine], minlength=n_groups * n_sa
    ).reshape(n_groups, n_sa)
    rem, post = remainder_posteriors(like.counts, removed)
    left = rem.sum(axis=1)
    # a group whose coalition rows are not known is not attacked (module docstring)
    touched = (removed.sum(axis=1) > 0) & (left > 0) & ~undecided
    viol = _violations(rem, like, chosen)
    cells = _breached_cells(post, viol, like, chosen)

    # one tuple per (remaining row of a touched group, SA value it may hold)
    rows = np.flatnonzero(~mine & touched[group])
    nz_g, nz_v = np.nonzero(rem > 0)
    ptr = np.searchsorted(nz_g, np.arange(n_groups + 1))
    g_rows = group[rows]
    per_row = ptr[g_rows + 1] - ptr[g_rows]
    entry = concat_ranges(ptr[g_rows], per_row)
    t_rows = np.repeat(rows, per_row)
    t_group = nz_g[entry]
    t_value = nz_v[entry]
    names = np.array([m_.name for m_ in chosen], dtype=object)
    viol_text = np.array([";".join(names[v]) for v in viol[touched]], dtype=object)
    g_text = np.full(n_groups, "", dtype=object)
    g_text[touched] = viol_text  # a loop over touched groups, for their labels
    extra: dict[str, Any] = {
        "group": t_group,
        "remaining": left[t_group],
        "violates": g_text[t_group],
    }
    if label is not None:
        extra["coalition"] = label[t_group]
    bounds = [b for b in (_posterior_bound(x) for x in chosen) if b is not None]
    tuples = tuple_table(
        t_rows,
        release.table.sa_column.decode(t_value) if t_value.size else [],
        post[t_group, t_value],
        cells[t_group, t_value],
        **extra,
    )
    details |= {
        "models": [x.parameter for x in chosen],
        "groups": n_groups,
        "groups_touched": int(touched.sum()),
        "groups_violated": int((viol.any(axis=1) & touched).sum()),
        "rows_removed": int(mine[~undecided[group]].sum()),
    }
    return InsiderResult(
        ATTACK,
        tuples,
        release.table.n,
        min(bounds) if bounds else None,
        details,
        undecided_groups=int((undecided & ~settled).sum()),
        undecided_rows=int(release.partition.sizes[undecided & ~settled].sum()),
        unplaced=int(details.get("records_unplaced", 0)),
        **claim_result,
    )


def _settle(
    release: Release,
    like: GroupHistogram,
    chosen: Sequence[PrivacyModel],
    coalition: Coalition,
    schema: Schema | None,
    found: CoalitionRows,
) -> tuple[np.ndarray, dict[str, Any]]:
    """The undecided groups settled (:func:`kerckhoffs.attacks.insider.claim.settle`, with the
    release's recorded m-privacy check when it covers the coalition), and the result's
    fields that say how."""
    if found.low is None or found.high is None or found.placement is None:
        raise ValueError("the coalition's records were not placed")
    check = recorded_check(release.published_metadata, coalition, schema)
    claim_models = list(check.models) if check is not None else []

    def promise(rem: np.ndarray) -> np.ndarray:
        return np.asarray(_violations(rem, like, chosen).any(axis=1))

    def claim(rem: np.ndarray) -> np.ndarray:
        return np.asarray(_violations(rem, like, claim_models).any(axis=1))

    s = settle(
        like.counts, found.low, found.high, found.placement, promise, check,
        claim if claim_models else None,
    )  # fmt: skip
    found.details["groups_safe_in_every_placement"] = int(s.safe.sum())
    if check is not None:
        found.details["recorded_check"] = s.status + (f": {s.reason}" if s.reason else "")
        found.details["groups_settled_by_recorded_check"] = int(s.by_claim.sum())
        found.details.update(s.details)
    text = check.text if check is not None else ""
    fields = {
        "settled_groups": int(s.safe.sum()),
        "claim_settled": int(s.by_claim.sum()),
        "claim": text,
        "claim_unused": s.reason if s.status == "not relied" else "",
        "claim_false": s.reason if s.status == "false" else "",
    }
    return s.safe | s.by_claim, fields


# -- registry adapter ------------------------------------------------------------------------------
def _applies(releases: Sequence[Release], knowledge: Knowledge) -> str | None:
    if len(releases) != 1:
        return "attacks one release at a time"
    c = knowledge.coalition
    if c is None:
        return "needs a coalition of providers in the knowledge ([coalition] providers/records/m)"
    if c.records is None and releases[0].table.provider is None:
        return (
            "the coalition is given by providers (or by its size m), but the release holds no "
            "provider column"
        )
    return None


OPTIONS = ("m", "max_coalitions", "model", "worst")


@register_attack(
    ATTACK,
    summary="paper 003: a coalition of data providers subtracts its own records from each group",
    applies=_applies,
    reads=("coalition",),
)
def _run(releases: Sequence[Release], knowledge: Knowledge, **options: Any) -> AttackResult:
    """Registry adapter: ``releases[0]`` attacked by the knowledge's coalition with
    :func:`insider_attack`. Options: ``worst`` (bool), ``m``, ``model`` (``k=3;distinct-l=2``,
    default the release's models), ``max_coalitions``."""
    if not releases:
        raise ParameterError(f"{ATTACK}: no release to attack")
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ParameterError(
            f"{ATTACK}: unknown option {unknown[0]!r} (known: {', '.join(OPTIONS)})"
        )
    if knowledge.coalition is None:
        raise ParameterError(f"{ATTACK}: the knowledge names no coalition")
    worst = options.get("worst", False)
    if not isinstance(worst, bool):
        raise ParameterError(f"{ATTACK}: worst must be true or false, got {worst!r}")
    cap = options.get("max_coalitions", MAX_COALITIONS)
    if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
        raise ParameterError(f"{ATTACK}: max_coalitions must be a whole number >= 1")
    return insider_attack(
        releases[0],
        knowledge.coalition,
        models=options.get("model"),
        worst=worst,
        m=options.get("m"),
        schema=knowledge.load_schema(),
        max_coalitions=cap,
    )
