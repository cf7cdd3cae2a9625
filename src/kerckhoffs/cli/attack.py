"""The ``attack`` and ``audit`` commands: what an adversary learns from a published release.

Both read a release directory written by ``kerckhoffs anonymize`` (or another tool's table
with ``--schema``), the adversary's knowledge (``--knowledge``: a TOML file, or a CSV of the
population's QIs) and any other releases of overlapping populations (``--other``); knowledge
the release cannot use is refused first. ``attack NAME`` runs one attack and writes its
per-tuple table and summary; ``audit`` runs every attack that applies and ends with one line a
non-expert can read, e.g. ``UNSAFE: 1,204 of 45,222 rows disclosed by hilb-order``. Both exit 0
only on SAFE: UNSAFE, INCOMPLETE (something could not be tested) and NO VERDICT exit 1.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kerckhoffs.cli.options import parse_options
from kerckhoffs.cli.output import counted, err, fit_words, out, styled, table
from kerckhoffs.data.output import output_directory
from kerckhoffs.errors import InputError

if TYPE_CHECKING:  # imported where used, so that `kerckhoffs --help` loads no pandas
    from kerckhoffs.attacks.knowledge import Knowledge
    from kerckhoffs.attacks.registry import AttackInfo
    from kerckhoffs.attacks.result import AttackResult
    from kerckhoffs.release import Release

ReleaseOpt = Annotated[
    Path, typer.Option("--release", "-r", help="The attacked release directory (or table file).")
]
KnowledgeOpt = Annotated[
    Path | None,
    typer.Option(
        "--knowledge",
        "-k",
        help="The adversary's knowledge: a TOML file (population, not_having, rules, releases) "
        "or a CSV of the population's quasi-identifiers.",
    ),
]
OtherOpt = Annotated[
    list[Path] | None,
    typer.Option("--other", help="Another release of an overlapping population; repeat."),
]
SchemaOpt = Annotated[
    Path | None,
    typer.Option(
        "--schema",
        help="Schema TOML whose hierarchies say what each published cell covers (needed for "
        "generalized releases read from files and for tables made by other tools).",
    ),
]
NoVerifyOpt = Annotated[
    bool,
    typer.Option(
        "--no-verify",
        help="Read release directories whose files were edited on purpose: skip the SHA-256 "
        "verification against release.json (the CSV is read when both formats exist).",
    ),
]


def _load(
    release: Path,
    knowledge: Path | None,
    other: list[Path] | None,
    schema: Path | None,
    verify: bool = True,
) -> tuple[Release, Knowledge]:
    """The attacked release and the knowledge, with ``--other`` and ``--schema`` folded in."""
    from kerckhoffs.attacks.knowledge import Knowledge
    from kerckhoffs.attacks.knowledge_check import check_knowledge
    from kerckhoffs.release import Release

    if not release.exists():
        raise InputError(f"release not found: {release}")
    know = Knowledge.from_path(knowledge) if knowledge is not None else Knowledge()
    if schema is not None:
        if not schema.exists():  # a FIFO or a folder is named as such when it is read
            raise InputError(f"schema file not found: {schema}")
        know = dataclasses.replace(know, schema=schema)
    for p in other or []:
        if not p.exists():
            raise InputError(f"release not found: {p}")
    sch = know.load_schema()
    rel = Release.from_published(release, sch, verify=verify)
    # the other releases are read now (and once), so a damaged one is refused before any
    # attack runs, and --no-verify holds for them too
    others: list[Path | Release] = [
        r if isinstance(r, Release) else Release.from_published(r, sch, verify=verify)
        for r in [*know.releases, *(other or [])]
    ]
    for r in [rel, *others]:
        for note in r.notes if isinstance(r, Release) else []:
            err.print(f"note: {note}", soft_wrap=True)
    know = dataclasses.replace(know, releases=others)
    check_knowledge(know, rel)  # knowledge this release cannot use is refused before any output
    return rel, know


def _describe(release: Release, know: Knowledge) -> str:
    from kerckhoffs.attacks.knowledge_check import given_knowledge
    from kerckhoffs.models.scope import singletons
    from kerckhoffs.release import Scheme

    prov = release.provenance
    params = _parameters(prov.parameters)
    extra = list(given_knowledge(know).values())
    c = know.coalition
    if c is not None and extra:
        if c.records is not None:
            extra[-1] = f"a coalition's {counted(len(c.records), 'own record')}"
        elif c.providers:
            extra[-1] = f"a coalition of {counted(len(c.providers), 'provider')}"
        else:
            extra[-1] = f"the worst coalition of {counted(c.m or 0, 'provider')}"
    alone = singletons(release.partition.group) if release.scheme != Scheme.DP else 0
    size = (
        f"{counted(release.table.n, 'cell')} of noisy counts"
        if release.scheme == Scheme.DP
        else f"{counted(release.table.n, 'row')}"
        + (f" ({alone:,} published in a group of one)" if alone else "")
        + f", {counted(release.partition.n_groups, 'group')}"
    )
    return (
        f"release: {size}, {release.scheme.value}, by {prov.algorithm}"
        + (f" ({params})" if params else "")
        + (f"; knowledge: {', '.join(extra)}" if extra else "; knowledge: none")
    )


def _parameters(params: dict[str, object]) -> str:
    """The algorithm's recorded parameters as the command line writes them: ``k=5``,
    ``levels=age:4,sex:1``, ``marginals=zip;zip+nationality``, the checked models as
    ``models=dp=1``, a ``sequence`` release's candidates by name (never a Python dict or
    list)."""
    from kerckhoffs.errors import KerckhoffsError
    from kerckhoffs.models.base import PrivacyModel, format_number
    from kerckhoffs.models.parse import written_model

    def text(key: str, v: object) -> str:
        if key == "sequence" and isinstance(v, list) and all(isinstance(x, dict) for x in v):
            return _candidates(v)
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, float):
            return format_number(v)
        if isinstance(v, dict):
            if key == "models" or "model" in v:
                try:
                    return written_model(PrivacyModel.from_dict(v))
                except KerckhoffsError:
                    pass
            return ",".join(f"{k}:{text(str(k), x)}" for k, x in v.items())
        if isinstance(v, list | tuple):
            sep = ";" if any(isinstance(x, list | tuple) for x in v) else ","
            inner = "+" if sep == ";" else ","
            return sep.join(
                inner.join(text(key, y) for y in x) if isinstance(x, list | tuple) else text(key, x)
                for x in v
            )
        return str(v)

    return ", ".join(f"{k}={text(k, v)}" for k, v in params.items())


def _candidates(entries: list[dict[str, object]], most: int = 6) -> str:
    """A ``sequence`` release's candidates by name, not their bins: ``3 candidates (decades;
    twenty-years; halves)``, the first ``most`` named."""
    names = [str(e.get("name") or f"g{i + 1}") for i, e in enumerate(entries)]
    shown = "; ".join(names[:most]) + ("; ..." if len(names) > most else "")
    return f"{counted(len(names), 'candidate')} ({shown})"


def attack(
    name: Annotated[str, typer.Argument(help="Attack name (see `kerckhoffs audit --list`).")],
    release: ReleaseOpt,
    out_dir: Annotated[
        Path, typer.Option("--out", "-o", help="Directory for tuples.csv and summary.json.")
    ],
    knowledge: KnowledgeOpt = None,
    other: OtherOpt = None,
    schema: SchemaOpt = None,
    option: Annotated[
        list[str] | None,
        typer.Option("--option", "-O", help="Attack option KEY=VALUE; repeat for several."),
    ] = None,
    overwrite: Annotated[bool, typer.Option(help="Replace an existing --out directory.")] = False,
    no_verify: NoVerifyOpt = False,
) -> None:
    """Run one attack on a release and write what the adversary learns, tuple by tuple.

    Writes tuples.csv (row, SA value, posterior, breached) and summary.json; exit code 1 when
    a row is disclosed or the attack could not place every target (INCOMPLETE).
    """
    from kerckhoffs import api
    from kerckhoffs.attacks.registry import get_attack

    info = get_attack(name)
    options = parse_options(option or [])
    protect = [release, knowledge, schema, *(other or [])]
    with output_directory(out_dir, kind="attack", overwrite=overwrite, protect=protect):
        rel, know = _load(release, knowledge, other, schema, verify=not no_verify)
        out.print(_describe(rel, know))
        result = api.attack(rel, name, knowledge=know, options=options)
        result.write(out_dir, overwrite=overwrite)
    _print_result(info, result)
    out.print(f"written: {out_dir / 'tuples.csv'}, {out_dir / 'summary.json'}")
    out.print(result.verdict(), soft_wrap=True)
    if not result.safe:  # UNSAFE or INCOMPLETE
        raise typer.Exit(1)


def audit(
    release: Annotated[
        Path | None,
        typer.Option("--release", "-r", help="The attacked release directory (or table file)."),
    ] = None,
    knowledge: KnowledgeOpt = None,
    other: OtherOpt = None,
    schema: SchemaOpt = None,
    list_attacks: Annotated[
        bool, typer.Option("--list", help="List the attacks and exit.")
    ] = False,
    no_verify: NoVerifyOpt = False,
) -> None:
    """Run every attack that applies to a release and print one verdict line.

    Which attacks apply is judged from the release's algorithm, scheme and the knowledge
    given; each prints what it found, then one overall verdict: SAFE (exit 0), UNSAFE,
    INCOMPLETE (an attack could not place some targets or run, or knowledge was not used) or
    NO VERDICT (exit 1).
    """
    from kerckhoffs import api
    from kerckhoffs.attacks.registry import get_attack

    if list_attacks:
        from kerckhoffs.attacks import register_all
        from kerckhoffs.attacks.registry import ATTACKS

        register_all()

        t = table("attack", "what it does")
        for name, info in sorted(ATTACKS.items()):
            t.add_row(name, info.summary)
        out.print(fit_words(t, out.width))
        return
    if release is None:
        raise InputError("give the release to audit with --release DIR (or --list)")
    rel, know = _load(release, knowledge, other, schema, verify=not no_verify)
    out.print(_describe(rel, know))

    def report(name: str, result: AttackResult | None, error: str | None) -> None:
        if result is not None:  # one attack's finding; the audit's verdict comes last
            _print_result(get_attack(name), result, claim=False)
        else:
            out.print(styled((f"{name}: could not run: {error}", "yellow")))

    outcome = api.audit(rel, knowledge=know, on_result=report)
    for name, reason in outcome.skipped:
        out.print(styled((f"{name}: not run: {reason}", "dim")))
    out.print(outcome.verdict, soft_wrap=True)
    if not outcome.safe:  # UNSAFE, INCOMPLETE or NO VERDICT: only SAFE exits 0
        raise typer.Exit(1)


def _print_result(info: AttackInfo, result: AttackResult, claim: bool = True) -> None:
    colour = "red" if result.disclosed else "green" if result.safe else "yellow"
    bound = f"{result.bound:.3g}" if result.bound is not None else "none"
    out.print(
        styled(
            (info.name, "bold"),
            ": ",
            (result.verdict(claim=claim), colour),
            f" ({len(result.tuples):,} tuples examined, max posterior "
            f"{result.max_posterior:.3g}, bound {bound})",
        )
    )


def register(app: typer.Typer) -> None:
    """Add the commands to the main app."""
    app.command("attack")(attack)
    app.command("audit")(audit)
