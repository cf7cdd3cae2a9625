"""A release report a data steward can hand on: one self-contained HTML page with what was
published, group sizes and diversity, re-identification risk, utility, every attack that
applies with its verdict, differential privacy's noise and budget, and the release's seal
(``docs/guide/report.md``). Every number is computed by the library's own functions
(:mod:`kerckhoffs.reporting.collect`); the page shows each with the key it was computed under.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

from kerckhoffs.data.schema import Schema
from kerckhoffs.release import Release, Scheme
from kerckhoffs.reporting.document import Report
from kerckhoffs.reporting.model import Figure, Section, Verdict


def build_report(
    release: Release | str | Path,
    *,
    knowledge: pd.DataFrame | str | Path | None = None,
    others: Sequence[Release | str | Path] = (),
    threshold: float = 0.2,
    schema: Schema | str | Path | None = None,
    progress: Callable[[str, float], None] | None = None,
) -> Report:
    """The report of ``release`` (a release or a release directory, read back and verified).

    ``knowledge``: the adversary's knowledge (a population of QI values, or a knowledge file):
    the journalist risk and the attacks read it. ``others``: other releases of the same people
    (the composition attacks read them). ``schema``: the schema whose hierarchies say what each
    published cell covers (needed for a generalized release read from files when a population
    is given). ``threshold``: a record is at risk above it. ``progress(step, fraction)`` is
    called before each part (for a progress bar).
    """
    from kerckhoffs.pipelines.audit import knowledge_of
    from kerckhoffs.reporting import collect

    def step(what: str, done: float) -> None:
        if progress is not None:
            progress(what, done)

    if isinstance(schema, str | Path):
        schema = Schema.from_toml(schema)  # parsed once for every part
    verified = False
    if not isinstance(release, Release):
        from kerckhoffs.pipelines.check import read_release

        step("reading the release", 0.0)
        release = read_release(release, schema)  # its files verified against release.json
        verified = True
    meta = release.published_metadata
    know = knowledge_of(knowledge, schema, others)  # read once: the risks and the attacks
    population = know.population
    sections = [collect.published_section(release, meta)]
    if release.scheme in (Scheme.DP, Scheme.SYNTHETIC):
        from kerckhoffs.reporting.dp import dp_section

        step("noise and intervals", 0.3)
        sections.append(dp_section(release))
    else:
        step("groups and diversity", 0.2)
        sections.append(collect.groups_section(release))
        step("re-identification risk", 0.35)
        sections.append(collect.risk_section(release, population, threshold, schema))
        step("utility", 0.5)
        sections.append(collect.utility_section(release, population, schema))
    step("attacks", 0.6)
    sections.append(collect.attacks_section(release, know))
    sections.append(collect.seal_section(meta, verified))
    step("done", 1.0)
    title = f"Release report: {release.provenance.algorithm} ({release.scheme.value})"
    return Report(title, tuple(sections))


def report(
    release: Release | str | Path,
    *,
    knowledge: pd.DataFrame | str | Path | None = None,
    others: Sequence[Release | str | Path] = (),
    out: str | Path | None = None,
    threshold: float = 0.2,
    schema: Schema | str | Path | None = None,
    overwrite: bool = False,
) -> Report:
    """:func:`build_report`, written to ``out`` when given (``kh.report``)."""
    rep = build_report(
        release, knowledge=knowledge, others=others, threshold=threshold, schema=schema
    )
    if out is not None:
        rep.write(out, overwrite=overwrite)
    return rep


__all__ = ["Figure", "Report", "Section", "Verdict", "build_report", "report"]
