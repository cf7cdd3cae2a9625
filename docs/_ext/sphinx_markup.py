"""Griffe extension: render kerckhoffs's reStructuredText-flavoured docstrings as Markdown.

The library's docstrings are written for readers of the source and use a few Sphinx habits
that Markdown does not know. Before mkdocstrings renders them, this extension rewrites, in
each docstring of the loaded package:

- roles such as :class:`~kerckhoffs.release.Release`, :meth:`write` or
  :func:`Title <kerckhoffs.x.f>` into a code span that links to the object when the site
  documents it (an *optional* autorefs reference: no warning when it does not, e.g. a private
  helper or a module the reference leaves out), and into a plain code span when the name
  cannot be resolved at all (``numpy.random.Generator``);
- a paragraph ending in ``::`` into one ending in ``:`` (the indented block after it is
  already a Markdown code block);
- a doctest (lines starting with ``>>>`` at the docstring's left margin) into a fenced
  ``pycon`` block, so its lines are not run together into one paragraph;
- a bulleted or numbered list that starts right under a paragraph line: a blank line is put
  before it, which Markdown needs to see a list.

``literal`` (double backquotes) and *emphasis* already mean the same in Markdown.
Used from mkdocs.yml (``extensions`` of the python handler); it is not part of the package.
"""

from __future__ import annotations

import re
from html import escape
from typing import Any

from griffe import Alias, Extension, GriffeLoader, Module, Object

ROLE = re.compile(r":(?:py:)?(?:class|meth|func|mod|attr|data|exc|obj|const):`([^`]+)`")
EXPLICIT = re.compile(r"^(?P<title>.+?)\s*<(?P<target>[^<>]+)>$")
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\S")


class SphinxMarkup(Extension):
    """Rewrite every docstring of a package once it is fully loaded (names then resolve)."""

    def on_package(self, *, pkg: Module, loader: GriffeLoader, **kwargs: Any) -> None:
        seen: set[str] = set()
        stack: list[Object] = [pkg]
        while stack:
            obj = stack.pop()
            if obj.path in seen:
                continue
            seen.add(obj.path)
            if obj.docstring is not None:
                obj.docstring.value = markdown(obj.docstring.value, obj, loader)
            stack.extend(m for m in obj.members.values() if not isinstance(m, Alias))


def markdown(text: str, obj: Object, loader: GriffeLoader) -> str:
    """``text`` (one docstring of ``obj``) with the Sphinx habits made Markdown."""
    text = ROLE.sub(lambda m: _reference(m.group(1), obj, loader), text)
    out: list[str] = []
    lines = text.split("\n")
    i = 0
    in_list = False
    while i < len(lines):
        line = lines[i]
        if line.startswith(">>>"):
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i])
                i += 1
            if out and out[-1].strip():
                out.append("")
            out += ["```pycon", *block, "```"]
            continue
        if line.rstrip().endswith("::"):
            stripped = line.rstrip()
            line = "" if stripped.strip() == "::" else stripped[:-1]
        if LIST_ITEM.match(line):
            if not in_list and out and out[-1].strip():
                out.append("")
            in_list = True
        elif line.strip() and not line.startswith(" "):
            in_list = False
        out.append(line)
        i += 1
    return "\n".join(out)


def _reference(content: str, obj: Object, loader: GriffeLoader) -> str:
    """One role's content as a code span linking to its target when it can be found."""
    explicit = EXPLICIT.match(content)
    if explicit:
        title, target = explicit["title"], explicit["target"]
    else:
        target = content
        title = content.lstrip("~").rsplit(".", 1)[-1] if content.startswith("~") else content
    target = target.lstrip("~.")
    path = _resolve(target, obj, loader)
    code = f"<code>{escape(title)}</code>"
    if path is None:
        return code
    return f'<autoref identifier="{escape(path)}" optional>{code}</autoref>'


def _resolve(target: str, obj: Object, loader: GriffeLoader) -> str | None:
    """The full path of ``target`` seen from ``obj``, or None if it is not in the tree."""
    candidates = [target]
    head, _, rest = target.partition(".")
    try:
        base = obj.resolve(head)
    except Exception:  # griffe raises NameResolutionError; any failure means "not found"
        base = None
    if base is not None:
        candidates.insert(0, f"{base}.{rest}" if rest else base)
    for path in candidates:
        try:
            found = loader.modules_collection[path]
        except Exception:
            continue
        return str(found.path)
    return None
