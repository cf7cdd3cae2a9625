"""A release written against a privacy budget: the DP publication transaction.

:func:`publish` (``kh.publish``; ``kerckhoffs anonymize --ledger L [--budget B]`` on the
command line) computes a DP release, writes it and charges everyone in its input to a
privacy ledger (:mod:`kerckhoffs.dp.ledger`) as one transaction, in this order:

1. The ledger's path is resolved (links followed) and checked: a private file, never inside a
   release folder, in a folder that exists (never created: a typo would start a fresh
   ledger), with one name only (a hard link would be split by the atomic save). Its lock is
   taken, *then* it is read, so nobody records between what this run reads and what it
   writes.
2. Everyone in the input pays, one id per input row, including rows a missing-value policy
   drops (their row decided the output too). With a budget, each person whose total would
   exceed it is left out of the computation (:mod:`kerckhoffs.dp.individual_filter`,
   Feldman and Zrnic 2021) and charged nothing; or, with ``over_budget="refuse"``, the
   whole release is refused (which tells whoever sees the refusal that an exhausted person
   is in the data: the filter is the default for that reason).
3. The release is computed, written into a staging folder and checked there (fail closed).
4. **Write-ahead:** the charge is recorded, with the staged ``release.json``'s integrity
   digest and the release's final path, and the ledger saved atomically; only then is the
   release renamed into place. A process killed at any point leaves either no release, or
   a release that is charged. A charge without a release (killed between the two, or the
   rename failing) is the safe failure: budget spent, nothing published; the error says so.
   A previous release that ``overwrite`` was to replace stays until the new one takes its
   place (and the next run puts it back if a kill left its place empty:
   :mod:`kerckhoffs.data.output`).

Nothing printed or written says who or how many were left out; the ledger (the publisher's
private file) says who was charged.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs import api
from kerckhoffs.algorithms.registry import get
from kerckhoffs.data.io import read_table
from kerckhoffs.data.output import check_private_file, output_directory
from kerckhoffs.data.schema import Schema
from kerckhoffs.data.table import Table
from kerckhoffs.dp.composition import (
    ADD_REMOVE,
    SUBSTITUTION,
    TOLERANCE,
    BudgetExceeded,
    entry_spend,
    notion_text,
    parse_budget,
    parse_notion,
    steps_per_row,
    zcdp_rho_within,
)
from kerckhoffs.dp.contributions import first_rows
from kerckhoffs.dp.individual_filter import with_public_records, without_rows
from kerckhoffs.dp.ledger import BudgetCheck, Entry, Ledger
from kerckhoffs.dp.ledger_file import lock
from kerckhoffs.dp.loss import Measure, PrivacyLoss
from kerckhoffs.dp.mechanisms import check_contributions
from kerckhoffs.errors import InputError, KerckhoffsError, ParameterError, PrivacyCheckFailed
from kerckhoffs.models.base import ModelResult, PrivacyModel
from kerckhoffs.models.differential_privacy import DifferentialPrivacy
from kerckhoffs.pipelines.arguments import as_models
from kerckhoffs.release import Release, Scheme

OVER_BUDGET = ("leave-out", "refuse")
"""What happens to people a release would take over budget: left out of the computation
(an individual filter; the default) or the whole release refused."""


@dataclass(frozen=True)
class Publication:
    """What :func:`publish` did: the release written (``release``, its model ``results``),
    the ledger entry charged for it (``entry``) and the ledger's path (``ledger``)."""

    release: Release
    results: list[ModelResult]
    entry: Entry
    ledger: Path
    neighbours: str
    """The notion of the ledger's budget."""
    created: bool = False
    """The ledger did not exist: this publication started it."""


def parse_over_budget(value: str) -> str:
    """``leave-out`` or ``refuse`` (see :data:`OVER_BUDGET`); anything else is one line."""
    text = str(value).strip().lower().replace("_", "-")
    if text not in OVER_BUDGET:
        raise ParameterError(
            f"over_budget {value!r}: choose leave-out (people over budget are left out of the "
            "computation) or refuse (the whole release is refused)"
        )
    return text


