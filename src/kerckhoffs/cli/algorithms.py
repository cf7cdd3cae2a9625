"""``kerckhoffs algorithms [NAME]``: the anonymization algorithms, or one algorithm's options.

Everything printed is declared once, where the algorithm registers
(:mod:`kerckhoffs.algorithms.registry`): the models it enforces, how it publishes, and each
option's type, default, range and one-line doc
(:attr:`~kerckhoffs.algorithms.registry.AlgorithmInfo.option_specs`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from kerckhoffs.cli import output

if TYPE_CHECKING:
    from kerckhoffs.algorithms.registry import AlgorithmInfo, OptionSpec


def algorithms(
    name: Annotated[
        str | None,
        typer.Argument(help="An algorithm: list its options with their types and defaults."),
    ] = None,
) -> None:
    """List the anonymization algorithms, the models each enforces and how each publishes.

    With NAME: that algorithm's options (type, default, range, what each does), the models it
    enforces and how it publishes.
    """
    from kerckhoffs.algorithms.registry import REGISTRY, get

    if name is not None:
        _describe(get(name))
        return
    t = output.table("name", "enforces", "publishes", "summary")
    for key in sorted(REGISTRY):
        a = REGISTRY[key]
        t.add_row(
            key + (" *" if a.randomized else ""),
            _enforces(a),
            ", ".join(s.value for s in a.schemes),
            a.summary,
        )
    output.out.print(t)
    output.out.print(
        "* randomized: draws fresh secret randomness on every run (--seed only for tests)"
    )


def _enforces(info: AlgorithmInfo) -> str:
    from kerckhoffs.models.parse import SYNTAX

    return ", ".join(SYNTAX.get(m, m) for m in info.models)


def _describe(info: AlgorithmInfo) -> None:
    """One algorithm: its summary, models, schemes, randomness and options."""
    output.out.print(f"{info.name}: {info.summary}", soft_wrap=True)
    output.out.print(f"enforces: {_enforces(info)}")
    output.out.print(f"publishes: {', '.join(s.value for s in info.schemes)}")
    if not info.randomized:
        randomness = "deterministic (--seed has no effect)"
    elif info.seedable:
        randomness = "randomized: fresh secret randomness on every run (--seed only for tests)"
    else:
        randomness = "randomized: fresh secret randomness on every run (cannot be seeded)"
    output.out.print(randomness)
    output.out.print(
        "algorithm-safe: yes (at its defaults: paper 000's sufficient conditions, or DP)"
        if info.algorithm_safe
        else f"algorithm-safe: not shown (try: kerckhoffs audit-algorithm {info.name})"
    )
    specs = info.option_specs
    if not specs:
        output.out.print("options: none")
        return
    t = output.table("option (-O KEY=VALUE)", "type", "default", "range", "what it does")
    for spec in specs:
        t.add_row(spec.name, spec.type or "any", _default(spec), _range(spec), spec.doc)
    output.out.print(t)


def _default(spec: OptionSpec) -> str:
    value = spec.default
    return "none" if value is None else str(getattr(value, "value", value))


def _range(spec: OptionSpec) -> str:
    if spec.low is None and spec.high is None:
        return "-"
    low = "" if spec.low is None else f"{spec.low:g}"
    high = "" if spec.high is None else f"{spec.high:g}"
    return f"{low}..{high}"


def register(app: typer.Typer) -> None:
    app.command()(algorithms)
