"""A DP synthetic-data release (scheme ``synthetic``): rows drawn from a model fitted to
noisy marginals (:mod:`kerckhoffs.dp.synthetic`, MST or AIM through OpenDP), the marginals
it was fitted on with their noise and intervals, and what ``release.json`` records (method,
measure, rho, epsilon, delta, neighbour notion, rows per person, OpenDP's privacy map, OpenDP
version, the marginals; never a seed or the true number of rows: the number of synthetic
rows is the model's estimate from the noisy marginals).

Files: ``synthetic.csv`` / ``synthetic.parquet`` (the rows), ``marginals.csv`` /
``marginals.parquet`` (the measured marginals) and ``release.json``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs.data.schema import Column, Kind, Role, Schema
from kerckhoffs.data.table import Table
from kerckhoffs.dp.loss import Measure, PrivacyLoss
from kerckhoffs.dp.mechanisms import NoiseSpec
from kerckhoffs.errors import InputError, ParameterError
from kerckhoffs.models.base import ModelResult, PrivacyModel
from kerckhoffs.models.differential_privacy import DPTarget
from kerckhoffs.models.histogram import GroupHistogram
from kerckhoffs.release.contract import Release, refuse_failed
from kerckhoffs.release.format import FORMAT, FORMAT_VERSION, Scheme
from kerckhoffs.release.integrity import checked_models
from kerckhoffs.release.partition import Partition
from kerckhoffs.release.provenance import Provenance
from kerckhoffs.release.reader import published_provenance
from kerckhoffs.release.writer import checks_json, writable_models, write_release_files

SYNTHETIC = "synthetic"
"""The rows' table name (``synthetic.csv`` / ``synthetic.parquet``)."""
MARGINALS = "marginals"
"""The measured marginals' table name."""
INTERVAL_LEVEL = 0.95
"""The level of every stated interval (OpenDP's accuracy at ``alpha = 0.05``)."""
POST_PROCESSING = (
    "graphical model fitted to the noisy marginals (mirror descent), rounded to rows "
    "(deterministic given the model), rows in a null key dropped, rows sorted; the number "
    "of rows is the model's estimate from the noisy marginals"
)


