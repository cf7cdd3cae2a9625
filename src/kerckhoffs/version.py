"""The library's version, in a module of its own so that any module can read it without
importing the package's front door (:mod:`kerckhoffs`), which imports them."""

__version__ = "0.1.0"

__all__ = ["__version__"]
