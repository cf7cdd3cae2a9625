"""The numbers of a release report, each computed by the library function that owns it:
:func:`kerckhoffs.check` (the models and what each achieved), :func:`kerckhoffs.measure`
(k, l, t, ... and the re-identification risks of
:mod:`kerckhoffs.metrics.reidentification`), :mod:`kerckhoffs.metrics.ncp` (information loss
per QI), :func:`kerckhoffs.audit` (every attack that applies, its verdict line and the
adversary's posteriors) and, for differentially private releases, the release's own noise
record and intervals. Nothing private is read into the report: no row of the private table,
no provider id, no seed, no ledger, no true count.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from kerckhoffs.attacks.knowledge import Knowledge
from kerckhoffs.data.schema import Schema
from kerckhoffs.errors import KerckhoffsError
from kerckhoffs.pipelines.audit import audit
from kerckhoffs.pipelines.check import check, measure
from kerckhoffs.release import Release, Scheme
from kerckhoffs.reporting import plots
from kerckhoffs.reporting.model import Figure, Section, Verdict

Progress = Callable[[str, float], None]


def published_section(release: Release, meta: dict[str, Any] | None) -> Section:
    """What was published, and every model the release states with what it achieved."""
    t = release.table
    prov = release.provenance
    figs = [
        Figure("release.scheme", "scheme", release.scheme.value),
        Figure("release.algorithm", "algorithm", prov.algorithm),
        Figure("release.quasi", "quasi-identifiers", ", ".join(t.qi_names)),
        Figure("release.sensitive", "sensitive attribute", t.sa_name),
    ]
    if release.scheme not in (Scheme.DP, Scheme.SYNTHETIC):
        figs += [
            Figure("release.rows", "rows published", int(t.n)),
            Figure("release.groups", "groups", int(release.partition.n_groups)),
        ]
    if t.schema.sensitive_values:
        figs.append(
            Figure(
                "release.sensitive_values",
                "models computed on the sensitive values",
                ", ".join(sorted(map(str, t.schema.sensitive_values))),
            )
        )
    verdicts, notes = [], []
    where = "the files" if meta is not None else "the release"
    from kerckhoffs.models import MPrivacy

    try:
        models = release.chosen_models(None)
        # m-privacy reads each row's provider: a release made in this session holds them
        # (checked here, and no provider is named); one read back does not (recorded check)
        held = t.provider is not None
        own = [m for m in models if held or not isinstance(m, MPrivacy)]
        report = check(release, models=own) if own or not models else None
        for r in report.results if report is not None else []:
            text = ("ok" if r.satisfied else "violated") + f": achieved {r.achieved_text}"
            text += f" ({r.detail})" if r.detail else ""
            label = f"{r.model} {r.parameter}" + (f" {r.scope}" if r.scope else "")
            verdicts.append(Verdict(f"model.{r.model}", label, text))
        if len(own) < len(models):
            verdicts += _recorded_mprivacy(meta)
    except KerckhoffsError as exc:
        notes.append(f"the release's models could not be checked here: {exc}")
    return Section(
        "What was published",
        "The release's scheme, the algorithm that made it, and each privacy model it states, "
        f"checked again on {where} (ok: every group meets it).",
        tuple(figs),
        tuple(verdicts),
        notes=tuple(notes),
    )


def _recorded_mprivacy(meta: dict[str, Any] | None) -> list[Verdict]:
    """m-privacy (paper 003) as the publisher's fail-closed check recorded it: which
    provider each row came from is never published, so no one can check it again from the
    release alone (a provider id would tell a coalition whose records are whose)."""
    checks = [c for c in (meta or {}).get("checks", []) if c.get("model") == "m-privacy"]
    if not checks:
        return [
            Verdict(
                "model.m-privacy",
                "m-privacy",
                "not checked: the providers of the "
                "rows are not published and release.json records no check",
            )
        ]
    return [
        Verdict(
            "model.m-privacy",
            f"m-privacy {c.get('parameter', '')}",
            ("ok" if c.get("satisfied") else "violated") + " when published: recorded by "
            "the publisher's check in release.json (the provider of each row is not "
            "published, so it cannot be checked again from the release alone)",
        )
        for c in checks
    ]


def groups_section(release: Release) -> Section:
    """Group sizes and SA diversity per group, with the achieved measures."""
    m = measure(release)
    sizes = release.partition.sizes
    hist = release.histogram()
    distinct = (np.asarray(hist.counts) > 0).sum(axis=1)
    top_share = np.asarray(hist.counts).max(axis=1) / np.maximum(sizes, 1)
    size_labels, size_counts = plots.size_bins(sizes)
    figs = [
        Figure("measure.k", "smallest group (k)", int(m.k)),
        Figure("measure.l", "frequency l-diversity (l)", float(m.l)),
        Figure("measure.distinct_l", "fewest distinct sensitive values", int(m.distinct_l)),
        Figure("measure.entropy_l", "entropy l-diversity", float(m.entropy_l)),
        Figure("measure.t", "t-closeness (largest EMD)", float(m.t)),
        Figure(
            "measure.alpha",
            "largest sensitive share in a group (alpha)",
            float(m.alpha),
            share=True,
        ),
    ]
    pics = (
        plots.bars(
            size_labels,
            size_counts,
            title="Group sizes",
            xlabel="rows in the group (bars after the first ten are ranges)",
            ylabel="groups",
        ),
        plots.histogram(
            top_share,
            bins=np.linspace(0, 1, 21),
            weights=sizes.astype(float),
            title="Largest share of one sensitive value in a record's group",
            xlabel="share (1: everyone in the group has the same value)",
            ylabel="records",
            color="#b5651d",
        ),
        plots.bars(
            [str(v) for v in np.unique(distinct)],
            [int((distinct == v).sum()) for v in np.unique(distinct)],
            title="Distinct sensitive values per group",
            xlabel="distinct values",
            ylabel="groups",
            color="#6b8e23",
        ),
    )
    intro = (
        "How many records share each published combination of quasi-identifiers, and how "
        "varied their sensitive values are (a group whose records all share one value "
        "discloses it)."
    )
    if release.table.schema.sensitive_values:  # said before the numbers it explains
        intro += (
            " These measures count every value of the sensitive attribute; the models above "
            "count only the sensitive values the schema names."
        )
    return Section("Groups and diversity", intro, tuple(figs), plots=pics)


def risk_section(
    release: Release,
    population: pd.DataFrame | None,
    threshold: float,
    schema: Schema | None = None,
) -> Section:
    """Prosecutor, journalist (with a population) and marketer risk (what ``kh.measure``
    reports as ``risk``)."""
    from kerckhoffs.metrics.reidentification import group_risks, reidentification_risk

    r = reidentification_risk(release, population, threshold=threshold, schema=schema)
    figs = [
        Figure("risk.threshold", "a record is at risk above", r.threshold),
        Figure("risk.prosecutor_highest", "prosecutor: highest risk", r.prosecutor_highest),
        Figure("risk.prosecutor_average", "prosecutor: average risk", r.prosecutor_average),
        Figure(
            "risk.prosecutor_at_risk",
            "prosecutor: records at risk",
            r.prosecutor_at_risk,
            share=True,
        ),
        Figure("risk.sample_uniques", "sample uniques", r.sample_uniques, share=True),
        Figure("risk.marketer", "marketer: expected share re-identified", r.marketer, share=True),
    ]
    notes = []
    if r.journalist_highest is not None:
        figs += [
            Figure("risk.population_rows", "population rows", int(r.population_rows or 0)),
            Figure("risk.journalist_highest", "journalist: highest risk", r.journalist_highest),
            Figure(
                "risk.journalist_average",
                "journalist: average risk",
                float(r.journalist_average or 0.0),
            ),
            Figure(
                "risk.journalist_at_risk",
                "journalist: records at risk",
                float(r.journalist_at_risk or 0.0),
                share=True,
            ),
            Figure(
                "risk.population_uniques",
                "population uniques",
                float(r.population_uniques or 0.0),
                share=True,
            ),
        ]
    else:
        notes.append("journalist risk needs a population (--knowledge): not computed")
    sizes = release.partition.sizes
    pic = plots.histogram(
        group_risks(sizes),
        bins=np.linspace(0, 1, 21),
        weights=sizes.astype(float),
        title="Prosecutor risk per record",
        xlabel="1 / size of the record's group",
        ylabel="records",
        color="#a4161a",
    )
    return Section(
        "Re-identification risk",
        "The chance that an adversary who links a known person to the release by the "
        "quasi-identifiers picks the right record: prosecutor (knows the person is in the "
        "release), journalist (links from a larger population), marketer (tries everyone).",
        tuple(figs),
        plots=(pic,),
        notes=tuple(notes),
    )


def utility_section(
    release: Release, population: pd.DataFrame | None, schema: Schema | None = None
) -> Section:
    """Information loss per QI (NCP) and, for a release made in this session, the query error
    of paper 000 section 8.1.3 (it needs the original table). A release read back from files
    holds only its published cells, so its NCP is measured on the population its cells cover
    (:func:`~kerckhoffs.metrics.ncp.covered_ncp_by_qi`), and it has no query error here."""
    from kerckhoffs.metrics.ncp import covered_ncp_by_qi, ncp_by_qi

    read_back = release.published_metadata is not None
    notes = []
    if read_back and population is None:
        return Section(
            "Utility",
            notes=(
                "information loss of a release read back from files is measured on the "
                "population its cells cover: give --knowledge (a population)",
            ),
        )
    by_qi = covered_ncp_by_qi(release, population, schema) if read_back else ncp_by_qi(release)
    total = float(np.mean(list(by_qi.values())))
    on = " on the population" if read_back else ""
    figs = [Figure("utility.ncp", f"information loss{on} (NCP), all QIs", total, share=True)]
    figs += [
        Figure(f"utility.ncp.{q}", f"information loss{on} of {q}", v, share=True)
        for q, v in by_qi.items()
    ]
    if read_back:
        intro = (
            "How much of each quasi-identifier a published cell spans on average, measured on "
            "the population given (a cell read from files is text): the population values it "
            "covers over all the population's values (0: exact values, 100 %: suppressed). "
            "Measured in Python on the release as made, NCP counts a categorical cell's "
            "hierarchy leaves instead, present in the data or not, so it can be higher."
        )
        notes.append(
            "query error needs the original table, which a release read back from files "
            "does not hold: report on the release in Python (kh.report(release)) to see it"
        )
    else:
        intro = (
            "How much of each quasi-identifier's domain a published cell spans on average "
            "(NCP, Xu et al. 2006: a numeric cell's range over the column's, a categorical "
            "cell's hierarchy leaves over all leaves; 0: exact values, 100 %: suppressed), and "
            "how far counting queries on the release are from the same queries on the "
            "original table (paper 000 section 8.1.3)."
        )
        figs += _query_error(release)
    pic = plots.bars(
        list(by_qi),
        [100 * v for v in by_qi.values()],
        title="Information loss per quasi-identifier",
        xlabel="",
        ylabel="NCP, % of the domain",
        color="#555f6d",
    )
    return Section("Utility", intro, tuple(figs), plots=(pic,), notes=tuple(notes))


def _query_error(release: Release) -> list[Figure]:
    """Median and mean relative error of the library's default workload (paper 000's 10,000
    count queries on 3 QIs, or all when fewer, and the SA at selectivity 0.05, drawn from a
    fixed public seed:
    :func:`kerckhoffs.metrics.query_error.query_error`)."""
    from kerckhoffs.metrics.query_error import query_error

    qd = min(3, release.table.d)  # paper 000's 3 QIs a query, or every QI when fewer
    err = query_error(release, qd=qd)
    what = f"{err.errors.size:,} count queries on {qd} QIs"
    return [
        Figure(
            "utility.query_error_median", f"query error, median of {what}", err.median, share=True
        ),
        Figure("utility.query_error_mean", "query error, mean", err.mean, share=True),
    ]


def attacks_section(release: Release, knowledge: Knowledge) -> Section:
    """Every attack that applies, its verdict, and the adversary's posteriors (``knowledge``
    with the schema and the other releases already folded in)."""
    done = audit(release, knowledge=knowledge)
    verdicts = [Verdict("audit", "audit verdict", done.verdict)]
    verdicts += [
        Verdict(f"attack.{r.attack}", r.attack, r.verdict(claim=False)) for r in done.results
    ]
    verdicts += [Verdict(f"attack.{a}", a, f"could not run: {why}") for a, why in done.failed]
    figs, pics = [], []
    for r in done.results:
        figs.append(
            Figure(
                f"attack.{r.attack}.compromised", f"{r.attack}: rows disclosed", int(r.compromised)
            )
        )
        figs.append(
            Figure(
                f"attack.{r.attack}.max_posterior",
                f"{r.attack}: largest posterior",
                float(r.max_posterior),
            )
        )
        post = r.tuples.groupby("row")["posterior"].max().to_numpy(dtype=float)
        if post.size:
            pics.append(
                plots.histogram(
                    post,
                    bins=np.linspace(0, 1, 21),
                    title=f"{r.attack}: adversary's posteriors",
                    xlabel="largest probability the adversary gives one sensitive value",
                    ylabel="targets",
                    color="#6a3d9a",
                )
            )
    notes = [f"{a}: does not apply ({why})" for a, why in done.skipped]
    return Section(
        "Attacks",
        "Every attack that applies to this release, run by kerckhoffs with the knowledge "
        "given, as an adversary who knows the algorithm would.",
        tuple(figs),
        tuple(verdicts),
        tuple(pics),
        tuple(notes),
    )


def seal_section(meta: dict[str, Any] | None, verified: bool) -> Section:
    """The digests release.json states, and whether this report verified the files against
    them (it did when it read the release directory itself)."""
    if meta is None:
        return Section(
            "Seal",
            notes=("the release was made in this session and not read from files: no seal",),
        )
    rows: list[tuple[str | Figure, ...]] = [("file", "SHA-256 (release.json)")]
    rows += [(name, str(d)) for name, d in sorted(meta.get("files", {}).items())]
    rows.append(("release.json contents", str(meta.get("integrity", ""))))
    if verified:
        said = "every file was verified against them when this report read the release."
    else:
        said = (
            "this report was given the release already read, so it did not verify the files "
            "itself (kerckhoffs check DIR does)."
        )
    return Section(
        "Seal",
        f"The release's files and their digests as release.json states them; {said}",
        table=tuple(rows),
    )
