"""The report rendered as one self-contained HTML page: inline styles (screen and print),
inline SVG plots, no script, no font, nothing fetched. Each number is a ``<span
class="num" data-key=KEY data-value=VALUE>`` so it can be checked against the library."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from kerckhoffs.models.base import format_number
from kerckhoffs.reporting.model import Figure, Section

STYLE = """
:root { --ink: #1d2430; --muted: #5b6573; --line: #d9dee5; --bad: #a4161a; --good: #1b6b3a;
        --warn: #8a5a00; }
* { box-sizing: border-box; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
       sans-serif; color: var(--ink); max-width: 1100px; margin: 0 auto; padding: 24px;
       line-height: 1.45; font-size: 15px; }
h1 { font-size: 1.6em; margin: 0 0 4px; }
h2 { font-size: 1.2em; border-bottom: 2px solid var(--line); padding-bottom: 4px;
     margin: 28px 0 10px; }
p.intro, p.lead { color: var(--muted); margin: 4px 0 12px; }
dl.figures { display: grid; grid-template-columns: repeat(auto-fill, minmax(230px, 1fr));
             gap: 8px 16px; margin: 8px 0; }
dl.figures div { border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; }
dt { color: var(--muted); font-size: 0.85em; }
dd { margin: 2px 0 0; font-size: 1.25em; font-weight: 600; font-variant-numeric: tabular-nums; }
dd.text { font-size: 1em; font-weight: 500; overflow-wrap: anywhere; }
ul.verdicts { list-style: none; padding: 0; }
ul.verdicts li { border-left: 4px solid var(--line); padding: 6px 10px; margin: 6px 0;
                 background: #f7f8fa; }
ul.verdicts li.safe, ul.verdicts li.ok { border-color: var(--good); }
ul.verdicts li.unsafe, ul.verdicts li.violated { border-color: var(--bad); }
ul.verdicts li.incomplete { border-color: var(--warn); }
.verdict-label { font-weight: 600; display: block; font-size: 0.85em; color: var(--muted); }
.plots { display: flex; flex-wrap: wrap; gap: 12px; }
.plots figure { margin: 0; flex: 0 1 520px; max-width: 100%; }
.plots svg { width: 100%; height: auto; }
ul.notes { color: var(--muted); font-size: 0.9em; }
table { border-collapse: collapse; font-size: 0.85em; width: 100%; }
th, td { border: 1px solid var(--line); padding: 4px 6px; text-align: left;
         overflow-wrap: anywhere; }
th { background: #f0f2f5; }
footer { color: var(--muted); font-size: 0.8em; margin-top: 32px; }
@media print {
  body { max-width: none; padding: 0; font-size: 11pt; }
  section { break-inside: avoid-page; }
  h2 { break-after: avoid; }
  .plots figure, dl.figures div, ul.verdicts li { break-inside: avoid; }
  .plots figure { flex: 0 1 48%; }
  @page { margin: 16mm; }
}
"""


def show(f: Figure) -> str:
    """A number as the page shows it."""
    v = f.value
    if isinstance(v, str):
        return escape(v)
    if f.share:
        return f"{format_number(round(100 * float(v), 2))} %"
    if isinstance(v, int):
        return f"{v:,}"
    return format_number(float(v))


def _number(f: Figure) -> str:
    """The shown value marked with its key and the value the library computed."""
    return (
        f'<span class="num" data-key="{escape(f.key)}" '
        f'data-value="{escape(repr(f.value))}">{show(f)}</span>'
    )


def _figure(f: Figure) -> str:
    text = ' class="text"' if isinstance(f.value, str) else ""
    return f"<div><dt>{escape(f.label)}</dt><dd{text}>{_number(f)}</dd></div>"


def _cell(c: str | Figure) -> str:
    return _number(c) if isinstance(c, Figure) else escape(c)


def _kind(text: str) -> str:
    head = text.split(":", 1)[0].split(" ", 1)[0].strip().lower()
    return head if head in {"safe", "unsafe", "incomplete", "ok", "violated"} else "other"


def _section(s: Section) -> str:
    out = [f"<section><h2>{escape(s.title)}</h2>"]
    if s.intro:
        out.append(f'<p class="intro">{escape(s.intro)}</p>')
    if s.verdicts:
        out.append('<ul class="verdicts">')
        for v in s.verdicts:
            out.append(
                f'<li class="{_kind(v.text)}" data-verdict="{escape(v.key)}"><span '
                f'class="verdict-label">{escape(v.label)}</span>{escape(v.text)}</li>'
            )
        out.append("</ul>")
    if s.figures:
        out.append('<dl class="figures">' + "".join(_figure(f) for f in s.figures) + "</dl>")
    if s.plots:
        out.append('<div class="plots">')
        out += [f"<figure>{svg}</figure>" for svg in s.plots]
        out.append("</div>")
    if s.table:
        head, *rows = s.table
        out.append("<table><tr>" + "".join(f"<th>{_cell(c)}</th>" for c in head) + "</tr>")
        for row in rows:
            out.append("<tr>" + "".join(f"<td>{_cell(c)}</td>" for c in row) + "</tr>")
        out.append("</table>")
    if s.notes:
        out.append('<ul class="notes">' + "".join(f"<li>{escape(n)}</li>" for n in s.notes))
        out.append("</ul>")
    out.append("</section>")
    return "\n".join(out)


def render(title: str, sections: Sequence[Section]) -> str:
    """The whole page."""
    from kerckhoffs.version import __version__

    body = "\n".join(_section(s) for s in sections)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>"
        f"<h1>{escape(title)}</h1>"
        '<p class="lead">What this release publishes, what it achieves, what an adversary who '
        "knows the algorithm can learn from it, and what it costs in utility. Every number "
        "is computed by kerckhoffs' own functions; nothing private is in this page.</p>"
        f"{body}<footer>kerckhoffs {escape(__version__)}</footer></body></html>\n"
    )
