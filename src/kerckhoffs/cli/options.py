"""``--option KEY=VALUE`` pairs of the command line, as keyword arguments.

One parser shared by ``anonymize``, ``attack`` and ``audit-algorithm`` (its own module so that
the command modules need not import :mod:`kerckhoffs.cli.app`, which imports them). An
algorithm's options are read by their declared types
(:attr:`~kerckhoffs.algorithms.registry.AlgorithmInfo.option_specs`); an attack's, which
declare none, as booleans, numbers or texts.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from kerckhoffs.errors import InputError

if TYPE_CHECKING:
    from kerckhoffs.algorithms.registry import OptionSpec


def parse_options(items: list[str], specs: Iterable[OptionSpec] = ()) -> dict[str, object]:
    """KEY=VALUE pairs; ``-`` in a key becomes ``_``. A key with a spec in ``specs`` is read
    by its type (:meth:`~kerckhoffs.algorithms.registry.OptionSpec.from_text`); any other
    converts ``true``/``false`` to a bool and a number to an int or a float.

    >>> parse_options(["suppression=0.02", "strategy=two-way", "exclusive=true", "max-rows=5"])
    {'suppression': 0.02, 'strategy': 'two-way', 'exclusive': True, 'max_rows': 5}
    """
    by_name = {s.name: s for s in specs}
    opts: dict[str, object] = {}
    for item in items:
        key, sep_, raw = item.partition("=")
        if not sep_ or not key:
            raise InputError(f"--option {item!r}: expected KEY=VALUE")
        name = key.replace("-", "_")
        spec = by_name.get(name)
        opts[name] = spec.from_text(raw) if spec is not None else _guessed(raw)
    return opts


def _guessed(raw: str) -> object:
    """An undeclared option's value: a bool, an int, a float, or the text."""
    if raw.lower() in {"true", "false"}:
        return raw.lower() == "true"
    for conv in (int, float):
        try:
            return conv(raw)
        except ValueError:
            continue
    return raw


__all__ = ["parse_options"]
