"""Disclosure sets: what an adversary who knows the publisher's algorithm learns from its
choice among candidate generalizations (paper 002, Zhang, Wang, Jajodia and Brodsky,
"Exclusive Strategy for Generalization Algorithms in Micro-Data Disclosure"; explained in
``docs/theory/disclosure-sets.md``, full citation at its top).

A publisher tries generalizations from most to least useful. The **naive** publisher
releases the first whose PER set passes CHK; the adversary then knows every earlier candidate
failed, and what remains possible (the **disclosure set**) may fail CHK. The **inclusive**
strategy releases the first candidate that is safe on its disclosure set (recursive,
exponential); the **exclusive** strategy stops at the first naive pass and releases it only
if it is safe on its (non-recursive) disclosure set, else nothing.

One job per module:

- :mod:`.sequence`: :class:`GeneralizationSequence`, the ordered candidate partitions;
- :mod:`.per`: signatures, ``|PER|``, the bounded PER enumerator;
- :mod:`.chk`: the pluggable CHK (:class:`Chk`), its implementations, and the fewest rows a
  group needs to pass one (:func:`least_group_size`);
- :mod:`.publishers`: ``naive``, ``inclusive``, ``exclusive`` on one table -> :class:`Outcome`;
- :mod:`.classwide`: every table of a multiset class at once (fast path and test oracle);
- :mod:`.sequence_file`: the TOML sequence formats of ``examples/disclosure`` (candidates by row
  position, or by QI values: :class:`ValueSequence`).
"""

from kerckhoffs.disclosure.chk import (
    PAPER_CHK,
    AllOf,
    Chk,
    DistinctL,
    MaxShare,
    RecursiveCL,
    ShareRule,
    chk_from_model,
    chk_generalization,
    chk_instances,
    least_group_size,
    person_counts,
)
from kerckhoffs.disclosure.classwide import (
    NOTHING,
    ClassOutcomes,
    Level,
    class_outcomes,
    class_tables,
)
from kerckhoffs.disclosure.per import (
    DEFAULT_LIMIT,
    TooManyInstances,
    decimal_exponent,
    enumerate_per,
    magnitude,
    multiset_permutations,
    per_size,
    signature,
    signatures,
)
from kerckhoffs.disclosure.publishers import (
    Outcome,
    Step,
    disclosure_set,
    exclusive,
    inclusive,
    max_shares,
    naive,
)
from kerckhoffs.disclosure.sequence import GeneralizationSequence
from kerckhoffs.disclosure.sequence_file import (
    ValueGeneralization,
    ValueSequence,
    read_sequence,
    read_sequence_by_values,
    read_value_sequence,
)

__all__ = [
    "DEFAULT_LIMIT",
    "NOTHING",
    "PAPER_CHK",
    "AllOf",
    "Chk",
    "ClassOutcomes",
    "DistinctL",
    "GeneralizationSequence",
    "Level",
    "MaxShare",
    "Outcome",
    "RecursiveCL",
    "ShareRule",
    "Step",
    "TooManyInstances",
    "ValueGeneralization",
    "ValueSequence",
    "chk_from_model",
    "chk_generalization",
    "chk_instances",
    "class_outcomes",
    "class_tables",
    "decimal_exponent",
    "disclosure_set",
    "enumerate_per",
    "exclusive",
    "inclusive",
    "least_group_size",
    "magnitude",
    "max_shares",
    "multiset_permutations",
    "naive",
    "per_size",
    "person_counts",
    "read_sequence",
    "read_sequence_by_values",
    "read_value_sequence",
    "signature",
    "signatures",
]
