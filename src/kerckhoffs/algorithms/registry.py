"""The registry that lets the CLI and the auditors name anonymization algorithms.

Every algorithm has the same shape, ``(Table, models, *, seed, **options) -> Release``: it
reads the parameters it needs from the privacy models the user asked for (``k`` from
:class:`~kerckhoffs.models.KAnonymity`, ``l`` from :class:`~kerckhoffs.models.LDiversity`, ...)
and refuses models it cannot enforce with a one-line
:class:`~kerckhoffs.errors.ParameterError`. The same models are then checked independently on
the written files (:meth:`kerckhoffs.release.Release.write`).
"""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import numpy as np

from kerckhoffs.data.table import Table
from kerckhoffs.errors import ArgumentError, ParameterError
from kerckhoffs.model_syntax import written
from kerckhoffs.models.base import PrivacyModel
from kerckhoffs.models.parse import written_model
from kerckhoffs.randomness import Seed
from kerckhoffs.release import Release, Scheme


class Algorithm(Protocol):
    """What an anonymization algorithm looks like to the registry: the table and the models,
    a keyword ``seed``, and any options of its own as keywords with defaults (a function with
    more optional keywords matches; :func:`register` checks the shape when it registers)."""

    def __call__(
        self, table: Table, models: list[PrivacyModel], *, seed: Seed = None
    ) -> Release: ...


AlgorithmT = TypeVar("AlgorithmT", bound=Algorithm)


def _check_shape(name: str, fn: Callable[..., Any]) -> None:
    """Refuse to register a function that does not have the :class:`Algorithm` shape."""
    params = list(inspect.signature(fn).parameters.values())
    positional = [p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
    keywords = {p.name: p for p in params if p.kind is p.KEYWORD_ONLY}
    if positional[:2] != ["table", "models"] or len(positional) != 2:
        raise TypeError(f"algorithm {name!r} must take (table, models, *, seed, ...)")
    if "seed" not in keywords or keywords["seed"].default is not None:
        raise TypeError(f"algorithm {name!r} must take a keyword seed defaulting to None")
    required = [k for k, p in keywords.items() if p.default is p.empty]
    if required:
        raise TypeError(f"algorithm {name!r}: option {required[0]!r} needs a default")


_BASIC = {"int": int, "float": float, "bool": bool, "str": str, "None": type(None)}
"""The option types a value given as text (``--option KEY=VALUE``) can be read as."""


@dataclass(frozen=True)
class Option:
    """An option's documentation with its range, for :func:`register`'s ``options`` (a plain
    string there is the one-line doc of an option without a range)."""

    doc: str
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class OptionSpec:
    """One option of an algorithm, declared once: its ``name``, ``type`` (as the function's
    signature annotates it: ``"float"``, ``"int | None"``, ``"bool | str"``), ``default``,
    range (``low``..``high``, inclusive, None for unbounded) and one-line ``doc``.

    What the command line reads ``--option KEY=VALUE`` with (:meth:`from_text`), what
    :meth:`AlgorithmInfo.check_options` validates a value given from Python with
    (:meth:`problem`), and what ``kerckhoffs algorithms NAME`` lists.
    """

    name: str
    type: str
    default: Any
    doc: str
    low: float | None = None
    high: float | None = None

    @property
    def kinds(self) -> tuple[str, ...]:
        """The alternatives of :attr:`type` (``"int | None"`` -> ``("int", "None")``)."""
        return tuple(t.strip() for t in self.type.split("|") if t.strip())

    @property
    def basic(self) -> bool:
        """Every alternative is int, float, bool, str or None: a value can be judged."""
        return bool(self.kinds) and all(k in _BASIC for k in self.kinds)

    def from_text(self, raw: str) -> Any:
        """The value the text ``raw`` stands for: ``true``/``false`` for a bool option, a
        number for a numeric one (an int when it reads as one, as Python would take ``5``
        for a float), else the text itself (the algorithm says why it cannot use it). An
        option whose type is not declared reads as before: bool, int, float, text."""
        kinds = set(self.kinds) if self.kinds else {"bool", "int", "float", "str"}
        if "bool" in kinds and raw.lower() in {"true", "false"}:
            return raw.lower() == "true"
        if kinds & {"int", "float"}:
            for conv in (int, float):
                try:
                    return conv(raw)
                except ValueError:
                    continue
        return raw

    def problem(self, value: Any) -> str | None:
        """Why ``value`` cannot be this option (its type or its range), or None."""
        if self.basic:
            wanted = {_BASIC[k] for k in self.kinds}
            if isinstance(value, bool | np.bool_):
                ok = bool in wanted
            elif isinstance(value, numbers.Integral):
                ok = bool(wanted & {int, float})
            elif isinstance(value, numbers.Real):
                ok = float in wanted
            else:
                ok = any(isinstance(value, t) for t in wanted)
            if not ok:
                return f"expected {self.type}, got {type(value).__name__}"
        if isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_):
            number = float(value)
            if self.low is not None and number < self.low:
                return f"must be at least {self.low:g}"
            if self.high is not None and number > self.high:
                return f"must be at most {self.high:g}"
        return None


