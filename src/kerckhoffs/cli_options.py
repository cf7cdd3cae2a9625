"""``--option KEY=VALUE`` pairs of the command line, as keyword arguments.

One parser shared by ``anonymize``, ``attack`` and ``audit-algorithm`` (its own module so that
the command modules need not import :mod:`kerckhoffs.cli`, which imports them).
"""

from __future__ import annotations

from kerckhoffs.errors import InputError


def parse_options(items: list[str]) -> dict[str, object]:
    """KEY=VALUE pairs with numbers and booleans converted; ``-`` in a key becomes ``_``.

    >>> parse_options(["suppression=0.02", "strategy=two-way", "exclusive=true", "max-rows=5"])
    {'suppression': 0.02, 'strategy': 'two-way', 'exclusive': True, 'max_rows': 5}
    """
    opts: dict[str, object] = {}
    for item in items:
        key, sep_, raw = item.partition("=")
        if not sep_ or not key:
            raise InputError(f"--option {item!r}: expected KEY=VALUE")
        value: object = raw
        if raw.lower() in {"true", "false"}:
            value = raw.lower() == "true"
        else:
            for conv in (int, float):
                try:
                    value = conv(raw)
                    break
                except ValueError:
                    continue
        opts[key.replace("-", "_")] = value
    return opts


__all__ = ["parse_options"]
