"""What the Python entry points accept, turned into the library's objects: privacy models
from objects or texts (``"k=5"``), a schema from ``quasi``/``sensitive``/``hierarchies``, a
table from a DataFrame or a file, a Dask DataFrame told apart without importing Dask.

Shared by :mod:`kerckhoffs.api` (anonymize), :mod:`kerckhoffs.pipelines.check` (check,
measure, read a release) and :mod:`kerckhoffs.pipelines.audit` (attack, audit).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeAlias

import numpy as np
import pandas as pd

from kerckhoffs.data.hierarchy import Hierarchy
from kerckhoffs.data.schema import Schema
from kerckhoffs.data.table import Table
from kerckhoffs.errors import ParameterError
from kerckhoffs.models import PrivacyModel, combine_m_privacy, parse_model

ModelLike: TypeAlias = str | PrivacyModel
"""A privacy model as an object (``KAnonymity(5)``) or as the command line writes it
(``"k=5"``, ``"l=3"``, ``"alpha-k=0.5,5"``: :func:`kerckhoffs.models.parse_model`)."""
DataLike: TypeAlias = pd.DataFrame | str | Path
HierarchyLike: TypeAlias = str | Path | Hierarchy | Mapping[str, Any]
ProvidersLike: TypeAlias = str | Path | Sequence[Any] | np.ndarray
"""The data provider of each published row: a providers file
(:mod:`kerckhoffs.data.provider_rows`) or one label per row of the release table."""


def as_models(
    models: ModelLike | Iterable[ModelLike], *, combine: bool = True
) -> list[PrivacyModel]:
    """Model objects from objects or command-line texts; at least one is required. With
    ``combine``, an m-privacy model without a constraint takes the other models as its
    constraint (:func:`~kerckhoffs.models.combine_m_privacy`)."""
    if isinstance(models, str | PrivacyModel):
        models = [models]
    out: list[PrivacyModel] = []
    for m in models:
        if isinstance(m, PrivacyModel):
            out.append(m)
        elif isinstance(m, str):
            out.append(parse_model(m))
        else:
            raise ParameterError(
                f"a model is a PrivacyModel or a text such as 'k=5', got {type(m).__name__}"
            )
    if not out:
        raise ParameterError("give at least one privacy model, e.g. models=['k=5']")
    return combine_m_privacy(out) if combine else out


def schema_of(
    quasi: Sequence[str] | None,
    sensitive: str | None,
    schema: Schema | str | Path | None,
    hierarchies: Mapping[str, HierarchyLike] | None,
) -> Schema:
    """The schema given, or one built from ``quasi``, ``sensitive`` and ``hierarchies``."""
    if schema is not None:
        if quasi is not None or sensitive is not None or hierarchies is not None:
            raise ParameterError(
                "give either schema or quasi/sensitive/hierarchies, not both (the schema "
                "already says which columns are quasi-identifiers and which is sensitive)"
            )
        return schema if isinstance(schema, Schema) else Schema.from_toml(schema)
    if quasi is None or sensitive is None:
        raise ParameterError(
            "say which columns are quasi-identifiers and which is sensitive: "
            "quasi=[...], sensitive='...' (or schema=Schema...)"
        )
    if isinstance(quasi, str):
        quasi = [quasi]
    hier = dict(hierarchies or {})
    unknown = sorted(set(hier) - set(quasi))
    if unknown:
        raise ParameterError(f"hierarchies names {unknown[0]!r}, which is not in quasi")
    cols: dict[str, dict[str, Any]] = {}
    for name in quasi:
        h = hier.get(name)
        if h is None:
            cols[name] = {}
        elif isinstance(h, Mapping):  # column options: {"widths": [5, 10]}, {"kind": ...}
            cols[name] = dict(h)
        else:
            cols[name] = {"hierarchy": h}
    return Schema.build(cols, sensitive)


def table_of(data: DataLike | Table, schema: Schema, *, sep: str | None = None) -> Table:
    """The table ``data`` is: encoded from a DataFrame, read from a CSV/Parquet file (``sep``:
    its delimiter, detected by default), or a :class:`Table` as it is."""
    if isinstance(data, Table):
        return data
    if isinstance(data, pd.DataFrame):
        return Table.encode(data, schema)
    if isinstance(data, str | Path):
        return Table.from_csv(data, schema, sep=sep)
    raise ParameterError(
        f"data must be a pandas DataFrame, a CSV/Parquet path or a Table, got {type(data).__name__}"
    )


def dask_client(what: str) -> Any:
    """The current ``dask.distributed`` client, or a one-line error saying how to start one."""
    try:
        from distributed import get_client
    except ImportError:  # pragma: no cover - dask without distributed
        raise ParameterError(
            "a Dask DataFrame needs dask.distributed: pip install 'kerckhoffs[dask]'"
        ) from None
    try:
        return get_client()
    except ValueError:
        raise ParameterError(
            f"a Dask DataFrame is {what} on a dask.distributed client's workers: start one "
            "first (distributed.Client() for this machine, Client('tcp://host:8786') for a "
            "cluster)"
        ) from None


def is_dask_frame(data: object) -> bool:
    """A Dask DataFrame, told without importing Dask (an optional extra)."""
    return type(data).__module__.startswith("dask.") and hasattr(data, "to_delayed")


__all__ = [
    "DataLike",
    "HierarchyLike",
    "ModelLike",
    "ProvidersLike",
    "as_models",
    "dask_client",
    "is_dask_frame",
    "schema_of",
    "table_of",
]