@dataclass
class LedgerTransaction:
    """The ledger, locked and read, and the options of the publication (made by
    :func:`ledger_transaction`); :meth:`publish` computes, writes and charges one release."""

    ledger: Ledger
    path: Path
    column: str
    budget: tuple[float, float] | None
    over_budget: str
    created: bool = False
    """The ledger file did not exist when it was read (a new ledger starts there)."""

    def publish(
        self,
        table: Table,
        data: str | Path | pd.DataFrame,
        algorithm: str,
        models: Sequence[PrivacyModel],
        out_dir: str | Path,
        *,
        options: Mapping[str, Any] | None = None,
        formats: tuple[str, ...] = ("csv", "parquet"),
        overwrite: bool = False,
        sep: str | None = None,
        protect: Iterable[str | Path | None] = (),
        include_other: bool = False,
    ) -> Publication:
        """Compute ``algorithm`` on ``table`` (the encoded ``data``; the ids of the people
        are read from ``data``'s identifier column), write it to ``out_dir`` and charge it
        (module docstring). One-line errors: not a DP algorithm or model, a neighbour
        notion the ledger cannot hold, everyone over budget with ``refuse``."""
        info = get(algorithm)
        if Scheme.DP not in info.schemes:
            raise InputError(
                f"--ledger needs a DP release (one that states its epsilon and delta); "
                f"{info.name} publishes by {', '.join(s.value for s in info.schemes)}"
            )
        targets = [m for m in models if isinstance(m, DifferentialPrivacy)]
        if len(targets) != 1:
            raise InputError(
                "--ledger charges the epsilon a release is made for: give one --model dp=EPS "
                "(or dp=EPS,DELTA)"
            )
        target = targets[0]
        opts = dict(options or {})
        notion = parse_notion(opts.get("neighbours", SUBSTITUTION))
        steps_per_row(notion, self.ledger.neighbours)  # refused before any work
        bound = check_contributions(opts.get("contributions", 1))
        out = Path(out_dir)
        name = out.name or str(out)
        ids = people_of_input(data, self.column, sep=sep)
        row_ids = table.row_ids if table.row_ids is not None else np.arange(table.n)
        if row_ids.size and int(row_ids.max()) >= ids.size:
            raise InputError(f"the table has rows the data {data} does not (is it its table?)")
        if "persons" in info.options:  # bounded by the ledger's own identifier column
            opts["persons"] = ids[row_ids]
        elif bound > 1:
            raise InputError(f"{info.name} does not bound each person's rows (contributions)")
        expected = expected_loss(info.name, opts, target, notion, bound)
        left = self._left_out(ids, expected, name)
        left_rows = left[row_ids]
        if left_rows.any():
            table = (
                without_rows(table, left_rows)
                if notion == ADD_REMOVE
                else with_public_records(table, left_rows)
            )
        release = api.anonymize_table(table, algorithm, models, options=opts, verify=False)
        loss = _stated_loss(release, info.name, notion, target, bound)
        _within_expected(loss, expected, info.name)
        members = ids[~left]
        if bound > 1:  # the release used at most `bound` rows of each: one group step each
            members = members[first_rows(members, bound)]
        final = os.path.abspath(out)
        charged: list[Entry] = []

        def write_ahead(staged: Path) -> None:
            charged.append(
                self.ledger.record_loss(
                    name,
                    loss,
                    members,
                    path=final,
                    digest=release_digest(staged),
                    budget=self.budget,
                    allow_empty=True,
                )
            )

        with output_directory(out, kind="release", overwrite=overwrite, protect=protect) as claim:
            claim.before_publish = write_ahead
            try:
                results = release.write(
                    out, formats=formats, include_other=include_other, overwrite=overwrite
                )
            except Exception as exc:
                if not charged:
                    raise
                message = exc.cli_message if isinstance(exc, KerckhoffsError) else str(exc)
                raise InputError(
                    f"{message}; the ledger {self.path} charges the release {out_dir} but it "
                    "was not published (a charge without a release: the budget is spent, "
                    "nothing was published)"
                ) from None
            finally:
                claim.before_publish = None
        return Publication(
            release, results, charged[0], self.path, self.ledger.neighbours, self.created
        )

    def _left_out(self, ids: np.ndarray, expected: PrivacyLoss, name: str) -> np.ndarray:
        """For each input row, whether its person is left out: their total after a release
        charged at most ``expected`` (:func:`expected_loss`: the target's loss, in the
        measure the release will have; at most ``contributions`` rows of each person used)
        would exceed the budget (a function of their own history and number of rows only).
        With ``refuse``, any such person refuses all."""
        if self.budget is None:
            return np.zeros(ids.size, dtype=bool)
        codes, uniq = pd.factorize(ids)
        k = np.minimum(np.bincount(codes, minlength=len(uniq)), expected.contributions)
        uniq = np.asarray(uniq, dtype=object)
        b_eps, b_delta = self.budget
        added = entry_spend(
            k,
            expected.epsilon,
            expected.delta,
            expected.neighbours,
            self.ledger.neighbours,
            measure=expected.measure,
            rho=expected.rho,
            contributions=expected.contributions,
        )
        after_eps, after_delta = (self.ledger.spend_of(uniq) + added).totals(b_delta)
        over = (after_eps > b_eps * (1 + TOLERANCE)) | (after_delta > b_delta * (1 + TOLERANCE))
        if over.any() and self.over_budget == "refuse":
            table = pd.DataFrame(
                {"epsilon": after_eps[over], "delta": after_delta[over]},
                index=pd.Index(uniq[over], name="person", dtype=object),
            )
            raise BudgetExceeded(BudgetCheck(True, table, self.budget).message(f"release {name}"))
        return np.asarray(over[codes], dtype=bool)