@dataclass(frozen=True)
class AlgorithmInfo:
    """A registered algorithm: its function, what it accepts, how it publishes, and the
    properties the attacks read (by Kerckhoffs's principle the adversary knows them):

    - ``family``: the algorithm family (``"hilb"`` for Hilb and all its variants); ``base``:
      the algorithm a ``+``/``++`` variant refines (``hilb++`` -> ``hilb+``), None for an
      original;
    - ``randomized``: draws secret randomness (``docs/theory/choices.md#secret-randomness``);
    - ``minimal``: generalizes a set of tuples only when publishing them less generalized
      would violate its requirement (the minimality principle, paper 001 Definition 3: the
      minimality attack applies);
    - ``sa_blind``: forms its groups on the QIs only (k-anonymity; MASK), so the grouping
      excludes no assignment of the sensitive values (paper 001 Theorem 4, case 1);
    - ``frontier``: closes groups along the Hilbert order with a frontier that may skip rows
      (the Hilb attack, paper 000 Algorithm 7, applies; ``docs/theory/asap.md#hilb-plus``);
    - ``perturbs_sa``: publishes SA values other than the original ones (paper 001's MASK and
      paper 000's MASK+ and MASK++), which an audit built on published values cannot see;
    - ``algorithm_safe``: at its default options, safe against an adversary who knows the
      algorithm by a proof, not by a test: paper 000's sufficient conditions (Theorems 5.3 and
      5.4, kept by stratified pick-up, Theorem 7.2: Anatomy with a random tuple choice,
      Mondrian+/++, Hilb+/++ strict, MASK+/++), or differential privacy (its guarantee assumes
      the mechanism is public).
    """

    name: str
    run: Callable[..., Release]
    """The function (an :class:`Algorithm`; typed loosely so callers can pass its options)."""
    summary: str
    models: tuple[str, ...]
    schemes: tuple[Scheme, ...] = (Scheme.GENERALIZATION,)
    randomized: bool = False
    options: dict[str, str] = field(default_factory=dict)
    family: str = ""
    base: str | None = None
    minimal: bool = False
    sa_blind: bool = False
    frontier: bool = False
    perturbs_sa: bool = False
    algorithm_safe: bool = False
    seedable: bool = True
    """False when its randomness cannot be seeded at all (OpenDP's secure generator): a given
    seed is refused before any work."""
    ranges: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    """The declared range of an option (:class:`Option`), by name."""

    @property
    def option_specs(self) -> tuple[OptionSpec, ...]:
        """Each documented option with its type and default from the function's signature
        (the one declaration of both) and its doc and range from the registration."""
        params = inspect.signature(self.run).parameters
        specs = []
        for name, doc in self.options.items():
            p = params.get(name)
            declared = "" if p is None or p.annotation is p.empty else str(p.annotation)
            default = None if p is None or p.default is p.empty else p.default
            low, high = self.ranges.get(name, (None, None))
            specs.append(OptionSpec(name, declared, default, doc, low, high))
        return tuple(specs)

    def spec(self, name: str) -> OptionSpec | None:
        """The option called ``name``, or None."""
        return next((s for s in self.option_specs if s.name == name), None)

    def check_options(self, options: dict[str, object], *, generated: bool = False) -> None:
        """Refuse, before any work and in one line naming the accepted ones, an option the
        algorithm does not take.

        Accepted: the options the registry documents (:attr:`options`) that the function's
        signature takes. With ``generated`` (the algorithm auditor's random tables), per-table
        arrays such as ``hilbert_index`` are refused too: no fixed array fits tables drawn
        later.
        """
        params = inspect.signature(self.run).parameters
        var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())

        def takes(name: str) -> bool:
            p = params.get(name)
            if p is None:
                return var_kw
            return not (generated and "ndarray" in str(p.annotation))

        accepted = [o for o in self.options if takes(o)]
        for key, value in options.items():
            if key in accepted:
                continue
            known = f"it accepts: {', '.join(accepted)}" if accepted else "it accepts no options"
            why = (
                f"{self.name}'s option {key!r} is per table and cannot be given for generated "
                "tables"
                if key in self.options
                else f"{self.name} has no option {key!r}"
            )
            raise ArgumentError("option", f"{key}={value}", f"{why} ({known})")

    def check_values(self, options: Mapping[str, object]) -> None:
        """Refuse, before any work and in one line, an option value of a type the option
        does not take or outside its declared range (:meth:`OptionSpec.problem`); what
        :func:`kerckhoffs.api.plan` runs after :meth:`check_options`."""
        specs = {s.name: s for s in self.option_specs}
        for key, value in options.items():
            problem = specs[key].problem(value) if key in specs else None
            if problem is not None:
                raise ArgumentError("option", f"{key}={value}", f"{self.name}'s {key} {problem}")


