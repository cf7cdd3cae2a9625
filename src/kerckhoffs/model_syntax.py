"""How privacy models are written on the command line (``--model NAME=VALUE``).

One table, :data:`SYNTAX`, maps each model class to the name users type; the ``--model`` help
(:func:`model_help`), the parser's "unknown model" message and error lines that name a model
are all built from it, so a model added to the table appears everywhere. This module imports
nothing: the command line builds its help text without loading numpy.
"""

from __future__ import annotations

SYNTAX = {
    "KAnonymity": "k",
    "LDiversity": "l",
    "DistinctLDiversity": "distinct-l",
    "EntropyLDiversity": "entropy-l",
    "RecursiveCLDiversity": "recursive-cl",
    "TCloseness": "t",
    "AlphaKAnonymity": "alpha-k",
    "MConfidentiality": "m",
    "MPrivacy": "m-privacy",
    "DifferentialPrivacy": "dp",
    "LabelDifferentialPrivacy": "label-dp",
}
"""Each model class's name as written on the command line (``--model NAME=VALUE``)."""

EXAMPLES = {
    "k": "k=5",
    "l": "l=3 (frequency l-diversity)",
    "distinct-l": "distinct-l=3",
    "entropy-l": "entropy-l=2.5",
    "recursive-cl": "recursive-cl=C,L",
    "t": "t=0.2",
    "alpha-k": "alpha-k=0.5,5",
    "m": "m=3 (m-confidentiality)",
    "m-privacy": "m-privacy=2 (the other models hold after any 2 data providers remove "
    "their records)",
    "dp": "dp=1 or dp=1,1e-6 (differential privacy: epsilon[,delta])",
    "label-dp": "label-dp=1 (differential privacy for a change of one sensitive value only)",
}
"""An example of each model as typed; a model without one is shown as ``NAME=VALUE``."""


def model_names() -> list[str]:
    """The names ``--model`` accepts, in the table's order."""
    return list(dict.fromkeys(SYNTAX.values()))


def written(class_name: str) -> str:
    """The name users type for the model class ``class_name`` (the class name when the table
    has none)."""
    return SYNTAX.get(class_name, class_name)


def model_help() -> str:
    """The ``--model`` option's help: every model of :data:`SYNTAX`, with an example."""
    shown = ", ".join(EXAMPLES.get(name, f"{name}=VALUE") for name in model_names())
    return f"Privacy model to check; repeat for several: {shown}."


__all__ = ["EXAMPLES", "SYNTAX", "model_help", "model_names", "written"]