ZCDP_ALGORITHMS = ("dp-synthetic",)
"""Algorithms whose releases are zCDP whenever their target has a delta > 0 (AIM and MST with
Gaussian noise; with delta 0 they are pure epsilon-DP, with Laplace noise)."""


def expected_loss(
    algorithm: str, options: Mapping[str, Any], target: Any, notion: str, contributions: int
) -> PrivacyLoss:
    """The most a release of ``algorithm`` with ``options`` for the DP ``target`` can be
    charged, in the measure it will have, known before it is computed (the individual filter
    decides with it; :func:`_within_expected` checks the release against it): zCDP for the
    Gaussian mechanism and the synthetic-data algorithms given a delta > 0, at the largest
    rho whose OpenDP conversion at the target's delta is within its epsilon
    (:func:`~kerckhoffs.dp.composition.zcdp_rho_within`); otherwise pure, at the target's
    epsilon (Laplace, geometric, randomized response and noisy max spend no delta)."""
    mechanism = str(options.get("mechanism", "")).strip().lower()
    zcdp_synthetic = algorithm.startswith(ZCDP_ALGORITHMS) and float(target.delta) > 0
    if mechanism == "gaussian" or zcdp_synthetic:
        rho = zcdp_rho_within(target.epsilon, target.delta) * (1 + TOLERANCE)
        return PrivacyLoss(target.epsilon, target.delta, notion, Measure.ZCDP, rho, contributions)
    return PrivacyLoss(target.epsilon, 0.0, notion, Measure.PURE, None, contributions)


