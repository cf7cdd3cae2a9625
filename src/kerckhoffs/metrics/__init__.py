"""Utility and risk measures of releases.

- :func:`ncp` (normalized certainty penalty, Xu et al. 2006): how much generalization costs,
  0 (published exactly) .. 1 (every cell suppressed), averaged over rows and
  quasi-identifiers; :func:`ncp_by_qi` per quasi-identifier, :func:`group_ncp` per group.
"""

from kerckhoffs.metrics.ncp import group_ncp, ncp, ncp_by_qi

__all__ = ["group_ncp", "ncp", "ncp_by_qi"]
