"""Full-domain generalization over the hierarchy lattice (Samarati 2001; LeFevre, DeWitt and
Ramakrishnan 2005, "Incognito").

Every quasi-identifier is generalized to *one level* of its hierarchy for the whole table (global
recoding, paper 001 section 2, ``docs/theory/minimality.md#recoding``); the algorithm publishes the
minimal lattice node satisfying the privacy models with the least information loss. One job per
module:

- :mod:`kerckhoffs.data.lattice`: the lattice itself (level vectors, node numbering, the
  groups of a node), a structure of the table's hierarchies that the disclosure sets of
  :mod:`kerckhoffs.disclosure` read too, hence outside this package;
- :mod:`.evaluate`: judging one node from frequency sets (Incognito's rollup), the monotone
  models the search accepts and why they are monotone, suppression, feasibility;
- :mod:`.search`: the strategies (two-way, incognito, samarati, naive) with predictive
  tagging, and the minimal nodes;
- :mod:`kerckhoffs.metrics.lattice_loss`: the measures that choose among the minimal nodes
  (paper 001 Definition 7 information loss, discernibility, height), exact, and the order of
  every node by them;
- :mod:`.disclosure`: paper 002's exclusive and inclusive strategies over the lattice's
  choice (disclosure sets, the exact shortcut);
- :mod:`.algorithm`: the registered ``lattice``, ``lattice-exclusive`` and
  ``lattice-inclusive`` algorithms and the release at a node.

**Suppression** (``suppression=f``, a fraction of the rows, default 0): a node may leave up to
``floor(f * |T|)`` rows in groups that violate a model; those rows are *suppressed*. A release
is a partition of every row, so the suppressed rows are published as **one group of their own
whose QI cells are the roots** (``*``) and whose SA values are published like any other
group's; the independent check of :meth:`Release.write` then sees that group like any other, so
it must satisfy the models too. A node whose suppressed group violates a model (e.g. 3 outliers
under k = 5; with frequency l-diversity on a sensitive subset in ``set`` mode this is every
node with outliers, since each violating group holds more than ``1/l`` sensitive rows and so
does their union) does **not** satisfy: suppression never publishes a group that fails the
model. This predicate is not monotone: a generalization may leave fewer outliers, too few to
form a valid group, and for the models other than k-anonymity and distinct l-diversity it may
even leave *more* violating rows (an l-diverse group merged with a violating one can violate).
So with suppression the Samarati search is refused, violating nodes tag their specializations
only under k-anonymity / distinct l-diversity alone (where the number of violating rows cannot
grow upward), and the searches still return exactly the minimal nodes. With suppression
the loss is not monotone either (a suppressed row costs 1), so the chosen node is the best
*minimal* node, as the minimality principle (paper 001 Definition 3,
``docs/theory/minimality.md#minimality-principle``) describes the
algorithms paper 001 attacks, not necessarily the best satisfying node.

Every public name is importable from this package.
"""

from kerckhoffs.algorithms.lattice.algorithm import (
    full_domain_cells,
    lattice,
    lattice_exclusive,
    lattice_inclusive,
    release_at,
)
from kerckhoffs.algorithms.lattice.disclosure import DISCLOSURES, DisclosureCheck, decide
from kerckhoffs.algorithms.lattice.evaluate import MONOTONE_MODELS, NodeResult
from kerckhoffs.algorithms.lattice.search import (
    STRATEGIES,
    LatticeSearch,
    chosen_node,
    evaluate_node,
    minimal_nodes,
    search_lattice,
    visiting_order,
)
from kerckhoffs.data.lattice import MAX_NODES, Lattice, Node
from kerckhoffs.metrics.lattice_loss import (
    METRICS,
    LossScale,
    generalization_sequence,
    information_loss,
)

__all__ = [
    "DISCLOSURES",
    "MAX_NODES",
    "METRICS",
    "MONOTONE_MODELS",
    "STRATEGIES",
    "DisclosureCheck",
    "Lattice",
    "LatticeSearch",
    "LossScale",
    "Node",
    "NodeResult",
    "chosen_node",
    "decide",
    "evaluate_node",
    "full_domain_cells",
    "generalization_sequence",
    "information_loss",
    "lattice",
    "lattice_exclusive",
    "lattice_inclusive",
    "minimal_nodes",
    "release_at",
    "search_lattice",
    "visiting_order",
]
