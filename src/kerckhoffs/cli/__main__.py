"""``python -m kerckhoffs.cli``: the ``kerckhoffs`` command."""

from kerckhoffs.cli import main

main()
