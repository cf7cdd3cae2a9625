"""``python -m kerckhoffs.cli``: the ``kerckhoffs`` command."""

from kerckhoffs.cli import main

if __name__ == "__main__":  # not when a tool imports every module (the tests' warm server)
    main()
