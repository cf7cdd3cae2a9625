"""Algorithm audits: is an anonymization algorithm itself safe once the adversary knows it?
They judge an algorithm (on tables they draw or are given), not one release; the attacks on a
release are in :mod:`kerckhoffs.attacks`. Paper 000 (Jin, Zhang, Das), Definition 5 and
Theorem 5.3.

- :mod:`.algorithm`: every audit that applies to a registered algorithm, with what each cannot
  see (``kerckhoffs audit-algorithm``);
- :mod:`.random_worlds`: exact posteriors of an adversary who re-runs the algorithm on every
  candidate table (small tables);
- :mod:`.enumerating_rng`: every outcome of a randomized run with its exact probability;
- :mod:`.random_tables`: random small tables and the fuzzing driver over them;
- :mod:`.information_flow`: does the algorithm read SA statistics it never publishes (any size)?

The auditor :func:`kerckhoffs.audits.random_worlds.random_worlds` is not re-exported here: its
name is its module's, which ``kerckhoffs.audits.random_worlds`` must keep naming (it is
importable from :mod:`kerckhoffs.attacks` too).
"""

from __future__ import annotations

from kerckhoffs.audits.algorithm import (
    DEFAULT_FLOW_ROWS,
    AlgorithmAudit,
    FlowPart,
    WorldsPart,
    audit_algorithm,
    default_models,
)
from kerckhoffs.audits.enumerating_rng import (
    AuditTooLarge,
    EnumeratingRNG,
    RandomKeys,
    enumerate_outcomes,
)
from kerckhoffs.audits.information_flow import (
    FlowAudit,
    audit,
)
from kerckhoffs.audits.random_tables import (
    MAX_FUZZ_ROWS,
    MAX_SA_VALUES,
    Trial,
    fuzz,
    random_table,
)
from kerckhoffs.audits.random_worlds import (
    WorldPredicate,
    WorldsAudit,
    all_of,
    at_least,
    audit_worlds,
    diversity_bound,
    naive_worlds,
    release_key,
    row_not,
    with_sa,
)

__all__ = [
    "DEFAULT_FLOW_ROWS",
    "MAX_FUZZ_ROWS",
    "MAX_SA_VALUES",
    "AlgorithmAudit",
    "AuditTooLarge",
    "EnumeratingRNG",
    "FlowAudit",
    "FlowPart",
    "RandomKeys",
    "Trial",
    "WorldPredicate",
    "WorldsAudit",
    "WorldsPart",
    "all_of",
    "at_least",
    "audit",
    "audit_algorithm",
    "audit_worlds",
    "default_models",
    "diversity_bound",
    "enumerate_outcomes",
    "fuzz",
    "naive_worlds",
    "random_table",
    "release_key",
    "row_not",
    "with_sa",
]