@dataclass(frozen=True, eq=False)
class SyntheticRelease(Release, schemes=(Scheme.SYNTHETIC,)):
    """DP synthetic rows (:meth:`to_pandas`), the noisy marginals they were fitted on
    (:meth:`marginals`) and :attr:`noise` (a :class:`NoiseSpec`: the privacy map, one part
    per measured marginal with its noise scale, interval and the synthetic rows' L1 distance
    from it). Its :attr:`table` is the synthetic rows encoded (groups: rows with the same QI
    cells), so checks, attacks and metrics read it as a published table."""

    table: Table
    partition: Partition
    scheme: Scheme = Scheme.SYNTHETIC
    provenance: Provenance = field(default_factory=lambda: Provenance("dp-synthetic"))
    rows: pd.DataFrame = field(kw_only=True, repr=False)
    marginal_table: pd.DataFrame = field(kw_only=True, repr=False)
    noise: NoiseSpec = field(kw_only=True)
    axes: list[dict[str, Any]] = field(default_factory=list, repr=False, kw_only=True)
    method: str = field(default="mst", kw_only=True)
    measure: Measure = field(default=Measure.PURE, kw_only=True)
    rho: float | None = field(default=None, kw_only=True)
    contributions: int = field(default=1, kw_only=True)
    iters: int | None = field(default=None, kw_only=True)
    published_metadata: dict[str, Any] | None = field(
        default=None, repr=False, compare=False, kw_only=True
    )
    notes: list[str] = field(default_factory=list, repr=False, compare=False, kw_only=True)
    models: tuple[PrivacyModel, ...] = field(default=(), compare=False, kw_only=True)
    sa_published: np.ndarray = field(init=False, repr=False, compare=False)
    cells: None = field(default=None, init=False, repr=False, compare=False)
    _hist: GroupHistogram | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if Scheme(self.scheme) != Scheme.SYNTHETIC:
            raise ValueError(
                f"a synthetic release publishes by scheme synthetic, not {self.scheme}"
            )
        object.__setattr__(self, "sa_published", self.table.sa)
        if self.partition.n != self.table.n:
            raise ValueError(f"partition has {self.partition.n} rows, table has {self.table.n}")

    def __repr__(self) -> str:
        return (
            f"SyntheticRelease({self.method}, {len(self.rows):,} rows, "
            f"{len(self.noise.parts)} marginals, epsilon {self.noise.privacy_map:g} "
            f"({self.noise.neighbours.value}))"
        )

    # -- what it publishes -------------------------------------------------------------------
    def to_pandas(self) -> pd.DataFrame:
        """The synthetic rows (labels of the public domain; every QI and the SA)."""
        return self.rows.copy()

    def marginals(self) -> pd.DataFrame:
        """The noisy marginals the model was fitted on: ``marginal``, one label column per
        attribute (``*`` outside the marginal), the noisy ``count`` and its interval
        ``lower``/``upper`` at :data:`INTERVAL_LEVEL` (OpenDP's accuracy for the noise scale
        the measurement used)."""
        return self.marginal_table.copy()

    def frames(self, include_other: bool = False) -> dict[str, pd.DataFrame]:
        """``{"synthetic": rows, "marginals": measured marginals}``."""
        if include_other:
            raise ParameterError("a synthetic release publishes its columns only")
        return {SYNTHETIC: self.rows, MARGINALS: self.marginal_table}

    def published_numbering(self, cells: pd.DataFrame | None = None) -> np.ndarray:
        """Groups are numbered as the partition numbers them."""
        return np.arange(self.partition.n_groups, dtype=np.int32)

    # -- privacy -------------------------------------------------------------------------------
    def privacy_loss(self) -> tuple[float, float]:
        """``(epsilon, delta)``: OpenDP's privacy map of the whole measurement (for a zCDP
        release its rho converted by OpenDP at the release's delta)."""
        return (self.noise.privacy_map, self.noise.delta)

    def accounting(self) -> PrivacyLoss:
        """The ledger's record: the loss, its measure (pure or zCDP with its rho), the
        neighbour notion and the rows per person the map was computed for."""
        eps, delta = self.privacy_loss()
        return PrivacyLoss(
            eps,
            delta,
            self.noise.neighbours.value,
            self.measure,
            self.rho,
            self.contributions,
        )

    def check(self, models: Sequence[PrivacyModel] | None = None) -> list[ModelResult]:
        """Each DP target against the recorded loss and notion; a group model is a one-line
        ParameterError (the rows are synthetic: a k of them says nothing about people)."""
        out = []
        for m in self.chosen_models(models):
            if not isinstance(m, DPTarget):
                raise ParameterError(
                    f"{m.name} ({m.parameter}) is a property of groups of real rows; a "
                    "synthetic release is DP: check it with dp=EPS"
                )
            out.append(m.evaluate_loss(self.privacy_loss(), self.noise.neighbours))
        return out

    def verify(self, models: Sequence[PrivacyModel] | None = None) -> list[ModelResult]:
        """Read the metadata and tables about to be written back and check every model there
        (:class:`~kerckhoffs.errors.PrivacyCheckFailed` when one fails: fail closed)."""
        chosen = self.chosen_models(models)
        back = SyntheticRelease.read_frames(self.frames(), self.metadata(), None)
        results = back.check(chosen)
        refuse_failed(results)
        return results

    def metadata(
        self,
        checks: list[ModelResult] | None = None,
        models: Sequence[PrivacyModel] | None = None,
    ) -> dict[str, Any]:
        """``release.json``: scheme ``synthetic``, provenance, the axes, the noise record
        (``dp``) and the synthetic-data record; no seed, no true row count."""
        quasi = [a for a in self.axes if a["role"] == "quasi"]
        sa = [a for a in self.axes if a["role"] == "sensitive"]
        keys = ("name", "kind", "level")
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "scheme": Scheme.SYNTHETIC.value,
            "provenance": self.provenance.to_dict(),
            "quasi": [{k: a[k] for k in keys} for a in quasi],
            "sensitive": {k: sa[0][k] for k in keys} if sa else {"name": self.table.sa_name},
            "dp": self.noise.to_dict(),
            "synthetic": {
                "method": self.method,
                "measure": self.measure.value,
                "rho": self.rho,
                "epsilon": self.noise.epsilon,
                "delta": self.noise.delta,
                "privacy_map": self.noise.privacy_map,
                "neighbours": self.noise.neighbours.value,
                "contributions": self.contributions,
                "opendp": self.noise.opendp,
                "estimator_iterations": self.iters,
                "cliques": [list(p.get("attributes", [])) for p in self.noise.parts],
                "rows": "the model's estimate from the noisy marginals (not the true count)",
                "interval_level": INTERVAL_LEVEL,
            },
            "checks": checks_json(checks, models),
        }

    def write(
        self,
        out_dir: str | Path,
        models: Sequence[PrivacyModel] | None = None,
        *,
        formats: tuple[str, ...] = ("csv", "parquet"),
        include_other: bool = False,
        overwrite: bool = False,
    ) -> list[ModelResult]:
        """Write the rows, the marginals and ``release.json`` if every DP target holds on the
        loss recorded in the metadata about to be written; otherwise nothing is written and
        :class:`~kerckhoffs.errors.PrivacyCheckFailed` is raised."""
        chosen = writable_models(self.models if models is None else models, formats)
        frames = self.frames(include_other)
        results = self.verify(chosen)
        write_release_files(out_dir, frames, self.metadata(results, chosen), formats, overwrite)
        return results

    # -- reading back --------------------------------------------------------------------------
    @classmethod
    def read_frames(
        cls,
        frames: dict[str, pd.DataFrame],
        meta: dict[str, Any],
        schema: Schema | None,
        *,
        providers: Sequence[Any] | np.ndarray | None = None,
    ) -> SyntheticRelease:
        """A published synthetic release (what :meth:`Release.from_published` returns for
        scheme ``synthetic``); ``schema`` and ``providers`` are not used."""
        where = "release.json"
        rows, info = frames.get(SYNTHETIC), meta.get("synthetic")
        if rows is None:
            raise InputError("synthetic release: no synthetic table")
        if not isinstance(meta.get("dp"), dict) or not isinstance(info, dict):
            raise InputError(f"{where}: field 'dp' or 'synthetic' is missing or not an object")
        try:
            noise = NoiseSpec.from_dict(meta["dp"], where)
            measure = Measure(str(info.get("measure", "")))
        except (ParameterError, ValueError) as exc:
            raise InputError(f"{where}: {exc}") from None
        quasi = [str(q["name"]) for q in meta.get("quasi", [])]
        sa = str((meta.get("sensitive") or {}).get("name", ""))
        missing = [c for c in [*quasi, sa] if c not in rows.columns]
        if missing:
            raise InputError(f"synthetic table: column {missing[0]!r} is missing")
        text = rows[[*quasi, sa]].astype(str).reset_index(drop=True)
        axes = [
            {"role": "quasi", **{k: q.get(k) for k in ("name", "kind", "level")}}
            for q in meta["quasi"]
        ] + [
            {
                "role": "sensitive",
                **{k: meta["sensitive"].get(k) for k in ("name", "kind", "level")},
            }
        ]
        rho = info.get("rho")
        table = synthetic_table(text, quasi, sa)
        return cls(
            table,
            qi_groups(table),
            provenance=published_provenance(meta),
            rows=text,
            marginal_table=frames.get(MARGINALS, pd.DataFrame()),
            noise=noise,
            axes=axes,
            method=str(info.get("method", "unknown")),
            measure=measure,
            rho=None if rho is None else float(rho),
            contributions=int(info.get("contributions", 1)),
            iters=info.get("estimator_iterations"),
            models=checked_models(meta),
            published_metadata=meta,
        )


