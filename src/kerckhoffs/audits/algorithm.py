"""Is an anonymization algorithm itself safe once the adversary knows it? Every audit that
applies, each with what it cannot see.

Paper 000 (random worlds, ASAP and its necessary and sufficient conditions:
``docs/theory/asap.md#random-worlds`` to ``docs/theory/asap.md#sufficient-conditions``; our audits:
``docs/theory/asap.md#audits``) gives two ways to audit an algorithm rather than one
release, and each is blind where the other looks:

- **random worlds** (:mod:`kerckhoffs.audits.random_worlds`; Definition 5): exact posteriors
  of an adversary who re-runs the algorithm on every candidate table, on small random tables.
  Its candidates are arrangements of the *published* SA values, so for an algorithm that
  perturbs SA values (MASK and its variants, paper 001) re-running the algorithm on them
  changes nothing: it cannot see a leak through the perturbation itself (MASK's, which the
  negative-association attack exploits), only leaks through the grouping.
- **information flow** (:mod:`kerckhoffs.audits.information_flow`; Theorem 5.3 and the
  counts-read extension of ours, ``docs/theory/asap.md#audits``): every SA statistic the algorithm
  reads must be one the release shows. It sees MASK's leak (the counts it reads are the ones it
  distorts), but only for algorithms that log their reads (``sa_log``), and it cannot see what a
  known seed gives away (it checks what is read, not whether the random choice stays secret).

:func:`audit_algorithm` runs both on the same random tables (``trials`` tables of ``rows``
rows, drawn by :func:`~kerckhoffs.audits.random_tables.random_table` from ``seed``; trial
``i``'s release drawn with seed ``i``), so their verdicts compare table by table, and runs the
information-flow audit once more on one larger generated table (``flow_rows`` rows, default
2,000, the same generator with SA column repaired to l-eligibility). Why both: tiny tables are
what random worlds can enumerate, but they rarely reach the code paths where the leaks live
(deep Mondrian recursion, MASK distorting a group towards many look-alikes: MASK fails the
flow audit on about a quarter of 8-row tables and on every 2,000-row one); the flow audit
costs milliseconds at that size. The :class:`AlgorithmAudit` report says, per audit, how many
tables violate, or that the audit does not apply or cannot see a class of leak, never a bare
"0 violate" where the audit could not have seen one. ``known_seed`` audits an adversary who
knows the algorithm's seed (DESIGN.md section 5: a known seed undoes the randomized
algorithms' safety).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kerckhoffs.algorithms.registry import AlgorithmInfo, get
from kerckhoffs.audits.information_flow import FlowAudit, audit
from kerckhoffs.audits.random_tables import (
    MAX_FUZZ_ROWS,
    MAX_SA_VALUES,
    Trial,
    fuzz,
    random_table,
)
from kerckhoffs.audits.random_worlds import diversity_bound
from kerckhoffs.data.table import Table
from kerckhoffs.errors import ArgumentError, ParameterError
from kerckhoffs.models import parse_model
from kerckhoffs.models.base import PrivacyModel
from kerckhoffs.randomness import check_seed

__all__ = [
    "DEFAULT_FLOW_ROWS",
    "AlgorithmAudit",
    "FlowPart",
    "WorldsPart",
    "audit_algorithm",
    "default_models",
]

DEFAULT_FLOW_ROWS = 2_000
"""Rows of the larger generated table of the information-flow audit."""

FLOW_QI_SIZE = 64
"""Values per QI of the larger table (4,096 cells: deep partitions, few exact duplicates)."""


FLOW = "information flow"
WORLDS = "random worlds"


def default_models(info: AlgorithmInfo) -> list[PrivacyModel]:
    """The models audited when none are given: l=2 where the algorithm enforces l-diversity,
    else k=3 and m=2 (MASK's setting) where it enforces m-confidentiality, else k=3."""
    if "LDiversity" in info.models:
        specs = ["l=2"]
    elif "MConfidentiality" in info.models:
        specs = ["k=3", "m=2"]
    else:
        specs = ["k=3"]
    return [parse_model(s) for s in specs]


@dataclass
class WorldsPart:
    """The random-worlds audit of :func:`audit_algorithm`: one :class:`Trial` per table.

    ``blind``: the class of leaks the audit cannot see for this algorithm (None: none known),
    ``blind_why``: why; ``known_seed``: the adversary knew the algorithm's seed.
    """

    trials: list[Trial]
    blind: str | None = None
    blind_why: str = ""
    known_seed: int | None = None

    @property
    def audited(self) -> list[Trial]:
        """The trials decided (not refused by the algorithm, not too large to enumerate)."""
        return [t for t in self.trials if t.audit is not None]

    @property
    def violating(self) -> list[Trial]:
        """The audited trials whose release violates (not ASAP, or not l-diverse when smart)."""
        return [t for t in self.audited if t.audit is not None and t.audit.violates]

    @property
    def refused(self) -> int:
        """Tables the algorithm refused (e.g. no m-confidential release of them)."""
        return sum(1 for t in self.trials if t.outcome == "refused")

    @property
    def too_large(self) -> int:
        """Tables with too many worlds or random branches to enumerate."""
        return sum(1 for t in self.trials if t.outcome == "too large")

    def smallest_violation(self) -> Trial | None:
        """The violating trial with the fewest rows (then the fewest naive worlds)."""
        bad = self.violating
        if not bad:
            return None
        return min(bad, key=lambda t: (t.table.n, t.audit.naive_count if t.audit else 0))

    def line(self) -> str:
        """One line: how many tables violate, or why no clean count can be claimed."""
        bad, audited = self.violating, self.audited
        not_asap = sum(1 for t in bad if t.audit is not None and not t.audit.asap)
        not_div = sum(1 for t in bad if t.audit is not None and not t.audit.smart_l_diverse)
        skipped = (
            f"{self.refused} refused by the algorithm, {self.too_large} too large to enumerate"
        )
        why = f"ASAP fails on {not_asap}, l-diversity in the smart view on {not_div}"
        seed = (
            f", the adversary knowing seed {self.known_seed}" if self.known_seed is not None else ""
        )
        if not audited:
            return f"random worlds audited no table ({skipped}): no verdict"
        if self.blind is not None:
            return (
                f"random worlds cannot see {self.blind} ({self.blind_why}); through the "
                "grouping alone "
                f"{len(bad)} of {len(audited)} audited tables violate it{seed} ({why}); {skipped}"
            )
        return (
            f"{len(bad)} of {len(audited)} audited tables violate random worlds{seed} "
            f"(paper 000 Definition 5: {why}); {skipped}"
        )


@dataclass
class FlowPart:
    """The information-flow audit of :func:`audit_algorithm`.

    ``tables[i]``: the audit of random table ``i`` (None: refused, ``refusals[i]`` says why);
    ``large``: the audit of the larger generated table (None: not run or refused,
    ``large_refused`` says why); ``reason``: why the audit does not apply (None: it does);
    ``blind``: what it cannot see here (None: nothing known), ``blind_why``: why.
    """

    reason: str | None = None
    tables: list[FlowAudit | None] = field(default_factory=list)
    refusals: list[str | None] = field(default_factory=list)
    large: FlowAudit | None = None
    large_rows: int = 0
    large_refused: str | None = None
    blind: str | None = None
    blind_why: str = ""

    @property
    def applies(self) -> bool:
        """The algorithm logs its SA reads, so the audit can run."""
        return self.reason is None

    @property
    def audited(self) -> list[FlowAudit]:
        """The random tables audited (not refused by the algorithm)."""
        return [a for a in self.tables if a is not None]

    @property
    def failing(self) -> list[FlowAudit]:
        """The audited random tables on which the algorithm reads what the release hides."""
        return [a for a in self.audited if not a.passed]

    @property
    def violates(self) -> bool:
        """Some random table, or the larger one, fails the audit."""
        return bool(self.failing) or (self.large is not None and not self.large.passed)

    @property
    def ran(self) -> bool:
        """The audit decided at least one table."""
        return bool(self.audited) or self.large is not None

    def line(self) -> str:
        """One line: how many tables fail, and the larger table's verdict."""
        if self.reason is not None:
            return f"information flow not run: {self.reason}"
        refused = sum(1 for a in self.tables if a is None)
        head = (
            f"{len(self.failing)} of {len(self.audited)} audited tables violate information "
            "flow (Theorem 5.3: an SA statistic read that the release does not show)"
            if self.audited
            else "information flow audited no random table"
        )
        if refused:
            head += f", {refused} refused by the algorithm"
        if self.large is not None:
            verdict = (
                "passes"
                if self.large.passed
                else f"violates it ({self.large.offending_sets:,} row sets in "
                f"{_plural(len(self.large.violations), 'batch', 'batches')} of reads)"
            )
            head += f"; a generated {self.large_rows:,}-row table {verdict}"
        elif self.large_refused is not None:
            head += f"; a generated {self.large_rows:,}-row table was refused: {self.large_refused}"
        if self.blind is not None:
            head += f"; it cannot see {self.blind} ({self.blind_why})"
        return head


@dataclass
class AlgorithmAudit:
    """What :func:`audit_algorithm` found: one part per audit, and the tables' description."""

    algorithm: str
    models: list[PrivacyModel]
    worlds: WorldsPart
    flow: FlowPart
    rows: int
    seed: int
    known_seed: int | None = None

    @property
    def violations(self) -> list[str]:
        """The audits that found a violation (empty: none did)."""
        found = []
        if self.worlds.violating:
            found.append(WORLDS)
        if self.flow.violates:
            found.append(FLOW)
        return found

    @property
    def violates(self) -> bool:
        """Some audit found a violation (the command exits 1)."""
        return bool(self.violations)

    @property
    def prefix(self) -> str:
        """``name (models)``, the start of every audit line."""
        return f"{self.algorithm} ({', '.join(m.parameter for m in self.models)})"

    def lines(self) -> list[str]:
        """One line per audit, each starting with :attr:`prefix`."""
        return [
            f"{self.prefix}: {self.worlds.line()}",
            f"{self.prefix}: {self.flow.line()}",
        ]

    def verdict(self) -> str:
        """The last line: which audits found violations, or what the absence of one rests on
        and what no audit could see."""
        if self.violates:
            return f"verdict: {self.algorithm} violates ({' and '.join(self.violations)})"
        evidence = []
        if self.worlds.audited:
            evidence.append(f"{WORLDS} ({_plural(len(self.worlds.audited), 'table', 'tables')})")
        if self.flow.ran:
            extra = f" and a {self.flow.large_rows:,}-row table" if self.flow.large else ""
            n = _plural(len(self.flow.audited), "table", "tables")
            evidence.append(f"{FLOW} ({n}{extra})")
        caveats = [
            f"{audit_name} cannot see {blind}"
            for audit_name, blind in ((WORLDS, self.worlds.blind), (FLOW, self.flow.blind))
            if blind is not None
        ]
        if not self.flow.applies:
            caveats.append(f"{FLOW} not run")
        text = f"verdict: no violation found by {' or '.join(evidence)}, on these tables"
        return text + "".join(f"; {c}" for c in caveats)

    def details(self) -> list[str]:
        """Where the violations are: the smallest table violating random worlds (its rows,
        groups, published values and posteriors) and the reads that fail information flow."""
        out: list[str] = []
        worst = self.worlds.smallest_violation()
        if worst is not None and worst.audit is not None:
            rel = worst.audit.release
            frame = worst.table.to_frame()
            frame.insert(0, "row", np.arange(1, worst.table.n + 1))
            frame["group"] = rel.partition.group
            if rel.perturbed.any():
                frame["published"] = worst.table.decode_sa(np.asarray(rel.sa_published))
            out.append(f"smallest violating table (random worlds, {worst.table.n} rows):")
            out.append(frame.to_string(index=False))
            labels = [str(v) for v in worst.table.sa_column.labels.tolist()]
            out.append(worst.audit.describe(labels))
        flow = (
            self.flow.large if self.flow.large is not None and not self.flow.large.passed else None
        )
        if flow is not None:
            out.append(f"information flow on the generated {self.flow.large_rows:,}-row table:")
            out.append(flow.describe())
        elif self.flow.failing:
            first = self.flow.failing[0]
            out.append(
                f"information flow on the first failing table ({first.release.table.n} rows):"
            )
            out.append(first.describe())
        return out

    def describe(self) -> str:
        """The audit lines, the details of any violation, and the verdict."""
        return "\n".join([*self.lines(), *self.details(), self.verdict()])


def _plural(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def _check_count(name: str, value: object, lo: int, hi: int | None = None, why: str = "") -> int:
    """``value`` as an int in ``lo..hi`` (``hi`` None: no upper bound), or an
    :class:`ArgumentError` naming ``name`` and the value."""
    span = f"{lo}..{hi}" if hi is not None else f"at least {lo}"
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ArgumentError(name, value, f"use a whole number, {span}{why}")
    if value < lo or (hi is not None and value > hi):
        raise ArgumentError(name, value, f"use {span}{why}")
    return int(value)


def audit_algorithm(
    algorithm: str,
    models: Sequence[PrivacyModel] | None = None,
    *,
    rows: int = 8,
    trials: int = 200,
    sa_values: int = 4,
    seed: int = 0,
    known_seed: int | None = None,
    options: dict[str, Any] | None = None,
    flow_rows: int = DEFAULT_FLOW_ROWS,
    progress: Callable[[int], None] | None = None,
    workers: int = 1,
) -> AlgorithmAudit:
    """Audit the registered ``algorithm`` with every audit that applies (module docstring).

    ``models`` default to :func:`default_models`. ``trials`` random tables of ``rows`` rows
    over ``sa_values`` SA values (``A..Z``) are drawn from ``seed``; random worlds audits each
    (``known_seed``: as an adversary who knows the algorithm's seed), information flow audits
    each and one more generated table of ``flow_rows`` rows (0: none). ``options`` go to every
    run (:meth:`AlgorithmInfo.check_options`, with ``generated=True``). ``progress(i)`` is
    called after each random-worlds trial.
    Every bad argument is an :class:`ArgumentError` (a one-line
    :class:`~kerckhoffs.errors.ParameterError` naming the parameter and its value), raised
    before any work; a run where the algorithm refused every table (nothing was audited) is a
    ParameterError too.

    >>> report = audit_algorithm("mondrian", rows=6, trials=20, seed=1, flow_rows=200)
    >>> report.violations
    ['random worlds', 'information flow']
    """
    info = get(algorithm)
    models = list(models) if models is not None else default_models(info)
    opts = dict(options or {})
    info.check_options(opts, generated=True)
    rows = _check_count(
        "rows", rows, 1, MAX_FUZZ_ROWS, " (random worlds enumerates every candidate table)"
    )
    trials = _check_count("trials", trials, 1)
    sa_values = _check_count(
        "sa_values", sa_values, 1, MAX_SA_VALUES, " (the SA values are the letters A..Z)"
    )
    flow_rows = _check_count("flow_rows", flow_rows, 0, why=" (0: no larger table)")
    seed = check_seed(seed)
    if known_seed is not None:
        known_seed = check_seed(known_seed, "known_seed")
    l = int(diversity_bound(models) or 1)  # noqa: E741
    for what, n in (("rows", rows), ("flow_rows", flow_rows)):
        most = math.ceil(n / sa_values)
        if n and n < l * most:
            table = f"{n}-row tables" if what == "rows" else f"the {n}-row information-flow table"
            raise ArgumentError(
                "sa_values",
                sa_values,
                f"too few for {table} with l = {l} (one value occurs at least {most} times, "
                f"more than {n}/{l})",
            )

    trial_list = fuzz(
        info.name,
        models,
        trials=trials,
        rows=rows,
        n_sa=sa_values,
        seed=seed,
        known_seed=known_seed,
        options=opts,
        progress=progress,
        workers=workers,
    )
    flow = _flow_part(info, models, trial_list, opts, seed, known_seed, flow_rows, sa_values, l)
    # the registry's property, or any algorithm whose audited releases changed an SA value
    perturbs = info.perturbs_sa or any(
        t.audit is not None and t.audit.release.perturbed.any() for t in trial_list
    )
    perturbs = perturbs or any(a.release.perturbed.any() for a in flow.audited)
    perturbs = perturbs or (flow.large is not None and bool(flow.large.release.perturbed.any()))
    worlds = WorldsPart(trial_list, known_seed=known_seed)
    if perturbs:
        worlds.blind = f"leaks through {info.name}'s SA perturbation"
        worlds.blind_why = (
            f"its worlds are the published values, which re-running {info.name} leaves as they are"
        )
    report = AlgorithmAudit(info.name, models, worlds, flow, rows, seed, known_seed)
    if not worlds.audited and not flow.ran:
        first = next((t.skipped for t in trial_list if t.skipped), None) or flow.large_refused
        raise ParameterError(f"{info.name}: none of the {trials} tables could be audited ({first})")
    return report


def _flow_part(
    info: AlgorithmInfo,
    models: list[PrivacyModel],
    trials: list[Trial],
    options: dict[str, Any],
    seed: int,
    known_seed: int | None,
    flow_rows: int,
    sa_values: int,
    l: int,  # noqa: E741
) -> FlowPart:
    """The information-flow audit of every trial table and of one larger generated table."""
    if "sa_log" not in inspect.signature(info.run).parameters:
        return FlowPart(f"{info.name} does not log the SA statistics it reads (no sa_log option)")
    part = FlowPart()
    if known_seed is not None and info.randomized:
        part.blind = f"what the known seed {known_seed} gives away"
        part.blind_why = "it checks what is read, not whether the random choices stay secret"
    for t in trials:
        res, why = _flow(info.name, t.table, models, t.seed, options)
        part.tables.append(res)
        part.refusals.append(why)
    if flow_rows:
        rng = np.random.default_rng([seed, 1])  # a stream apart from the small tables'
        table = random_table(
            rng, flow_rows, n_sa=sa_values, l=l, qi_size=FLOW_QI_SIZE, redraw=False
        )
        release_seed = known_seed if known_seed is not None else 0
        part.large, part.large_refused = _flow(info.name, table, models, release_seed, options)
        part.large_rows = flow_rows
    return part


def _flow(
    name: str, table: Table, models: list[PrivacyModel], seed: int, options: dict[str, Any]
) -> tuple[FlowAudit | None, str | None]:
    """One information-flow audit, or why the algorithm refused the table."""
    try:
        return audit(name, table, models, seed=seed, **options), None
    except ParameterError as exc:
        return None, str(exc)