def _within_expected(loss: PrivacyLoss, expected: PrivacyLoss, algorithm: str) -> None:
    """Fail closed unless ``loss`` is charged no more than ``expected`` in every composition
    route: the same measure, and no larger delta or rho (its epsilon was checked against the
    target). What is compared depends on the algorithm and its parameters only, never on
    the data, so a refusal here says nothing about anyone."""
    over_rho = loss.measure == Measure.ZCDP and (loss.rho or 0.0) > (expected.rho or 0.0)
    over_delta = loss.delta > expected.delta * (1 + TOLERANCE)
    if loss.measure != expected.measure or over_delta or over_rho:
        raise PrivacyCheckFailed(
            f"release not written: {algorithm}'s release is charged as {loss.measure.value} "
            f"(delta {loss.delta:g}, rho {loss.rho}), more than the individual filter allowed "
            f"for ({expected.measure.value}, delta {expected.delta:g}, rho {expected.rho}); "
            "nothing charged"
        )


def _stated_loss(
    release: Release, algorithm: str, notion: str, target: Any, contributions: int = 1
) -> PrivacyLoss:
    """The release's :class:`~kerckhoffs.dp.loss.PrivacyLoss` (:func:`accounting_of`), after
    checking that it states one, under the notion the computation assumed, for the rows per
    person asked, within the target (fail closed otherwise)."""
    loss = accounting_of(release)
    if loss is None and privacy_loss_of(release) is None:
        raise InputError(
            f"--ledger needs a DP release (one that states its epsilon and delta); {algorithm}'s "
            "release does not"
        )
    if loss is None:
        raise InputError(
            f"--ledger: {algorithm}'s release does not state its neighbour notion; it cannot "
            "be charged"
        )
    stated = notion_text(loss.neighbours)
    if stated != notion:
        parse_notion(stated)  # a notion no ledger holds: say that
        raise PrivacyCheckFailed(
            f"release not written: {algorithm}'s release is DP under {stated} neighbours, not "
            f"{notion} as its options said; nothing charged"
        )
    if loss.contributions != contributions:
        raise PrivacyCheckFailed(
            f"release not written: {algorithm}'s privacy map is for {loss.contributions} row(s) "
            f"per person, not the {contributions} asked; nothing charged"
        )
    eps, delta = loss.epsilon, loss.delta
    if eps > target.epsilon * (1 + TOLERANCE) or delta > target.delta * (1 + TOLERANCE):
        raise PrivacyCheckFailed(
            f"release not written: its privacy loss (epsilon {eps:g}, delta {delta:g}) "
            f"exceeds the target ({target.parameter}); nothing charged"
        )
    return loss


@contextlib.contextmanager
def ledger_transaction(
    ledger: str | Path,
    schema: Schema,
    *,
    out_dir: str | Path,
    budget: float | str | tuple[float, float] | None = None,
    over_budget: str = "leave-out",
    person: str | None = None,
    neighbours: str | None = None,
    protect: Iterable[str | Path | None] = (),
) -> Iterator[LedgerTransaction]:
    """Check the ledger options, take the ledger's lock and read it (a missing file is a new
    ledger, under ``neighbours``: substitution by default; a missing folder is refused, never
    created); the lock is held for the block.

    Refused in one line before any work: a bad budget or ``over_budget``, no identifier
    column (``person`` names one), a ledger path inside a release folder, ``out_dir`` or an
    input (``protect``), not a regular file, another process holding the ledger, a damaged
    ledger, ``neighbours`` other than the existing ledger's."""
    column = identifier_column(schema, person)
    b = parse_budget(budget) if budget is not None else None
    mode = parse_over_budget(over_budget)
    if neighbours is not None:
        neighbours = parse_notion(neighbours)
    check_private_file(ledger, flag="--ledger", out_dir=out_dir, protect=protect)
    with lock(ledger):
        created = not Path(ledger).exists()
        led = Ledger.load(ledger, create=True, neighbours=neighbours)
        yield LedgerTransaction(led, Path(ledger), column, b, mode, created)


