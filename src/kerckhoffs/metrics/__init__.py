"""Utility and risk measures of releases.

- :func:`ncp` (normalized certainty penalty, Xu et al. 2006): how much generalization costs,
  0 (published exactly) .. 1 (every cell suppressed), averaged over rows and
  quasi-identifiers; :func:`ncp_by_qi` per quasi-identifier, :func:`group_ncp` per group.
- :func:`gcp` (global certainty penalty, Ghinita et al. 2007), :func:`discernibility`
  (Bayardo and Agrawal 2005), :func:`average_group_size` and
  :func:`normalized_average_group_size` (``C_avg``, LeFevre et al. 2006), all from each
  group's published cover (:func:`group_cover`).
- :func:`qid_information_loss` and :func:`sa_distortion`: paper 001's ``Dist(T, T*)`` and the
  distortion of the sensitive attribute (``docs/theory/minimality.md#information-loss``,
  ``#utility``).
- :class:`Workload` and :func:`query_error`: the COUNT-query relative error of
  ``docs/theory/asap.md#query-error`` (papers 000 and 001), one seeded workload applied to several
  releases.
- :func:`draw_range_counts` and :func:`range_count_error`: paper 003's 2,500 random range COUNT
  queries (``docs/theory/m-privacy.md#procedures``: ``qd`` uniform in ``[2, q/2]``, uniform
  endpoints, no SA predicate), estimated by uniform spread in each group's box.
"""

from kerckhoffs.metrics.distortion import (
    group_information_loss,
    qid_information_loss,
    row_sa_distortion,
    sa_distortion,
)
from kerckhoffs.metrics.group_metrics import (
    average_group_size,
    discernibility,
    gcp,
    group_cover,
    group_gcp,
    normalized_average_group_size,
)
from kerckhoffs.metrics.ncp import group_ncp, ncp, ncp_by_qi
from kerckhoffs.metrics.query_error import (
    QueryError,
    Workload,
    actual_counts,
    draw_workload,
    estimate,
    query_error,
)
from kerckhoffs.metrics.range_count import (
    RangeCountWorkload,
    draw_range_counts,
    range_count_error,
)

__all__ = [
    "QueryError",
    "RangeCountWorkload",
    "Workload",
    "actual_counts",
    "average_group_size",
    "discernibility",
    "draw_range_counts",
    "draw_workload",
    "estimate",
    "gcp",
    "group_cover",
    "group_gcp",
    "group_information_loss",
    "group_ncp",
    "ncp",
    "ncp_by_qi",
    "normalized_average_group_size",
    "qid_information_loss",
    "query_error",
    "range_count_error",
    "row_sa_distortion",
    "sa_distortion",
]
