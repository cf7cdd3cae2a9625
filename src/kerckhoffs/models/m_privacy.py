"""m-privacy (paper 003, Goryczka, Xiong, Fung, Definition 2.1): every group still satisfies
the constraint C after any coalition of up to m data providers removes its own records.

C is the other models of the same check (``--model k=30 --model distinct-l=4 --model m-privacy=3``):
:func:`combine_m_privacy` hands them to the m-privacy model, which keeps them as data. Per group,
``m_eff = min(m, n_G - 1)`` (a coalition owning the whole group has no victim in it;
``docs/theory/m-privacy.md#per-group``). The check reads the provider axis of the histogram
(:class:`~kerckhoffs.models.histogram.ProviderCounts`) and runs the exact vectorized verifier of
:mod:`kerckhoffs.mprivacy.exact`; the provider column itself is never published.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kerckhoffs.errors import ParameterError
from kerckhoffs.model_syntax import SYNTAX
from kerckhoffs.models.base import ModelResult, PrivacyModel, require
from kerckhoffs.models.histogram import GroupHistogram
from kerckhoffs.models.l_diversity import LDiversity
from kerckhoffs.mprivacy import exact
from kerckhoffs.mprivacy.constraints import Constraint, constraint_from_models


class MPrivacy(PrivacyModel):
    """m-privacy w.r.t. the conjunction of ``models`` (k-anonymity, distinct, frequency or
    entropy l-diversity; the exact check takes k, l and distinct-l).

    Group value: the largest m for which the group is m-private (-1 when C itself fails,
    ``n - 1`` for ``n`` providers when no coalition breaks it); achieved value: the table's
    smallest, "the m actually achieved". A requested m of ``n`` or more is read as ``n - 1``.
    """

    name = "m-privacy"
    fields = ("m", "models")
    needs_providers = True

    def __init__(self, m: int, models: Iterable[PrivacyModel | dict[str, Any]] = ()) -> None:
        require(int(m) == m and m >= 0, f"m-privacy m must be an integer >= 0, got {m}")
        self.m = int(m)
        parts = tuple(PrivacyModel.from_dict(x) if isinstance(x, dict) else x for x in models)
        for x in parts:
            require(
                isinstance(x, PrivacyModel) and not isinstance(x, MPrivacy),
                f"m-privacy's constraint is a list of privacy models, got {x!r}",
            )
        self.models = parts
        if parts:
            self.constraint()  # refuses models that cannot be a constraint, before any work

    def constraint(self) -> Constraint:
        """The constraint C (:mod:`kerckhoffs.mprivacy.constraints`) of :attr:`models`."""
        if not self.models:
            raise ParameterError(
                f"m-privacy={self.m} needs a constraint: give other models too, e.g. k=5"
            )
        return constraint_from_models(self.models)

    def with_models(self, models: Sequence[PrivacyModel]) -> MPrivacy:
        """The same m with constraint ``models``."""
        return MPrivacy(self.m, models)

    @property
    def parameter(self) -> str:
        def spelled(x: PrivacyModel) -> str:
            key, sep, value = x.parameter.partition("=")
            return f"{SYNTAX.get(type(x).__name__, key)}={value}" if sep else x.parameter

        over = ", ".join(spelled(m) for m in self.models)
        return f"m={self.m}" + (f" w.r.t. {over}" if over else "")

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.name, "m": self.m, "models": [x.to_dict() for x in self.models]}

    def validate(self, hist: GroupHistogram, sa_name: str = "the sensitive attribute") -> None:
        self._readable(hist)
        for x in self.models:
            x.validate(hist, sa_name)

    def _readable(self, hist: GroupHistogram) -> None:
        """What :meth:`evaluate` needs to mean anything: each row's provider, a constraint
        it can check. (:meth:`validate` adds the constraint models' table-wide checks, such as
        k within the table, which a slice of the groups cannot judge.)"""
        if hist.providers is None:
            raise ParameterError(
                "m-privacy needs to know which provider each row came from: give the table a "
                "provider column (schema role 'provider'); a published release does not hold "
                "one, so give the provider of each published row (check --providers FILE, "
                "the file anonymize --provider-rows wrote)"
            )
        self.constraint()
        if any(isinstance(x, LDiversity) for x in self.models) and not hist.all_sensitive:
            raise ParameterError(
                "m-privacy with frequency l-diversity needs every SA value sensitive (no "
                "sensitive subset); use distinct-l"
            )

    def evaluate(self, hist: GroupHistogram) -> ModelResult:
        """The requested m is decided first, for every group; the achieved m (the group
        values) is then searched upward from it only as far as stays cheap: the coalition
        search of distinct l-diversity grows with m (``C(n_G, m)`` coalitions at worst), and
        a check of ``m=1`` must not pay for ``m=25``. Where the search was cut, the group
        value is the largest m proven (a lower bound) and the detail says so; a group whose
        requested m could not be settled within the budget is counted as violating (not
        proven is not private) and the detail says that too. :func:`kerckhoffs.mprivacy.
        achieved_m` computes the achieved m exactly, whatever it costs."""
        self._readable(hist)
        pc = hist.providers
        assert pc is not None
        n_sa = hist.counts.shape[1]
        constraint = self.constraint()
        wanted = min(self.m, max(pc.n_providers - 1, 0))
        triples = (pc.group, pc.provider, pc.sa, pc.count, hist.n_groups)
        decision = exact.decide_triples(*triples, n_sa, wanted, constraint, exact.SEARCH_BUDGET)
        achieved = exact.achieved_triples(
            *triples, pc.n_providers, n_sa, constraint, exact.SEARCH_BUDGET, (wanted, decision)
        )
        undecided = int(decision.undecided.sum())
        bounded = int((~achieved.exact & ~decision.undecided).sum())
        values = achieved.m
        return MPrivacyResult(
            self.name,
            self.parameter,
            float(values.min()) if values.size else float(wanted),
            values.astype(float),
            decision.ok,
            True,
            _detail(pc.n_providers, self.m, wanted, undecided, bounded),
            undecided=undecided,
            bounded=bounded,
            n_providers=pc.n_providers,
        )

    def combine(self, parts: Sequence[ModelResult], sizes: np.ndarray) -> ModelResult:
        """Slices' results as one (a distributed check): their counts of undecided groups and
        of lower bounds add up, and the detail is rebuilt from the sums."""
        merged = super().combine(parts, sizes)
        undecided = sum(getattr(p, "undecided", 0) for p in parts)
        bounded = sum(getattr(p, "bounded", 0) for p in parts)
        n_providers = max((getattr(p, "n_providers", 0) for p in parts), default=0)
        wanted = min(self.m, max(n_providers - 1, 0))
        return MPrivacyResult(
            merged.model,
            merged.parameter,
            merged.achieved,
            merged.group_values,
            merged.group_ok,
            merged.higher_is_better,
            _detail(n_providers, self.m, wanted, undecided, bounded),
            undecided=undecided,
            bounded=bounded,
            n_providers=n_providers,
        )


@dataclass(frozen=True, eq=False)
class MPrivacyResult(ModelResult):
    """An m-privacy :class:`ModelResult` with what its detail line counts: ``undecided``
    groups (the requested m not settled within the search budget: counted as violating),
    ``bounded`` groups (their achieved m is a lower bound) and the ``n_providers``."""

    undecided: int = 0
    bounded: int = 0
    n_providers: int = 0


def _detail(n_providers: int, m: int, wanted: int, undecided: int, bounded: int) -> str:
    detail = f"{n_providers} provider(s)"
    if wanted < m:
        detail += f", m read as {wanted} (n - 1)"
    if undecided:
        detail += (
            f"; {undecided:,} group(s) not decided at m={wanted} (the coalition search ran out "
            "of its budget): counted as violating"
        )
    if bounded:
        detail += (
            f"; achieved m is a lower bound in {bounded:,} group(s) (larger coalitions not "
            "searched: too costly)"
        )
    return detail


def combine_m_privacy(models: Sequence[PrivacyModel]) -> list[PrivacyModel]:
    """Give every m-privacy model without a constraint the other models of the list as its
    constraint C (``[k=30, l=4, m-privacy=3]``: m-privacy w.r.t. k=30 and l=4); the others
    stay in the list and are checked on their own too. Any other list is returned as is."""
    others = [x for x in models if not isinstance(x, MPrivacy)]
    out: list[PrivacyModel] = []
    for x in models:
        if isinstance(x, MPrivacy) and not x.models:
            if not others:
                raise ParameterError(
                    f"m-privacy={x.m} needs a constraint: give other models too, e.g. k=5"
                )
            x = x.with_models(others)
        out.append(x)
    return out