REGISTRY: dict[str, AlgorithmInfo] = {}
"""Every algorithm, by name. Complete whenever this module can be used: Python loads the
package :mod:`kerckhoffs.algorithms` before any module in it, and the package imports every
algorithm's module, each of which registers itself here."""


def register(
    name: str,
    *,
    summary: str,
    models: tuple[str, ...],
    schemes: tuple[Scheme, ...] = (Scheme.GENERALIZATION,),
    randomized: bool = False,
    options: Mapping[str, str | Option] | None = None,
    family: str | None = None,
    base: str | None = None,
    minimal: bool = False,
    sa_blind: bool = False,
    frontier: bool = False,
    perturbs_sa: bool = False,
    algorithm_safe: bool = False,
    seedable: bool = True,
) -> Callable[[AlgorithmT], AlgorithmT]:
    """Decorator adding an algorithm to :data:`REGISTRY` under ``name``.

    ``models`` names the model classes the algorithm can enforce (e.g. ``("KAnonymity",
    "LDiversity")``); ``options`` documents its keyword options, one line each (an
    :class:`Option` adds a range; the type and default are the signature's:
    :attr:`AlgorithmInfo.option_specs`); ``family``
    (default: ``name``), ``base``, ``minimal``, ``sa_blind``, ``frontier``, ``perturbs_sa``
    and ``algorithm_safe`` are the properties of :class:`AlgorithmInfo`.
    """

    def deco(fn: AlgorithmT) -> AlgorithmT:
        if name in REGISTRY:
            raise ValueError(f"algorithm {name!r} registered twice")
        _check_shape(name, fn)
        given = dict(options or {})
        docs = {k: v.doc if isinstance(v, Option) else v for k, v in given.items()}
        ranges = {k: (v.low, v.high) for k, v in given.items() if isinstance(v, Option)}
        REGISTRY[name] = AlgorithmInfo(
            name,
            fn,
            summary,
            models,
            schemes,
            randomized,
            docs,
            family or name,
            base,
            minimal,
            sa_blind,
            frontier,
            perturbs_sa,
            algorithm_safe,
            seedable,
            ranges,
        )
        return fn

    return deco


def lookup(name: str) -> AlgorithmInfo | None:
    """The registered algorithm called ``name``, or None (a release read back from another
    tool's files names no registered algorithm)."""
    return REGISTRY.get(name)


def names_where(predicate: Callable[[AlgorithmInfo], bool]) -> tuple[str, ...]:
    """The registered algorithms for which ``predicate`` holds, sorted by name."""
    return tuple(sorted(n for n, info in REGISTRY.items() if predicate(info)))


def get(name: str) -> AlgorithmInfo:
    """The algorithm called ``name``; an unknown name lists the known ones."""
    try:
        return REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(REGISTRY)) or "none yet"
        raise ParameterError(f"unknown algorithm {name!r} (known: {known})") from None


def pick(models: list[PrivacyModel], cls: type, algorithm: str) -> Any | None:
    """The one model of type ``cls`` among ``models`` (None if absent; two is an error)."""
    found = [m for m in models if isinstance(m, cls)]
    if len(found) > 1:
        raise ParameterError(f"{algorithm}: give {cls.__name__} once, got {len(found)}")
    return found[0] if found else None


def refuse_others(models: list[PrivacyModel], allowed: tuple[type, ...], algorithm: str) -> None:
    """Raise for any model the algorithm cannot enforce."""
    for m in models:
        if not isinstance(m, allowed):
            names = ", ".join(written(c.__name__) for c in allowed)
            raise ParameterError(
                f"{algorithm} cannot enforce {m.name} ({written_model(m)}); it enforces: {names}"
            )


GROUP_SCHEMES = (Scheme.GENERALIZATION, Scheme.BUCKETIZATION)
"""The schemes that publish groups of rows (the DP scheme publishes noisy counts instead)."""


def parse_scheme(scheme: Scheme | str, algorithm: str) -> Scheme:
    """``scheme`` as one of the :data:`GROUP_SCHEMES`; anything else (an unknown name, or
    ``dp``, which only the DP algorithms publish) is a one-line ParameterError."""
    known = ", ".join(s.value for s in GROUP_SCHEMES)
    try:
        parsed = Scheme(scheme)
    except ValueError:
        parsed = None
    if parsed not in GROUP_SCHEMES:
        raise ParameterError(f"{algorithm}: scheme must be one of {known}, got {scheme!r}")
    assert parsed is not None
    return parsed
