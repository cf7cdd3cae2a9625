"""The information-flow audit: does an algorithm read SA statistics it never publishes?

Paper 000's sufficient condition for algorithm safety (Theorem 5.3; spec ``asap.md`` 1.9 and
1.10 item 2): an algorithm that perturbs only QIs is safe when every SA statistic it consults
is recomputable from the release, i.e. computed on a row set that is a union of published
groups, and, for an algorithm that then changes SA values, equal to what the release shows
(MASK reads the sensitive counts of the groups it distorts: a union of groups, but counts the
release no longer contains). Algorithms that take an ``sa_log`` option record every SA
statistic they read with the row sets it was computed on
(:class:`~kerckhoffs.algorithms.sa_reads.SAReadLog`); this audit runs the algorithm with a log
and checks each set against the published partition.

Unlike the random-worlds auditor (:mod:`kerckhoffs.attacks.random_worlds`) it works at any
size (the log is arrays), so it runs on Adult. It is a sufficient check, not a proof of leak:
a failed audit says *where* unpublished information was consulted (original Mondrian: the
halves of rejected cuts; Hilb: candidate groups and frontier skips), which the random-worlds
auditor can then turn into posteriors on small tables.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
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

    ``violations``: ``(what, number of row sets that are not unions of published groups)``
    per offending batch of reads; ``reads``: batches logged; ``sets``: row sets logged.
    """

    algorithm: str
    release: Release
    log: SAReadLog
    violations: list[tuple[str, int]]

    @property
    def passed(self) -> bool:
        """Every SA statistic read is a statistic of a union of published groups."""
        return not self.violations

    @property
    def reads(self) -> int:
        """Batches of SA reads logged."""
        return len(self.log.reads)

    @property
    def sets(self) -> int:
        """Row sets on which SA statistics were read (over all batches)."""
        return sum(len(set(r.set_ids.tolist())) for r in self.log.reads)

    def describe(self) -> str:
        """One line per offending batch (or one line saying the audit passed)."""
        head = (
            f"{self.algorithm}: {self.reads} SA read batch(es) on {self.sets} row set(s); "
            f"{self.release.partition.n_groups} published groups"
        )
        if self.passed:
            return head + "; every set read is a union of published groups (passes)"
        lines = [head + "; FAILS:"]
        lines += [
            f"  {what}: {count} set(s) not a union of groups" for what, count in self.violations
        ]
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
    the published partition. Raises :class:`~kerckhoffs.errors.ParameterError` when the
    algorithm does not log its SA reads (no ``sa_log`` option)."""
    from kerckhoffs.algorithms.registry import get

    info = get(algorithm_name)
    params = inspect.signature(info.run).parameters
    if "sa_log" not in params:
        raise ParameterError(
            f"{algorithm_name} does not log its SA reads (no sa_log option), so it cannot be "
            "audited for information flow"
        )
    log = SAReadLog()
    release = info.run(table, models, seed=seed, sa_log=log, **options)
    return FlowAudit(
        algorithm_name, release, log, log.violations(release.partition.group, release.sa_published)
    )
