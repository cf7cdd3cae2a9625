"""The information-flow audit: does an algorithm read SA statistics it never publishes?

Paper 000's sufficient condition for algorithm safety (Theorem 5.3;
``docs/theory/asap.md#sufficient-conditions`` and the information-flow audit of
``docs/theory/asap.md#audits``): an algorithm that perturbs only QIs is safe when every SA statistic
it consults is recomputable from the release, i.e. computed on a row set that is a union of
published groups, and, for an algorithm that then changes SA values, equal to what the release shows
(MASK reads the sensitive counts of the groups it distorts: a union of groups, but counts the
release no longer contains). Algorithms that take an ``sa_log`` option record every SA
statistic they read with the row sets it was computed on
(:class:`~kerckhoffs.algorithms.sa_reads.SAReadLog`); this audit runs the algorithm with a log
and checks each set against the published partition.

Unlike the random-worlds auditor (:mod:`kerckhoffs.audits.random_worlds`) it works at any
size (the log is arrays), so it runs on Adult. It is a sufficient check, not a proof of leak:
a failed audit says *where* unpublished information was consulted (original Mondrian: the
halves of rejected cuts; Hilb: candidate groups and frontier skips), which the random-worlds
auditor can then turn into posteriors on small tables.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

from kerckhoffs.algorithms.sa_reads import SAReadLog
from kerckhoffs.data.table import Table
from kerckhoffs.errors import ParameterError
from kerckhoffs.models.base import PrivacyModel
from kerckhoffs.release import Release

__all__ = ["FlowAudit", "audit"]


@dataclass
class FlowAudit:
    """Result of :func:`audit`.

    ``violations``: ``(what, number of offending row sets)`` per offending batch of reads:
    sets that are not unions of published groups, then (for algorithms that change SA values)
    sets whose counts read differ from the published ones; ``not_unions``: the first kind
    alone. ``reads``: batches logged; ``sets``: row sets logged.
    """

    algorithm: str
    release: Release
    log: SAReadLog
    violations: list[tuple[str, int]]
    not_unions: list[tuple[str, int]] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """Every SA statistic read is a statistic of a union of published groups, and one the
        release still shows."""
        return not self.violations

    @property
    def reads(self) -> int:
        """Batches of SA reads logged."""
        return len(self.log.reads)

    @property
    def sets(self) -> int:
        """Row sets on which SA statistics were read (over all batches)."""
        return sum(len(set(r.set_ids.tolist())) for r in self.log.reads)

    @property
    def offending_sets(self) -> int:
        """Row sets read that the release does not show (over all offending batches)."""
        return sum(count for _, count in self.violations)

    def describe(self) -> str:
        """One line per kind of offending read (batches of the same read, e.g. one per depth
        of Mondrian's recursion, summed), or one line saying the audit passed."""
        head = (
            f"{self.algorithm}: {self.reads} SA read batch(es) on {self.sets:,} row set(s); "
            f"{self.release.partition.n_groups:,} published groups"
        )
        if self.passed:
            return head + "; every set read is a union of published groups (passes)"
        unions = list(self.not_unions)
        kinds: dict[tuple[str, str], list[int]] = {}
        for what, count in self.violations:
            if (what, count) in unions:
                unions.remove((what, count))
                kind = "not a union of groups"
            else:
                kind = "whose counts are not published"
            kinds.setdefault((what, kind), []).append(count)
        lines = [head + "; FAILS:"]
        for (what, kind), counts in kinds.items():
            batches = f" ({len(counts)} batches)" if len(counts) > 1 else ""
            lines.append(f"  {what}: {sum(counts):,} set(s) {kind}{batches}")
        return "\n".join(lines)


def audit(
    algorithm_name: str,
    table: Table,
    models: list[PrivacyModel],
    seed: int | None = None,
    **options: Any,
) -> FlowAudit:
    """Run the registered algorithm ``algorithm_name`` with an
    :class:`~kerckhoffs.algorithms.sa_reads.SAReadLog` and check every logged row set against
    the published partition (and, for counts read, against the published SA values). Raises
    :class:`~kerckhoffs.errors.ParameterError` when the algorithm does not log its SA reads (no
    ``sa_log`` option) or when ``sa_log`` is passed among the options (the audit's own).

    >>> import pandas as pd
    >>> from kerckhoffs import Schema
    >>> from kerckhoffs.models import LDiversity
    >>> df = pd.DataFrame({"x": range(5), "s": list("AABBC")})
    >>> table = Table.encode(df, Schema.build({"x": {"kind": "numeric"}}, "s"))
    >>> audit("mondrian", table, [LDiversity(2)]).passed  # reads the halves of a failed cut
    False
    """
    from kerckhoffs.algorithms.registry import get

    info = get(algorithm_name)
    params = inspect.signature(info.run).parameters
    if "sa_log" not in params:
        raise ParameterError(
            f"{algorithm_name} does not log its SA reads (no sa_log option), so it cannot be "
            "audited for information flow"
        )
    if "sa_log" in options:
        raise ParameterError("sa_log is the information-flow audit's own log, not an option")
    log = SAReadLog()
    release = info.run(table, models, seed=seed, sa_log=log, **options)
    group = release.partition.group
    return FlowAudit(
        algorithm_name,
        release,
        log,
        log.violations(group, release.sa_published),
        log.violations(group),
    )