def publish(
    data: str | Path | pd.DataFrame,
    out_dir: str | Path,
    ledger: str | Path,
    *,
    schema: Schema | str | Path,
    algorithm: str,
    models: Sequence[PrivacyModel | str],
    budget: float | str | tuple[float, float] | None = None,
    over_budget: str = "leave-out",
    person: str | None = None,
    neighbours: str | None = None,
    options: Mapping[str, Any] | None = None,
    formats: tuple[str, ...] = ("csv", "parquet"),
    overwrite: bool = False,
    sep: str | None = None,
    include_other: bool = False,
    protect: Iterable[str | Path | None] = (),
    on_table: Callable[[Table], None] | None = None,
) -> Publication:
    """Write a DP release of ``data`` to ``out_dir`` and charge everyone in it to the privacy
    ledger ``ledger`` (created if missing; its folder must exist, since a mistyped folder
    would otherwise start a fresh ledger), as one transaction (module docstring).

    ``schema``: a :class:`~kerckhoffs.data.schema.Schema` or its TOML file; its identifier
    column (or ``person``) names the people. ``budget``: ``EPSILON`` or ``(EPSILON, DELTA)``
    per person across the ledger; ``over_budget``: ``leave-out`` (default: an individual
    filter) or ``refuse``. ``neighbours``: the notion of a *new* ledger's budget
    (substitution by default). ``algorithm``, ``models`` and ``options`` as for
    :func:`kerckhoffs.anonymize`; ``models`` must hold one ``dp=EPS`` target.
    ``include_other``: publish the columns of role ``other`` too, unchanged. ``protect``:
    more files no output may replace (``data`` and a schema file are protected already).
    ``on_table``: called with the table once it is read, before anything is computed (the
    command line prints its notes). ``kerckhoffs anonymize --ledger`` calls this function.

    >>> import kerckhoffs as kh, tempfile, os
    >>> from kerckhoffs.datasets import generate_hospital, hospital_schema
    >>> d = tempfile.mkdtemp()
    >>> pub = kh.publish(generate_hospital(300, seed=0), os.path.join(d, "rel"),
    ...                  os.path.join(d, "ledger.json"), schema=hospital_schema(),
    ...                  algorithm="dp-histogram", models=["dp=0.5"], budget=1,
    ...                  options={"levels": "age:4,sex:1,zip:1,nationality:1"})
    >>> pub.entry.epsilon <= 0.5, oct(os.stat(pub.ledger).st_mode & 0o777)
    (True, '0o600')
    >>> import shutil; shutil.rmtree(d)
    """
    sch = schema if isinstance(schema, Schema) else Schema.from_toml(schema)
    chosen = as_models(models)
    inputs: list[str | Path | None] = [] if isinstance(data, pd.DataFrame) else [data]
    if not isinstance(schema, Schema):
        inputs.append(schema)
    inputs += list(protect)
    with (
        ledger_transaction(
            ledger,
            sch,
            out_dir=out_dir,
            budget=budget,
            over_budget=over_budget,
            person=person,
            neighbours=neighbours,
            protect=inputs,
        ) as txn,
        output_directory(out_dir, kind="release", overwrite=overwrite, protect=inputs),
    ):
        if isinstance(data, pd.DataFrame):
            table = Table.encode(data, sch)
        else:
            table = Table.from_csv(data, sch, sep=sep, keep_other=include_other)
        if on_table is not None:
            on_table(table)
        return txn.publish(
            table,
            data,
            algorithm,
            chosen,
            out_dir,
            options=options,
            formats=formats,
            overwrite=overwrite,
            sep=sep,
            protect=inputs,
            include_other=include_other,
        )


