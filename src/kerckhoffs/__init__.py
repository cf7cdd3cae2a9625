"""kerckhoffs: privacy-preserving data publishing that stays private when the adversary
knows the algorithm (Kerckhoffs's principle applied to microdata anonymization).

The flow (DESIGN.md section 2): describe a table with a :class:`Schema`, encode it once into
a :class:`Table`, cut it into groups (a :class:`Partition`), publish a :class:`Release`,
check it against privacy models, attack it, write it.
"""

from kerckhoffs.data.hierarchy import Hierarchy
from kerckhoffs.data.schema import Column, Kind, MissingPolicy, Role, Schema, SensitiveMode
from kerckhoffs.data.table import Table
from kerckhoffs.errors import KerckhoffsError, PrivacyCheckFailed
from kerckhoffs.release import Partition, Provenance, Release, Scheme

__version__ = "0.1.0"

__all__ = [
    "Column",
    "Hierarchy",
    "KerckhoffsError",
    "Kind",
    "MissingPolicy",
    "Partition",
    "PrivacyCheckFailed",
    "Provenance",
    "Release",
    "Role",
    "Schema",
    "Scheme",
    "SensitiveMode",
    "Table",
    "__version__",
]
