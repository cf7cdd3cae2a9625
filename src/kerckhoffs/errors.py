"""Errors kerckhoffs raises for bad input, impossible parameters and failed privacy checks.

Every user-facing problem is a :class:`KerckhoffsError` whose message is one line naming the
column, value, row or parameter at fault. The CLI prints that line and exits with code 2.
"""

from __future__ import annotations

from dataclasses import dataclass


class _NoValue:
    """The type of :data:`NO_VALUE` (pickled by name: one sentinel in every process)."""

    def __repr__(self) -> str:
        return "NO_VALUE"

    def __reduce__(self) -> str:
        return "NO_VALUE"


NO_VALUE = _NoValue()
"""The ``value`` of an :class:`ArgumentError` refused whatever its value."""


class KerckhoffsError(Exception):
    """Base class: a problem the user can fix (bad file, schema, value or parameter).

    The message speaks the library's language (``overwrite=True``, ``verify=False``). Where
    the fix is spelled differently on the command line (``--overwrite``, ``--no-verify``),
    ``cli`` holds the same line as the command line says it (built from the same parts by
    :func:`input_error`, never rewritten from the message); the CLI prints
    :attr:`cli_message`.
    """

    def __init__(self, *args: object, cli: str | None = None) -> None:
        super().__init__(*args)
        self.cli = cli

    @property
    def cli_message(self) -> str:
        """The line the command line prints: :attr:`cli` when given, else the message."""
        return self.cli if self.cli is not None else str(self)


class InputError(KerckhoffsError, ValueError):
    """The data, schema or hierarchy given cannot be read or does not fit together (also a
    :class:`ValueError`, as scikit-learn's errors subclass the matching built-in)."""


class EmptyTable(InputError):
    """The table has no rows: none in the input, or none left once the rows with missing
    values were dropped (a part of a larger table may be empty; the whole may not)."""


class SchemaError(InputError):
    """The schema is malformed or names columns the data lacks."""


class HierarchyError(InputError):
    """A generalization hierarchy is malformed or misses a value present in the data."""


class ParameterError(KerckhoffsError, ValueError):
    """A parameter is impossible for the data (k above the table size, l above the SA domain);
    also a :class:`ValueError`."""


class CannotPublish(ParameterError):
    """The algorithm refuses to publish this table with these parameters, by its own rule
    (MASK, paper 001 Algorithm 1 step 2a: fewer groups satisfy m-confidentiality than it needs
    to copy frequencies from), as opposed to a parameter that is impossible in itself."""


class ArgumentError(ParameterError):
    """A bad argument, kept as data: ``parameter`` (its name in the function), ``value`` (left
    out when the argument is refused whatever its value) and ``reason``, so a front end names
    the parameter as its users spell it (the command line prints ``--sa-values 0: ...``)
    without parsing the text (:meth:`spelled`)."""

    def __init__(self, parameter: str, value: object = NO_VALUE, reason: str = "") -> None:
        self.parameter = parameter
        self.value = value
        self.reason = reason
        super().__init__(self.spelled(parameter))

    def __reduce__(self) -> tuple[type[ArgumentError], tuple[str, object, str]]:
        # rebuilt from its fields, not from the message (Dask sends errors between processes)
        return (type(self), (self.parameter, self.value, self.reason))

    def spelled(self, parameter: str) -> str:
        """The line with the parameter named ``parameter`` (``--seed`` on the command line):
        ``PARAMETER VALUE: REASON``, or ``PARAMETER: REASON`` without a value."""
        if self.value is NO_VALUE:
            return f"{parameter}: {self.reason}"
        return f"{parameter} {self.value}: {self.reason}"


class CannotRun(ParameterError):
    """An attack whose adversary fits the release and the knowledge could not run on this
    input (the files lack what it reads, its engine does not handle the release's model): an
    audit counts it as a gap, so its verdict is INCOMPLETE, never SAFE
    (:mod:`kerckhoffs.attacks.registry`). The message starts with the attack's name."""


class NothingReleased(KerckhoffsError):
    """A safe publishing strategy decided to release nothing (paper 002's ``φ``, the exclusive
    strategy, ``docs/theory/disclosure-sets.md#exclusive``): e.g. ``lattice-exclusive`` when the
    naive choice fails its privacy check on the disclosure set. A verdict, not a bad parameter: the
    command line prints the one line and exits 1, and nothing is written."""

    exit_code = 1


class PrivacyCheckFailed(KerckhoffsError):
    """A release failed the independent check of its privacy model and was not written."""


class InternalError(RuntimeError):
    """An invariant of kerckhoffs's own code does not hold: a bug, never the user's input.

    Raised where the code used to ``assert`` (``python -O`` strips asserts, and a privacy check
    must not vanish with them). Not a :class:`KerckhoffsError`: the command line lets it
    surface as a crash to report, not as an ``error:`` line the user could fix."""


@dataclass(frozen=True)
class Spelling:
    """A word of an error line that each front end spells its own way, kept as data: how the
    command line says it (``cli``: a flag) and how the library does (``library``: a keyword
    argument). An error built from parts (:func:`input_error`) renders each part for the front
    end that prints it; nothing is rewritten or parsed from the text."""

    cli: str
    library: str


OUT = Spelling("--out", "output")
"""The place an output is written: ``--out DIR`` on the command line."""
REPLACE_HINT = Spelling("add --overwrite to replace it", "pass overwrite=True to replace it")
ANOTHER_OUT_HINT = Spelling("choose another --out", "choose another output")
NO_VERIFY_HINT = Spelling("(--no-verify reads it as it is)", "(verify=False reads it as it is)")
NEEDS_SCHEMA = Spelling("needs --schema", "needs a schema")
WITH_SCHEMA = Spelling("itself with --schema)", "itself with its schema)")
SEP_HINT = Spelling("use --sep ", "pass sep=")
"""Followed by the delimiter's repr: ``use --sep ';'`` / ``pass sep=';'``."""

Part = str | Spelling
"""A piece of an error line: text (the same for every front end) or a :class:`Spelling`."""


def wording(parts: tuple[Part, ...], front: str) -> str:
    """The line ``parts`` make for ``front`` (``"cli"`` or ``"library"``)."""
    return "".join(p if isinstance(p, str) else getattr(p, front) for p in parts)


def input_error(*parts: Part) -> InputError:
    """An :class:`InputError` made of ``parts``: its message spells each :class:`Spelling` the
    library's way (``overwrite=True``), its :attr:`~KerckhoffsError.cli_message` the command
    line's (``--overwrite``), so a Python user is never told about flags they cannot pass.

    >>> e = input_error(OUT, " rel already exists (", REPLACE_HINT, ")")
    >>> str(e)
    'output rel already exists (pass overwrite=True to replace it)'
    >>> e.cli_message
    '--out rel already exists (add --overwrite to replace it)'
    """
    return InputError(wording(parts, "library"), cli=wording(parts, "cli"))