# -- who is in a release, and what it states ----------------------------------------------
def identifier_column(schema: Schema, name: str | None = None) -> str:
    """The identifier column that names the people of a release: ``name`` if given (it must
    have role ``identifier``), else the schema's only one; a one-line error otherwise."""
    ids = [c.name for c in schema.identifiers]
    if name is not None:
        if name not in ids:
            raise InputError(
                f"--ledger-id {name}: not a column of role identifier in the schema"
                + (f" (have {', '.join(ids)})" if ids else "")
            )
        return name
    if not ids:
        raise InputError(
            "--ledger needs to know who is in the release: the schema has no column of role "
            "identifier"
        )
    if len(ids) > 1:
        raise InputError(
            f"--ledger: the schema has {len(ids)} identifier columns ({', '.join(ids)}); "
            "choose one with --ledger-id"
        )
    return ids[0]


def people_of_input(
    data: str | Path | pd.DataFrame, column: str, *, sep: str | None = None
) -> np.ndarray:
    """The id (text, as written in the file) of every row of the input, in file order:
    everyone whose row the computation could read pays, including rows a missing-value
    policy drops later (their row decided that they were dropped). A row without an id is a
    one-line error: the ledger could not account for it."""
    if isinstance(data, pd.DataFrame):
        if column not in data.columns:
            raise InputError(f"the data has no identifier column {column!r}")
        s = data[column].reset_index(drop=True)
        where = "the data"
    else:
        df = read_table(data, sep=sep, text_columns=[column], columns=[column])
        if column not in df.columns:
            raise InputError(f"{data}: no identifier column {column!r}")
        s = df[column]
        where = str(data)
    na = s.isna().to_numpy()
    if na.any():
        first = int(np.flatnonzero(na)[0]) + 1
        raise InputError(
            f"{where}: column {column!r}: {int(na.sum())} row(s) have no identifier (first: "
            f"data row {first}); the ledger cannot account for them"
        )
    return s.astype(str).to_numpy(dtype=object)


def release_digest(out_dir: str | Path) -> str | None:
    """The ``integrity`` digest recorded in a release directory's ``release.json`` (which
    covers every published file), or None when there is none."""
    meta = Path(out_dir) / "release.json"
    if not meta.is_file():
        return None
    try:
        value = json.loads(meta.read_bytes()).get("integrity")
    except (UnicodeDecodeError, json.JSONDecodeError, AttributeError, RecursionError):
        return None
    return value if isinstance(value, str) else None


def privacy_loss_of(release: object) -> tuple[float, float] | None:
    """``release.privacy_loss()`` when the release has it (DP releases), else None: only a
    release that states its ``(epsilon, delta)`` can be accounted for."""
    method = getattr(release, "privacy_loss", None)
    if method is None:
        return None
    loss = method()
    if loss is None:
        return None
    eps, delta = loss
    return float(eps), float(delta)


def accounting_of(release: object) -> PrivacyLoss | None:
    """What a ledger charges for ``release``: ``release.accounting()`` when it has one (every
    DP release: its measure, rho and rows per person too), else its :func:`privacy_loss_of`
    and :func:`neighbours_of` as an ``(epsilon, delta)`` loss for one row per person (pure when
    delta is 0); None when it states no loss or no notion."""
    method = getattr(release, "accounting", None)
    if method is not None:
        loss = method()
        if isinstance(loss, PrivacyLoss):
            return loss
    pair, notion = privacy_loss_of(release), neighbours_of(release)
    if pair is None or notion is None:
        return None
    measure = Measure.PURE if pair[1] == 0 else Measure.APPROXIMATE
    return PrivacyLoss(pair[0], pair[1], notion, measure)


def neighbours_of(release: object) -> str | None:
    """The neighbour notion a DP release states (``release.noise.neighbours``, as text), or
    None when it states none."""
    noise = getattr(release, "noise", None)
    value = getattr(noise, "neighbours", None)
    return None if value is None else notion_text(value)


__all__ = [
    "OVER_BUDGET",
    "LedgerTransaction",
    "Publication",
    "accounting_of",
    "identifier_column",
    "ledger_transaction",
    "neighbours_of",
    "parse_over_budget",
    "people_of_input",
    "privacy_loss_of",
    "publish",
    "release_digest",
]
