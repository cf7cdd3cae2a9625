"""Mondrian: strict multidimensional median partitioning (LeFevre, DeWitt, Ramakrishnan 2006).

Top-down recursion (paper 000 section 6.2.1; ``docs/theory/asap.md#mondrian``): a group ``G`` is cut
on one quasi-identifier at its median into ``L = {t : t[dim] <= split}`` and ``R = G - L``; the
dimensions are tried in order of decreasing *normalized range*
``(max code - min code over G) / W_dim`` (``W_dim`` the width of the column's code domain; ties go
to the lower column index), falling back to the next dimension when the cut is not allowed; a group
with no allowed cut is published whole.

- **Median** (``median="lower"``, our default:
  ``docs/theory/asap.md#err-mondrian-median``): the smallest value ``v`` with
  ``|{t in G : t[dim] <= v}| >= ceil(|G|/2)``. ``median="upper"`` takes the value at sorted
  position ``floor(|G|/2)`` (0-based) and sends the rows equal to it to the right half, so the
  two options mirror each other (with ``<= upper median`` the cut of two distinct values would
  never be possible).
- **Cuts** (``cuts="strict"``, the default): rows with equal values stay on one side.
  ``cuts="relaxed"`` (LeFevre's relaxed partitioning) splits the rows equal to the median
  between the halves, so that ``|L| = ceil(|G|/2)`` (lower) or ``floor(|G|/2)`` (upper); ties
  are broken by row id, deterministically. A dimension with a single value in ``G`` is never
  cut, in either mode.
- **Categorical** quasi-identifiers are cut along their hierarchy-ordered codes (depth-first
  leaf order, :mod:`kerckhoffs.data.table`), so a group spans a code interval and publishes
  its lowest common hierarchy node (:meth:`kerckhoffs.release.Release.generalized_cells`).
- **Allowable cuts** are a parameter, a :class:`CutRule` evaluated on the statistics of the
  candidate halves (:class:`CutStats`), vectorized over all candidate cuts. Built in:
  :class:`KAnonymityCut` (``|L| >= k and |R| >= k``, k-anonymity Mondrian) and
  :class:`LDiversityCut` (frequency l-diversity ``|L| >= l * c(L)`` and ``|R| >= l * c(R)``, paper
  000's Mondrian, with ``c`` the subset-aware bounded count of
  :attr:`~kerckhoffs.models.GroupHistogram.sensitive_count`). Given both models, both must hold
  (:class:`AllCuts`).

Speed ("Mondrian by counting", ``docs/theory/choices.md#performance``): the recursion runs level by
level, all groups of one depth at once, and decides every cut by counting; nothing loops over rows
or groups in Python.

One job per module:

- :mod:`.cuts`: the allowable-cut rules and the statistics they read;
- :mod:`.counting`: the counting step of one level (histograms, medians, the halves' SA
  counts), shared with the Dask engine;
- :mod:`.partition`: the partitioner, :func:`mondrian_groups`;
- :mod:`.hierarchy`: the partitioner that cuts categorical QIs along their hierarchy;
- :mod:`.algorithm`: the registered ``mondrian``, ``mondrian+`` and ``mondrian++``.

Every public name is importable from this package.

Original Mondrian for l-diversity is *not* algorithm-safe (paper 000, Theorem 5.1): a rejected
cut consults ``S_max`` of halves that are never published. Mondrian+ (paper 000 Algorithm 1,
``docs/theory/asap.md#mondrian-plus``) fixes that with one different cut rule, see :class:`CutRule`.
"""

from kerckhoffs.algorithms.mondrian.algorithm import (
    mondrian,
    mondrian_plus,
    mondrian_plus_plus,
    plus_rule_from_models,
    rule_from_models,
)
from kerckhoffs.algorithms.mondrian.counting import (
    LevelHistogram,
    MedianCuts,
    OtherMedians,
    PairCells,
    allowed_by_counts,
    halves_stats,
    level_candidates,
    level_histogram,
    median_cuts,
    tie_ranks,
    values_candidates,
)
from kerckhoffs.algorithms.mondrian.cuts import (
    CUTS,
    MEDIANS,
    AllCuts,
    CutRule,
    CutStats,
    EntropyLDiversityCut,
    FunctionCut,
    KAnonymityCut,
    LDiversityCut,
    LookAheadCut,
    TClosenessCut,
    as_rule,
)
from kerckhoffs.algorithms.mondrian.hierarchy import CATEGORICAL_CUTS, hierarchy_cut_groups
from kerckhoffs.algorithms.mondrian.partition import mondrian_groups

__all__ = [
    "CATEGORICAL_CUTS",
    "CUTS",
    "MEDIANS",
    "AllCuts",
    "CutRule",
    "CutStats",
    "EntropyLDiversityCut",
    "FunctionCut",
    "KAnonymityCut",
    "LDiversityCut",
    "LevelHistogram",
    "LookAheadCut",
    "MedianCuts",
    "OtherMedians",
    "PairCells",
    "TClosenessCut",
    "allowed_by_counts",
    "as_rule",
    "halves_stats",
    "hierarchy_cut_groups",
    "level_candidates",
    "level_histogram",
    "median_cuts",
    "mondrian",
    "mondrian_groups",
    "mondrian_plus",
    "mondrian_plus_plus",
    "plus_rule_from_models",
    "rule_from_models",
    "tie_ranks",
    "values_candidates",
]