def synthetic_table(rows: pd.DataFrame, quasi: list[str], sa: str) -> Table:
    """The synthetic rows encoded: each column categorical over its labels. No rows is a
    possible DP output (the model's estimated total can be 0): the table is then an encoded
    placeholder row cut to none."""
    cols = [Column(q, Role.QUASI, kind=Kind.CATEGORICAL) for q in quasi]
    cols.append(Column(sa, Role.SENSITIVE, kind=Kind.CATEGORICAL))
    schema = Schema(tuple(cols))
    frame = rows[[*quasi, sa]].astype(str)
    if len(frame):
        return Table.encode(frame, schema, strict_sensitive=False)
    placeholder = Table.encode(
        pd.DataFrame({c: ["*"] for c in [*quasi, sa]}), schema, strict_sensitive=False
    )
    return dataclasses.replace(
        placeholder,
        qi=np.asfortranarray(placeholder.qi[:0]),
        sa=placeholder.sa[:0],
        row_ids=None if placeholder.row_ids is None else placeholder.row_ids[:0],
        index=None if placeholder.index is None else placeholder.index[:0],
    )


def qi_groups(table: Table) -> Partition:
    """Rows with the same QI codes in one group (what an adversary sees as a QI-group)."""
    if table.n == 0:
        return Partition(np.zeros(0, dtype=np.int32))
    _, inverse = np.unique(table.qi, axis=0, return_inverse=True)
    return Partition.from_labels(inverse.reshape(-1))


__all__ = [
    "INTERVAL_LEVEL",
    "MARGINALS",
    "POST_PROCESSING",
    "SYNTHETIC",
    "SyntheticRelease",
    "qi_groups",
    "synthetic_table",
]
