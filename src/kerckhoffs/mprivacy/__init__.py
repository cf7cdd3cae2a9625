"""m-privacy (paper 003, Goryczka, Xiong, Fung): collaborative publishing safe against
coalitions of up to m data providers.

A provider coalition removes its own records from each published group and reads the rest;
a group is m-private w.r.t. a constraint C when what is left satisfies C for every coalition
of up to ``m_eff = min(m, n_G - 1)`` of its ``n_G`` providers
(``docs/theory/m-privacy.md#per-group``).

- :mod:`.constraints`: C built from our model objects, with EG-monotonicity flags.
- :mod:`.fitness`: the privacy fitness score (paper Eq. 1), which orders coalitions.
- :mod:`.group`: one group's per-provider counts and the counted breach oracle.
- :mod:`.lattice`: coalition bitmasks and the SAFE / BREACH verdicts on coalitions.
- :mod:`.verify`: the per-group verifiers of paper section III (brute, direct, bottom-up,
  top-down, binary, adaptive) and the exact one.
- :mod:`.exact`: the vectorized exact verifier over whole partitions.
- :mod:`.providers`: the provider interface the anonymizers drive (counts and histograms
  only; ``docs/theory/m-privacy.md#deployment``), in process and behind a pickling wire.
"""

from kerckhoffs.mprivacy.constraints import Constraint, constraint_from_models
from kerckhoffs.mprivacy.exact import achieved_m, m_private_groups
from kerckhoffs.mprivacy.group import GroupStats, Oracle
from kerckhoffs.mprivacy.verify import VERIFIERS, VerifyResult, verify

__all__ = [
    "VERIFIERS",
    "Constraint",
    "GroupStats",
    "Oracle",
    "VerifyResult",
    "achieved_m",
    "constraint_from_models",
    "m_private_groups",
    "verify",
]
