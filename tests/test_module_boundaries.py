"""Module boundaries of the package, read from the sources with ``ast``.

- No import cycle among kerckhoffs modules at import time (the imports a module runs when it
  is loaded: its top-level statements, not those inside functions or ``TYPE_CHECKING``).
- The command modules (``cli.attack``, ``cli.audit_algorithm``, ``cli.demo``, ...) never
  import ``kerckhoffs.cli.app``, not even inside a function: ``cli.app`` imports them to
  register their commands, so any such import closes a cycle.
- No module imports a private name (``_x``) from another kerckhoffs module, by ``from m import
  _x`` or by ``m._x`` on an imported module: what a module shares, it names publicly.
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

COMMAND_MODULES = (
    "kerckhoffs.cli.algorithms",
    "kerckhoffs.cli.anonymize",
    "kerckhoffs.cli.attack",
    "kerckhoffs.cli.audit_algorithm",
    "kerckhoffs.cli.budget",
    "kerckhoffs.cli.check",
    "kerckhoffs.cli.dask",
    "kerckhoffs.cli.datasets",
    "kerckhoffs.cli.demo",
    "kerckhoffs.cli.disclosure",
    "kerckhoffs.cli.options",
    "kerckhoffs.cli.output",
    "kerckhoffs.cli.reproduce",
)

KNOWN_PRIVATE_IMPORTS: set[tuple[str, str, str]] = set()


# -- reading the sources ---------------------------------------------------------------------------
def module_name(path: Path, root: Path = SRC) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def sources(root: Path = SRC) -> dict[str, tuple[str, bool]]:
    """Module name -> (source text, is a package ``__init__``)."""
    return {
        module_name(p, root): (p.read_text(encoding="utf-8"), p.name == "__init__.py")
        for p in sorted(root.rglob("*.py"))
    }


def absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module a ``from ... import`` reads from (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    package = module if is_package else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


@functools.cache
def parse(text: str) -> ast.Module:
    """A module's syntax tree, parsed once for all the checks (nothing here changes it)."""
    return ast.parse(text)


