"""Faults of the audit area: knowledge an attack cannot use, and audits that cannot reach a
verdict.

Knowledge that cannot be used on the attacked release (a rule naming a column or a value the
release does not have, ``max = nan``, a population without the release's quasi-identifiers)
is bad input: one ``error:`` line, exit 2. Knowledge that is valid but that no attack which
ran takes into account, targets an attack could not place, and a release no attack applies
to make the verdict INCOMPLETE or NO VERDICT: exit 1, never a line reading SAFE or ok.

The workspace (``test_catalogue.py``) holds ``data.csv`` (300 generated patients), the demo
schema, and ``rel`` and ``rel2``: Mondrian k=3 releases of it.
"""

from __future__ import annotations

from pathlib import Path

from catalogue import Fault, Setup

SCHEMA = ["--schema", "demo/schema.toml"]
RULE = '[[rule]]\nvalue = "{value}"\nshare = 0.1\nwhere = {{ {where} }}\n'
POPULATION = '[population]\nfile = "data.csv"\nid = "patient_id"\n\n'


def _knowledge(text: str, *more: str, release: str = "rel") -> Setup:
    """Write ``k.toml`` holding ``text``; audit ``release`` with it (and ``more`` arguments)."""

    def setup(ws: Path) -> list[str]:
        (ws / "k.toml").write_text(text)
        return ["audit", "-r", release, *SCHEMA, "-k", "k.toml", *more]

    return setup


def _rule(where: str, value: str = "Flu", population: bool = True) -> Setup:
    text = (POPULATION if population else "") + RULE.format(value=value, where=where)
    return _knowledge(text, "--other", "rel2")


def _attack_with_rule(where: str) -> Setup:
    """``attack intersection`` (which reads no rule) with a rule the release cannot use."""

    def setup(ws: Path) -> list[str]:
        (ws / "k.toml").write_text(POPULATION + RULE.format(value="Flu", where=where))
        return ["attack", "intersection", "-r", "rel", *SCHEMA, "-k", "k.toml", "--other",
                "rel2", "-o", "out"]  # fmt: skip

    return setup


def _population(
    columns: list[str], extra_rows: tuple[str, ...] = (), keep_rows: int | None = None
) -> Setup:
    """A population CSV with ``columns`` of data.csv (its first ``keep_rows`` rows, and rows
    appended), audited with rel2."""

    def setup(ws: Path) -> list[str]:
        lines = (ws / "data.csv").read_text().splitlines()
        if keep_rows is not None:
            lines = lines[: keep_rows + 1]
        header = lines[0].split(",")
        keep = [header.index(c) for c in columns]
        rows = [",".join(line.split(",")[i] for i in keep) for line in lines]
        (ws / "pop.csv").write_text("\n".join([*rows, *extra_rows]) + "\n")
        return ["audit", "-r", "rel", *SCHEMA, "-k", "pop.csv", "--other", "rel2"]

    return setup


ALL = ["patient_id", "age", "sex", "zip", "nationality", "disease"]

# fmt: off
FAULTS = [
    # knowledge the release cannot use: refused, one error line
    Fault("audit-rule-unknown-column", _rule("agee = { max = 25 }"),
          ("k.toml", "rule[0]", "'agee'")),
    Fault("audit-rule-unknown-value", _rule("age = { max = 25 }", value="Flux"),
          ("k.toml", "rule[0]", "'Flux'", "disease")),
    Fault("audit-rule-max-nan", _rule("age = { max = nan }"),
          ("k.toml", "rule[0]", "where.age", "max", "nan")),
    Fault("audit-rule-min-inf", _rule("age = { min = -inf }"), ("rule[0]", "min", "inf")),
    Fault("audit-rule-range-on-categorical", _rule("sex = { max = 1 }"),
          ("rule[0]", "where.sex", "categorical")),
    Fault("audit-rule-unknown-category", _rule('sex = ["X"]'), ("rule[0]", "'X'", "'sex'")),
    Fault("audit-rule-text-on-numeric", _rule('age = ["old"]'),
          ("rule[0]", "'old'", "numeric")),
    Fault("audit-rule-unknown-column-alone", _rule("agee = { max = 25 }", population=False),
          ("rule[0]", "'agee'")),
    Fault("audit-population-no-qi", _population(["patient_id", "disease"]),
          ("pop.csv", "population", "'age'")),
    Fault("audit-population-missing-zip", _population(["age", "sex", "nationality"]),
          ("pop.csv", "'zip'")),
    Fault("audit-population-empty", _population(ALL, keep_rows=0),
          ("pop.csv", "population", "no rows")),
    Fault("audit-rule-share-nan",
          _knowledge(RULE.format(value="Flu", where="age = { max = 25 }").replace("0.1", "nan")),
          ("rule[0]", "share", "nan")),
    Fault("audit-not-having-unknown-value",
          _knowledge(POPULATION + '[[not_having]]\nid = "P000001"\nvalue = "Flux"\n',
                     "--other", "rel2"),
          ("k.toml", "not_having[0]", "'Flux'")),
    Fault("attack-rule-unknown-column", _attack_with_rule("agee = { max = 25 }"),
          ("rule[0]", "'agee'")),
    # valid knowledge no attack that ran takes into account: INCOMPLETE, exit 1
    Fault("audit-rule-not-used", _rule("age = { max = 25 }"),
          ("INCOMPLETE", "1 distribution rule not used", "negative-association"), codes=(1,)),
    Fault("audit-coalition-not-used",
          _knowledge(POPULATION + '[coalition]\nproviders = ["P1"]\n', "--other", "rel2"),
          ("INCOMPLETE", "coalition not used", "insider"), codes=(1,)),
    Fault("audit-population-alone", _knowledge(POPULATION),
          ("NO VERDICT", "population", "not used"), codes=(1,)),
    Fault("audit-no-knowledge", lambda ws: ["audit", "-r", "rel", *SCHEMA],
          ("NO VERDICT", "[coalition]"), codes=(1,)),
    # targets the attack could not place: INCOMPLETE, exit 1
    Fault("audit-targets-not-located", _population(ALL, ("P999999,150,F,02111,Japan,Flu",)),
          ("INCOMPLETE", "1 of 301 targets not located"), codes=(1,)),
]
# fmt: on
