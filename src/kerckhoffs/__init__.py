"""kerckhoffs: privacy-preserving data publishing that stays private when the adversary
knows the algorithm (Kerckhoffs's principle applied to microdata anonymization).

One call per task (:mod:`kerckhoffs.api`)::

    import kerckhoffs as kh
    release = kh.anonymize(df, quasi=["age", "zip", "sex"], sensitive="disease",
                           algorithm="mondrian", models=["k=5", "l=3"])
    release.to_pandas()                  # input order, input index
    kh.check(df, quasi=[...], sensitive="disease", models=["k=5"])
    kh.measure(df, quasi=[...], sensitive="disease")
    kh.audit(release, knowledge=population)
    kh.publish(df, "out/dp", "ledger.json", schema=schema, algorithm="dp-histogram",
               models=["dp=0.5"], budget=1)   # a DP release charged to a privacy ledger

Underneath (``docs/concepts.md``): describe a table with a :class:`Schema`, encode it once into
a :class:`Table`, cut it into groups (a :class:`Partition`), publish a :class:`Release`,
check it against privacy models, attack it, write it.
"""

from typing import TYPE_CHECKING, Any

from kerckhoffs.version import __version__

if TYPE_CHECKING:
    from kerckhoffs.api import (
        AuditReport,
        CheckReport,
        KnownSeedWarning,
        Measures,
        anonymize,
        attack,
        audit,
        check,
        measure,
        read_release,
    )
    from kerckhoffs.data.hierarchy import Hierarchy
    from kerckhoffs.data.schema import Column, Kind, MissingPolicy, Role, Schema, SensitiveMode
    from kerckhoffs.data.table import Table
    from kerckhoffs.dp.publish import Publication, publish
    from kerckhoffs.errors import KerckhoffsError, PrivacyCheckFailed
    from kerckhoffs.metrics.reidentification import ReidentificationRisk
    from kerckhoffs.release import Bucketized, Partition, Provenance, Release, Scheme
    from kerckhoffs.reporting import Report, report

_WHERE = {
    **dict.fromkeys(
        [
            "AuditReport",
            "CheckReport",
            "KnownSeedWarning",
            "Measures",
            "anonymize",
            "attack",
            "audit",
            "check",
            "measure",
            "read_release",
        ],
        "kerckhoffs.api",
    ),
    "Hierarchy": "kerckhoffs.data.hierarchy",
    **dict.fromkeys(
        ["Column", "Kind", "MissingPolicy", "Role", "Schema", "SensitiveMode"],
        "kerckhoffs.data.schema",
    ),
    "Table": "kerckhoffs.data.table",
    "ReidentificationRisk": "kerckhoffs.metrics.reidentification",
    "Report": "kerckhoffs.reporting",
    "report": "kerckhoffs.reporting",
    "Publication": "kerckhoffs.dp.publish",
    "publish": "kerckhoffs.dp.publish",
    "KerckhoffsError": "kerckhoffs.errors",
    "PrivacyCheckFailed": "kerckhoffs.errors",
    **dict.fromkeys(
        ["Bucketized", "Partition", "Provenance", "Release", "Scheme"], "kerckhoffs.release"
    ),
}
"""Where each public name lives: imported on first use (PEP 562), so that ``kerckhoffs --help`` and
commands that need no pandas do not load it (``docs/theory/choices.md#performance``)."""


def __getattr__(name: str) -> Any:
    import importlib

    module = _WHERE.get(name)
    if module is None:  # a subpackage, as when this file imported them all
        try:
            return importlib.import_module(f"kerckhoffs.{name}")
        except ModuleNotFoundError:
            raise AttributeError(f"module 'kerckhoffs' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])


__all__ = [
    "AuditReport",
    "Bucketized",
    "CheckReport",
    "Column",
    "Hierarchy",
    "KerckhoffsError",
    "Kind",
    "KnownSeedWarning",
    "Measures",
    "MissingPolicy",
    "Partition",
    "PrivacyCheckFailed",
    "Provenance",
    "Publication",
    "ReidentificationRisk",
    "Release",
    "Report",
    "Role",
    "Schema",
    "Scheme",
    "SensitiveMode",
    "Table",
    "__version__",
    "anonymize",
    "attack",
    "audit",
    "check",
    "measure",
    "publish",
    "read_release",
    "report",
]
