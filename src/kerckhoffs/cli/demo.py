"""The ``demo`` command: what kerckhoffs does, on generated hospital data (no download).

Nine sections: the raw table checked against k = 5 and l = 3; full-domain generalization at
fixed levels, checked before writing; the release read back from its files and checked again;
the classic anonymizers side by side; the information-flow audit of paper 000 (Theorem 5.3) on
an original algorithm and its ++ variant, with what the look-ahead made before stratified
pick-up and what safety costs on this data; the Hilb attack (paper 000 Algorithm 7); and two
hospitals' joint release attacked by one of them (paper 003), then made m-private; and paper
002's running example, where the naive publisher's choice discloses more than its groups;
and differentially private releases of two overlapping populations that the intersection
attack (paper 004) does not break, where two k-anonymous releases of them are broken.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kerckhoffs.cli.output import fit_words, out, print_results, styled
from kerckhoffs.cli.output import table as rich_table
from kerckhoffs.data.output import output_directory
from kerckhoffs.data.schema import Column, Role, Schema
from kerckhoffs.errors import ParameterError, PrivacyCheckFailed

if TYPE_CHECKING:  # the rest is imported where used: `kerckhoffs --help` loads no pandas
    import pandas as pd
    from rich.text import Text

    from kerckhoffs.data.table import Table
    from kerckhoffs.models import PrivacyModel
    from kerckhoffs.release import Release


def demo(
    rows: Annotated[int, typer.Option(help="Rows of generated hospital data.")] = 2000,
    seed: Annotated[int, typer.Option(help="Seed of the generator.")] = 0,
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="Where to write the demo release (default: temp).")
    ] = None,
) -> None:
    """Show what kerckhoffs does, on generated hospital data (no download needed)."""
    from kerckhoffs.data.table import Table
    from kerckhoffs.datasets import generate_hospital, hospital_schema
    from kerckhoffs.models import parse_model
    from kerckhoffs.release import Partition, Provenance, Release

    df = generate_hospital(rows, seed)
    schema = hospital_schema()
    table = Table.encode(df, schema)
    out.rule(styled(("kerckhoffs demo", "bold"), ": a generated hospital table"))
    out.print(
        f"{table.n:,} patients; identifiers dropped: patient_id; quasi-identifiers: "
        f"{', '.join(f'{c.name} ({c.kind.value}, {c.size} values)' for c in table.qi_columns)}; "
        f"sensitive: disease ({table.n_sa} values)"
    )
    out.print(df.head(5).to_string(index=False))
    models: list[PrivacyModel] = [parse_model("k=5"), parse_model("l=3")]

    out.rule("1. the table as it stands")
    raw = Release(table, Partition.by_qi(table), provenance=Provenance("none"))
    print_results(raw.check(models))

    levels_tried = [
        {"age": 1, "zip": 1},
        {"age": 2, "zip": 2, "nationality": 1},
        {"age": 3, "zip": 3, "nationality": 2},
    ]
    out.rule("2. full-domain generalization at fixed levels, checked before writing")
    with contextlib.ExitStack() as stack:
        if out_dir is None:  # a temporary folder, removed when the demo ends
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="kerckhoffs-demo-"))
            target = Path(tmp) / "release"
        else:
            target = out_dir
            stack.enter_context(output_directory(target, kind="release"))
        _demo_release(table, models, levels_tried, target, keep=out_dir is not None)
    _demo_anonymizers(table, seed)
    _demo_insiders(df, schema, seed)
    _demo_disclosure()
    _demo_dp(table, seed)


def _demo_release(
    table: Table,
    models: list[PrivacyModel],
    levels_tried: list[dict[str, int]],
    target: Path,
    keep: bool,
) -> None:
    """Sections 2-3 of the demo: the first fixed-level cut that passes, written and read
    back."""
    from kerckhoffs.release import Partition, Provenance, Release

    written = None
    for levels in levels_tried:
        release = Release(
            table,
            Partition.by_levels(table, levels),
            provenance=Provenance("fixed-levels", {"levels": levels}),
        )
        label = ", ".join(f"{k} level {v}" for k, v in levels.items())
        try:
            release.write(target, models, overwrite=True)
        except PrivacyCheckFailed as exc:
            out.print(styled((label, "yellow"), f": {release.partition.n_groups} groups — {exc}"))
            continue
        out.print(
            styled((label, "green"), f": {release.partition.n_groups} groups — passes; written")
        )
        written = release
        break
    if written is None:
        out.print("no level combination passed; nothing written (fail closed)")
        return
    out.print(written.frames()["release"].head(5).to_string(index=False))
    out.print(f"query error of this release: {_query_error_text(written)}")
    out.rule("3. read the release back from its files and check it independently")
    back = Release.from_published(target)
    print_results(back.check(models))
    files = ", ".join(sorted(p.name for p in target.iterdir()))
    where = (
        f"in {target}"
        if keep
        else "(in a temporary folder, removed at the end; --out DIR keeps them)"
    )
    out.print(f"release files: {files} {where}")


def _demo_anonymizers(table: Table, seed: int) -> None:
    """Section 4 of the demo: the registered classic anonymizers side by side at l = 3."""
    from kerckhoffs.algorithms import REGISTRY
    from kerckhoffs.models import KAnonymity, LDiversity
    from kerckhoffs.models.base import format_number
    from kerckhoffs.release import Scheme

    names = [n for n in ("mondrian", "anatomy", "hilb") if n in REGISTRY]
    if not names:
        return
    out.rule("4. the classic anonymizers side by side (l = 3, frequency l-diversity)")
    t = rich_table(
        "algorithm", "groups", "mean size", "min-max", "k", "l", "NCP", "query error", "seconds"
    )
    for name in names:
        info = REGISTRY[name]
        t0 = time.perf_counter()
        release = info.run(table, [LDiversity(3)], seed=seed)
        elapsed = time.perf_counter() - t0
        sizes = release.partition.sizes
        k, l_div = release.check([KAnonymity(1), LDiversity(1)])
        t.add_row(
            name + (" *" if release.scheme == Scheme.BUCKETIZATION else ""),
            f"{release.partition.n_groups:,}",
            f"{sizes.mean():.1f}",
            f"{sizes.min()}-{sizes.max()}",
            format_number(k.achieved),
            format_number(l_div.achieved),
            _ncp_text(release),
            _query_error_text(release),
            f"{elapsed:.3f}",
        )
    out.print(fit_words(t, out.width))
    out.print(
        "NCP: normalized certainty penalty of the published QI cells (0 = exact, 1 = all "
        "suppressed). Query error: mean relative error of 2,000 random COUNT queries (3 QI "
        "ranges and an SA range, 5% selectivity; paper 000 section 8.1.3). * publishes by "
        "bucketization: exact QIs, with the QI-SA link hidden in each group's SA table."
    )
    _demo_information_flow(table, seed)


SAFE_L = 2
"""The l of sections 5 and 6. At the l = 3 of section 4 the look-ahead makes no cut on the
demo data (its most frequent disease is held by more than a sixth of the patients), so the
safe variants would be a random pick-up over the whole table; section 5 says so, measured."""

LOOK_AHEAD = {"mondrian++": "mondrian+", "hilb++strict": "hilb+strict"}
"""Each safe variant and its look-ahead alone (the groups before stratified pick-up)."""


def _demo_information_flow(table: Table, seed: int) -> None:
    """Section 5: an original algorithm fails the information-flow audit, its ++ variant
    passes (paper 000: every SA statistic read must be computable from the release). The
    table shows what the look-ahead made before stratified pick-up split it, and the text
    what safety costs on this data, measured."""
    import numpy as np

    from kerckhoffs.algorithms import REGISTRY
    from kerckhoffs.algorithms.sa_reads import SAReadLog
    from kerckhoffs.models import LDiversity

    pairs = [
        (a, b)
        for a, b in (("mondrian", "mondrian++"), ("hilb", "hilb++strict"))
        if a in REGISTRY and b in REGISTRY and LOOK_AHEAD[b] in REGISTRY
    ]
    if not pairs:
        return
    out.rule(f"5. does the algorithm read SA statistics the release does not show? (l = {SAFE_L})")
    t = rich_table(
        "algorithm",
        "look-ahead groups",
        "groups",
        "NCP",
        "query error",
        "unrecoverable SA reads",
        "verdict",
    )
    error: dict[str, str] = {}
    ahead: dict[str, int] = {}
    for name in [n for pair in pairs for n in pair]:
        log = SAReadLog()
        release = REGISTRY[name].run(table, [LDiversity(SAFE_L)], seed=seed, sa_log=log)
        bad = log.violations(release.partition.group)
        sets = sum(count for _, count in bad)
        if name in LOOK_AHEAD:
            plus = REGISTRY[LOOK_AHEAD[name]].run(table, [LDiversity(SAFE_L)], seed=seed)
            ahead[name] = plus.partition.n_groups
        error[name] = _query_error_text(release)
        t.add_row(
            name,
            f"{ahead[name]:,}" if name in ahead else "—",
            f"{release.partition.n_groups:,}",
            _ncp_text(release),
            error[name],
            f"{sets:,} row sets" if bad else "none",
            styled(("leaks", "red")) if bad else styled(("safe", "green")),
        )
    out.print(fit_words(t, out.width))
    costs = "; ".join(f"{b} {error[b]} against {a} {error[a]}" for a, b in pairs)
    out.print(
        "An adversary who knows the algorithm can replay a read that the release does not "
        "show and learn from the decision it drove (paper 000, Theorem 5.3). The ++ variants "
        "read only statistics of published groups: their look-ahead (Mondrian+, Hilb+ strict) "
        "cuts only where each part could take every row of the most frequent value and stay "
        "l-diverse, then stratified pick-up splits each part into random groups of about l "
        f"rows. On this data safety costs query error ({costs}); paper 000 reports comparable "
        "utility on Census with seven QIs, where Mondrian's own groups are larger."
    )
    counts = np.bincount(table.sa, minlength=table.n_sa)
    top = int(np.argmax(counts))
    wide = 3  # section 4's l
    stuck = {}
    for _, b in pairs:
        try:
            cut = REGISTRY[LOOK_AHEAD[b]].run(table, [LDiversity(wide)], seed=seed)
            if cut.partition.n_groups == 1:
                stuck[b] = _query_error_text(REGISTRY[b].run(table, [LDiversity(wide)], seed=seed))
        except ParameterError:  # a table too small or too skewed for l = 3 at all
            continue
    if stuck:
        errors = ", ".join(f"{b} {e}" for b, e in stuck.items())
        out.print(
            f"At l = {wide} (section 4) the look-ahead makes no cut at all on this table: "
            f"{table.sa_column.labels[top]}, its most frequent disease, is held by "
            f"{int(counts[top]):,} of {table.n:,} patients, and each part of a cut would have "
            f"to hold {wide} x {int(counts[top]):,} = {wide * int(counts[top]):,} rows, "
            f"more than half the table. {' and '.join(stuck)} then "
            f"{'pick' if len(stuck) > 1 else 'picks'} random groups of {wide} from the whole "
            f"table: safe, at a query error of {errors}."
        )
    _demo_attacks(table, seed)


def _demo_attacks(table: Table, seed: int) -> None:
    """Section 6: what an adversary who knows the algorithm learns, tuple by tuple (paper 000
    Algorithm 7 on Hilb; the same attack finds nothing on Hilb++ strict)."""
    from kerckhoffs.algorithms import REGISTRY
    from kerckhoffs.attacks.hilb.order import hilb_order_attack
    from kerckhoffs.models import LDiversity

    if "hilb" not in REGISTRY or "hilb++strict" not in REGISTRY:
        return
    out.rule(f"6. what an adversary who re-runs the algorithm learns (l = {SAFE_L})")
    for name in ("hilb", "hilb++strict"):
        release = REGISTRY[name].run(table, [LDiversity(SAFE_L)], seed=seed)
        result = hilb_order_attack(release)
        colour = "green" if result.safe else "red"
        out.print(
            styled(
                f"{name}: ",
                (result.verdict(), colour),
                f" (query error {_query_error_text(release)})",
            )
        )
    out.print(
        "Hilb's greedy groups skip a row only when its SA value is already in the group, so "
        "the order of the groups pins values down (paper 000 section 8.3.1). Run the same "
        "check on your own release with `kerckhoffs audit --release DIR`."
    )


def _demo_insiders(df: pd.DataFrame, schema: Schema, seed: int) -> None:
    """Section 7: two hospitals publish one table. Mondrian's release is 5-anonymous and
    3-diverse, yet either hospital, removing its own patients from each group, reads the
    other's (paper 003 section II); the provider-aware anonymizer (paper 003 Algorithm 2) makes
    every group 1-private, and the same insider attack finds nothing."""
    from kerckhoffs.algorithms import REGISTRY
    from kerckhoffs.attacks.insider import insider_attack
    from kerckhoffs.attacks.knowledge import Coalition
    from kerckhoffs.data.datasets import PROVIDER_COLUMN, with_providers
    from kerckhoffs.data.table import Table
    from kerckhoffs.models import KAnonymity, LDiversity, MPrivacy
    from kerckhoffs.models.base import format_number

    if "mondrian" not in REGISTRY or "provider-aware" not in REGISTRY:
        return
    out.rule("7. two hospitals, one release: can one read the other's patients?")
    joint = with_providers(df, 2, "uniform", seed)
    table = Table.encode(
        joint,
        Schema(
            (*schema.columns, Column(PROVIDER_COLUMN, Role.PROVIDER)),
            schema.sensitive_values,
        ),
    )
    constraint: list[PrivacyModel] = [KAnonymity(5), LDiversity(3)]
    m_privacy = MPrivacy(1, constraint)
    t = rich_table(
        "algorithm",
        "groups",
        "k",
        "l",
        "m",
        "one insider reads",
        "query error",
        wrap_first=True,
    )
    runs: list[tuple[str, list[PrivacyModel], dict[str, str]]] = [
        ("mondrian", constraint, {}),
        ("mondrian-mprivacy", [*constraint, m_privacy], {}),
        ("provider-aware", [*constraint, m_privacy], {}),
        ("provider-aware", [*constraint, m_privacy], {"score": "mondrian_width"}),
    ]
    for name, models, options in runs:
        label = name + "".join(f" ({value})" for value in options.values())
        try:
            release = REGISTRY[name].run(table, models, seed=seed, **options)
        except ParameterError as exc:  # a small table may not be 1-private as a whole
            t.add_row(label, "—", "—", "—", "—", f"refused: {exc}", "—")
            continue
        k, l_div, m = release.check([*constraint, m_privacy])
        attack = insider_attack(release, Coalition(m=1), worst=True, models=constraint)
        rows = attack.compromised
        t.add_row(
            label,
            f"{release.partition.n_groups:,}",
            format_number(k.achieved),
            format_number(l_div.achieved),
            format_number(m.achieved),
            styled((f"{rows:,} patients", "red")) if rows else styled(("nobody", "green")),
            _query_error_text(release),
        )
    out.print(fit_words(t, out.width, longest=18))
    out.print(
        "Each hospital knows its own patients: removing them from a group leaves the other "
        "hospital's, which may be fewer than k or less diverse than l (paper 003, m-privacy). "
        "m: the largest coalition of hospitals no group is open to (0: one hospital "
        "alone breaks some group). The m-private releases pay in utility, and how much "
        "depends on how the cuts are chosen: Mondrian's widest-dimension rule (option "
        "score=mondrian_width) keeps about the query error of the unprotected release. Try it "
        "on your release: "
        "`kerckhoffs audit --release DIR --knowledge coalition.toml`."
    )


def _demo_disclosure() -> None:
    """Section 8: paper 002's running example (examples/disclosure: 10 patients, three
    candidate generalizations). The naive publisher releases g2, yet an adversary who knows
    that g1 failed is left only with tables in which Ellen and Fen both have gastritis (c4);
    the exclusive strategy releases nothing there, and on the paper's table G_b only the
    exclusive strategy releases (g3)."""
    import numpy as np

    from kerckhoffs.attacks.disclosure_set import disclosure_set_attack
    from kerckhoffs.audits.random_worlds import with_sa
    from kerckhoffs.cli.disclosure import outcomes
    from kerckhoffs.data.table import Table
    from kerckhoffs.disclosure import PAPER_CHK
    from kerckhoffs.disclosure.example import G_B, NAMES, running_example
    from kerckhoffs.release import Partition, Provenance, Release, Scheme

    out.rule("8. the adversary knows the algorithm: disclosure sets (paper 002)")
    df, schema, seq = running_example()
    table = Table.encode(df, schema)
    code = dict(zip(table.sa_column.decode(table.sa), table.sa.tolist(), strict=True))
    g_b = list(G_B)
    names = list(NAMES)
    t = rich_table("table", "naive", "inclusive", "exclusive", "naive release discloses")
    for label, sa in (
        ("Table 1 (G0)", table.sa),
        ("G_b (Table 6)", np.array([code[v] for v in g_b], dtype=table.sa.dtype)),
    ):
        case = with_sa(table, sa)
        res = outcomes(case, seq, PAPER_CHK)
        leak: str | Text = "-"
        first = res[0].released
        if first is not None:
            release = Release(
                case,
                Partition.from_labels(seq[first]),
                Scheme.GENERALIZATION,
                sa,
                Provenance("naive", {}),
            )
            hit = disclosure_set_attack(release, seq, PAPER_CHK).tuples
            hit = hit[hit["breached"]]
            who = [names[r] if names else f"row {r}" for r in hit["row"].tolist()]
            leak = (
                styled(
                    (
                        ", ".join(
                            f"{w}: {v} ({p:.2f})"
                            for w, v, p in zip(who, hit["sa_value"], hit["posterior"], strict=True)
                        ),
                        "red",
                    )
                )
                if len(hit)
                else styled(("nothing beyond its groups", "green"))
            )
        t.add_row(
            label,
            *(seq.names[r.released] if r.released is not None else "nothing" for r in res),
            leak,
        )
    out.print(fit_words(t, out.width, longest=30))
    out.print(
        "The naive publisher releases the first candidate whose groups pass recursive "
        "(2,2)-diversity. Knowing g1 failed, the adversary keeps only the tables in which "
        "Ellen and Fen (rows 4 and 5) both have gastritis: a share of 1. The exclusive "
        "strategy stops at the same candidate and releases it only if safe on that "
        "disclosure set, so it releases nothing on Table 1; on G_b only it releases (g3), "
        "where the inclusive strategy gives up. Try: `kerckhoffs disclosure "
        "examples/disclosure/table1.csv -s examples/disclosure/schema.toml --sequence "
        "examples/disclosure/sequence.toml`."
    )


DP_LEVELS = {"zip": 1}
"""Section 9's public cell domain: zip areas (3 digits) x disease; age, sex and nationality
at their roots (age's intervals come from the data, not a hierarchy file, so only its root is
public; finer cells hold one or two patients each in a small table, and a noisy count of 1
then names a disease more often than Mondrian's classes do)."""


def _demo_dp(table: Table, seed: int) -> None:
    """Section 9: paper 004's composition attack. Two overlapping halves of the hospital table are
    published independently. Mondrian (k = 5) on each: intersecting a shared patient's two classes'
    disease sets names the disease of some patients exactly (Algorithm 1). A DP histogram
    (epsilon = 1, ``docs/theory/composition.md#dp-mechanisms``) of each half over a public cell
    domain: the same attack on the thresholded noisy counts (``dp-intersection``) names few or
    none, and the ledger's basic composition bounds each shared patient's loss by 1 + 1 = 2."""
    from kerckhoffs.algorithms import REGISTRY
    from kerckhoffs.attacks.composition import (
        OverlappingReleases,
        intersection_attack,
        make_subsets,
        take_rows,
    )
    from kerckhoffs.attacks.composition.dp_intersection import dp_intersection_attack
    from kerckhoffs.attacks.locate import locate_all
    from kerckhoffs.dp.counts import dp_histogram
    from kerckhoffs.models import KAnonymity

    if "mondrian" not in REGISTRY:
        return
    out.rule("9. two overlapping releases: k-anonymity vs differential privacy")
    subsets, shared = make_subsets(table.n, 2, table.n // 2, seed)
    halves = [take_rows(table, rows) for rows in subsets]
    k_rel = [REGISTRY["mondrian"].run(half, [KAnonymity(5)], seed=seed) for half in halves]
    over = OverlappingReleases(table, k_rel, subsets, shared)
    truth = over.true_values()
    k_res = intersection_attack(k_rel, over.locations(), true_values=truth).details
    levels = {c.name: c.hierarchy.height for c in table.qi_columns if c.hierarchy is not None}
    levels.update({k: v for k, v in DP_LEVELS.items() if k in levels})
    dp_rel = [dp_histogram(half, 1.0, levels=levels, with_sa=True) for half in halves]
    located = locate_all(dp_rel, over.population(), table.schema)
    dp_res = dp_intersection_attack(dp_rel, located, true_values=truth).details
    t = rich_table("two releases", "cells", "named exactly", "right disease", wrap_first=True)
    for label, rels, res in (
        ("Mondrian, k = 5", k_rel, k_res),
        ("DP histogram, epsilon = 1", dp_rel, dp_res),
    ):
        right = int(res["correct_breach"])
        t.add_row(
            label,
            " + ".join(f"{r.partition.n_groups:,}" for r in rels),
            f"{int(res['perfect_breach']):,}",
            styled((f"{right:,} patient{'s' if right > 1 else ''}", "red"))
            if right
            else styled(("nobody", "green")),
        )
    out.print(fit_words(t, out.width, longest=18))
    out.print(
        f"{shared.size:,} patients are in both halves. Each Mondrian release is 5-anonymous, "
        "yet intersecting a patient's two classes' diseases can leave one: k-anonymity does "
        "not compose (paper 004, Algorithm 1). The DP histograms publish a noisy count for "
        "every cell (zip area x disease); the attack reads a cell with a "
        "count of 1 or more as holding its disease. Noise makes a single name rare and often "
        "wrong, and DP composes: a patient in both releases loses at most epsilon 1 + 1 = 2 "
        "(`kerckhoffs budget`). The noise is fresh on every run (OpenDP cannot be seeded)."
    )


_WORKLOADS: weakref.WeakKeyDictionary[Table, Any] = weakref.WeakKeyDictionary()


def _query_error_text(release: Release) -> str:
    """Mean relative error of a fixed random COUNT workload (drawn once per table)."""
    from kerckhoffs.metrics import Workload, query_error

    work = _WORKLOADS.get(release.table)
    if work is None:
        work = _WORKLOADS[release.table] = Workload.draw(release.table, n_queries=2_000, seed=0)
    return f"{query_error(release, work).mean:.3f}"


def _ncp_text(release: Release) -> str:
    from kerckhoffs.metrics import ncp
    from kerckhoffs.release import Scheme

    if release.scheme == Scheme.BUCKETIZATION:
        return "0"
    return f"{ncp(release):.3f}"


def register(app: typer.Typer) -> None:
    """Add the command to the main app."""
    app.command("demo")(demo)
