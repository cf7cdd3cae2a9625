"""Public entry to the bundled demo data and the real-data loaders.

``kerckhoffs.datasets.generate_hospital(rows, seed)`` is the embedded demo table (no
download); ``load_adult``, ``load_adult_training`` and ``load_census`` read the UCI files by
path, each optionally with a ``provider`` column (``providers=N``: paper 003's collaborative
setting, :func:`assign_providers`). The implementation lives in :mod:`kerckhoffs.data.datasets`.
"""

from kerckhoffs.data.datasets import (
    ADULT_COLUMNS,
    HOSPITAL_SENSITIVE_VALUES,
    PROVIDER_COLUMN,
    PROVIDER_SPLITS,
    assign_providers,
    generate_hospital,
    hospital_hierarchies,
    hospital_schema,
    load_adult,
    load_adult_training,
    load_census,
    with_providers,
)

__all__ = [
    "ADULT_COLUMNS",
    "HOSPITAL_SENSITIVE_VALUES",
    "PROVIDER_COLUMN",
    "PROVIDER_SPLITS",
    "assign_providers",
    "generate_hospital",
    "hospital_hierarchies",
    "hospital_schema",
    "load_adult",
    "load_adult_training",
    "load_census",
    "with_providers",
]