def import_time_statements(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """Imports run when the module is loaded: top level, inside top-level ``if``/``try``,
    not inside functions or classes' methods, not under ``if TYPE_CHECKING``."""
    stack: list[ast.stmt] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            if "TYPE_CHECKING" not in ast.unparse(node.test):
                stack += node.body + node.orelse
            else:
                stack += node.orelse
        elif isinstance(node, ast.Try):
            stack += node.body + node.orelse + node.finalbody
            stack += [s for h in node.handlers for s in h.body]


def all_statements(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import, wherever it is (a function's import runs when it is called)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node


def import_graph(mods: dict[str, tuple[str, bool]], *, import_time: bool) -> dict[str, set[str]]:
    """Module -> the kerckhoffs modules it names in an import (``from pkg import sub`` names
    the submodule; a package's ``__init__`` run implicitly for a submodule is not an edge)."""
    graph: dict[str, set[str]] = {}
    for name, (text, is_package) in mods.items():
        tree = parse(text)
        found = import_time_statements(tree) if import_time else all_statements(tree)
        edges: set[str] = set()
        for node in found:
            if isinstance(node, ast.Import):
                edges.update(a.name for a in node.names)
                continue
            base = absolute(node, name, is_package)
            for a in node.names:
                edges.add(f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base)
        graph[name] = {m for m in edges if m in mods and m != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[v] = min(low[v], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen = {start}
    todo = [start]
    while todo:
        for m in graph[todo.pop()]:
            if m not in seen:
                seen.add(m)
                todo.append(m)
    return seen


def private_imports(mods: dict[str, tuple[str, bool]]) -> set[tuple[str, str, str]]:
    """(importer, module, name) for every private name taken from another kerckhoffs module:
    ``from m import _x`` and ``alias._x`` where ``alias`` is an imported kerckhoffs module."""
    out: set[tuple[str, str, str]] = set()
    for name, (text, is_package) in mods.items():
        tree = parse(text)
        aliases: dict[str, str] = {}
        for node in all_statements(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith("kerckhoffs") and a.asname:
                        aliases[a.asname] = a.name
                continue
            base = absolute(node, name, is_package)
            if not base.startswith("kerckhoffs"):
                continue
            for a in node.names:
                if f"{base}.{a.name}" in mods:
                    aliases[a.asname or a.name] = f"{base}.{a.name}"
                if a.name.startswith("_") and not a.name.startswith("__") and base != name:
                    out.add((name, base, a.name))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
                and aliases[node.value.id] != name
            ):
                out.add((name, aliases[node.value.id], node.attr))
    return out


# -- the checks on the package ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def mods() -> dict[str, tuple[str, bool]]:
    found = sources()
    assert "kerckhoffs.cli.app" in found and "kerckhoffs.cli.attack" in found
    return found


def test_no_import_cycle_at_import_time(mods: dict[str, tuple[str, bool]]) -> None:
    assert cycles(import_graph(mods, import_time=True)) == []


@pytest.fixture(scope="module")
def every_import(mods: dict[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """The import graph with imports inside functions too (built once for the module)."""
    return import_graph(mods, import_time=False)


def test_no_import_cycle_even_through_imports_inside_functions(
    every_import: dict[str, set[str]],
) -> None:
    """A cycle hidden in a function-level import is still a cycle: the two modules cannot be
    understood, tested or moved apart. The graph holds kerckhoffs modules only, so a lazy
    import of an optional third-party dependency (dask, matplotlib, opendp) is not in it."""
    assert cycles(every_import) == []


MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 120


def test_no_module_over_800_lines_and_no_function_over_120(
    mods: dict[str, tuple[str, bool]],
) -> None:
    """Small modules with one job each; a function a reader can hold in mind."""
    too_long = []
    for name, (text, _) in mods.items():
        lines = text.count("\n")
        if lines > MAX_MODULE_LINES:
            too_long.append(f"{name}: {lines} lines")
        for node in ast.walk(parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size > MAX_FUNCTION_LINES:
                    too_long.append(f"{name}.{node.name}: {size} lines")
    assert too_long == []


@pytest.mark.parametrize("command_module", COMMAND_MODULES)
def test_command_modules_never_reach_the_cli(
    every_import: dict[str, set[str]], command_module: str
) -> None:
    """Through any import, also one inside a function (the old ``from kerckhoffs.cli import
    _parse_options`` in ``attack`` and ``audit-algorithm``)."""
    graph = every_import
    assert "kerckhoffs.cli.app" in reachable(graph, "kerckhoffs.cli.app")
    assert "kerckhoffs.cli.app" not in reachable(graph, command_module)


def test_loading_the_command_modules_does_not_load_the_cli() -> None:
    """The same at run time, in a fresh interpreter."""
    code = (
        "import sys\n"
        f"for m in {list(COMMAND_MODULES)!r}:\n"
        "    __import__(m)\n"
        "print('kerckhoffs.cli.app' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "False"


def test_no_private_name_is_imported_from_another_module(
    mods: dict[str, tuple[str, bool]],
) -> None:
    offenders = private_imports(mods) - KNOWN_PRIVATE_IMPORTS
    assert sorted(offenders) == []


# -- the checks themselves catch what they look for ------------------------------------------------
def fake_package(tmp_path: Path, files: dict[str, str]) -> dict[str, tuple[str, bool]]:
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return sources(tmp_path)


def test_a_top_level_cycle_is_found_and_a_lazy_one_only_when_asked(tmp_path: Path) -> None:
    mods = fake_package(
        tmp_path,
        {
            "kerckhoffs/__init__.py": "",
            "kerckhoffs/a.py": "from kerckhoffs.b import f\n",
            "kerckhoffs/b.py": "from kerckhoffs import c\n",
            "kerckhoffs/c.py": "import kerckhoffs.a\n",
            "kerckhoffs/d.py": "def g():\n    from kerckhoffs.e import h\n",
            "kerckhoffs/e.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from kerckhoffs.d import g\n"
                "from . import d\n"
            ),
        },
    )
    assert cycles(import_graph(mods, import_time=True)) == [
        ["kerckhoffs.a", "kerckhoffs.b", "kerckhoffs.c"]
    ]
    every = import_graph(mods, import_time=False)
    assert sorted(map(sorted, cycles(every))) == [
        ["kerckhoffs.a", "kerckhoffs.b", "kerckhoffs.c"],
        ["kerckhoffs.d", "kerckhoffs.e"],
    ]
    assert "kerckhoffs.e" in reachable(every, "kerckhoffs.d")


def test_private_names_are_found_by_import_and_by_attribute(tmp_path: Path) -> None:
    mods = fake_package(
        tmp_path,
        {
            "kerckhoffs/__init__.py": "from kerckhoffs.a import __version__\n",
            "kerckhoffs/a.py": "__version__ = '1'\n_x = 1\ndef _f(): pass\n",
            "kerckhoffs/b.py": (
                "from kerckhoffs.a import _x\n"
                "from kerckhoffs import a as mod\n"
                "def g():\n    from .a import _f\n    return mod._f, mod.__name__\n"
            ),
            "kerckhoffs/c.py": "import numpy as np\nnp._x\nfrom os import _exit\n",
        },
    )
    assert private_imports(mods) == {
        ("kerckhoffs.b", "kerckhoffs.a", "_x"),
        ("kerckhoffs.b", "kerckhoffs.a", "_f"),
    }
