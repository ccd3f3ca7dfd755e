"""The solver package's modules import one another without a cycle.

Every ``solver/*.py`` is parsed with :mod:`ast`; every import statement counts, at
module level or inside a function (a lazy import dodges a cycle at run time but is still
one), relative (``from .cfr import X``, ``from . import _kernels``) or absolute
(``import solver.cfr``, ``from solver import tcfr``).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = "solver"
SOLVER_DIR = Path(__file__).resolve().parent.parent / PACKAGE


def _module_name(path: Path) -> str:
    """``solver/cfr.py`` -> ``cfr``; ``solver/__init__.py`` -> ``__init__``."""
    return path.stem


def imported_modules(source: str, modules: set[str]) -> set[str]:
    """The package modules (names in ``modules``, without the package prefix) that
    ``source``, a module of the package, imports anywhere in its text."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == PACKAGE:
                    out.add(parts[1] if len(parts) > 1 else "__init__")
        elif isinstance(node, ast.ImportFrom):
            if node.level == 1:
                base = node.module
            elif node.level == 0 and node.module and node.module.split(".")[0] == PACKAGE:
                base = node.module.split(".", 1)[1] if "." in node.module else None
            else:
                continue  # another package, or above this one
            if base is not None:
                out.add(base.split(".")[0])
                continue
            # ``from . import a, b``: each name is a module of the package or an
            # attribute of its __init__.
            for alias in node.names:
                out.add(alias.name if alias.name in modules else "__init__")
    return out & modules


def import_graph(directory: Path = SOLVER_DIR) -> dict[str, set[str]]:
    """Module -> the package modules it imports, for every ``*.py`` in ``directory``."""
    files = sorted(directory.glob("*.py"))
    modules = {_module_name(f) for f in files}
    return {
        _module_name(f): imported_modules(f.read_text(encoding="utf-8"), modules) for f in files
    }


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as ``[a, b, ..., a]``, or None if it is acyclic."""
    WHITE, GREY, BLACK = 0, 1, 2
    colour = dict.fromkeys(graph, WHITE)
    stack: list[str] = []

    def visit(u: str) -> list[str] | None:
        colour[u] = GREY
        stack.append(u)
        for v in sorted(graph.get(u, ())):
            if colour.get(v, BLACK) == GREY:
                return stack[stack.index(v) :] + [v]
            if colour.get(v) == WHITE:
                found = visit(v)
                if found:
                    return found
        stack.pop()
        colour[u] = BLACK
        return None

    for u in sorted(graph):
        if colour[u] == WHITE:
            found = visit(u)
            if found:
                return found
    return None


def test_parser_sees_every_kind_of_import():
    modules = {"__init__", "a", "b", "c", "d", "e", "f", "g"}
    source = (
        "from .a import X\n"
        "from . import b as B, helper\n"
        "import solver.c as C\n"
        "from solver.d import Y\n"
        "from solver import e\n"
        "import numpy\n"
        "from poker.game import Game\n"
        "def lazy():\n"
        "    from .f import Z\n"
        "    return Z\n"
        "class K:\n"
        "    def m(self):\n"
        "        import solver.g\n"
    )
    assert imported_modules(source, modules) == {"__init__", "a", "b", "c", "d", "e", "f", "g"}


def test_cycle_finder():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"a"}}) == ["a", "a"]


def test_solver_imports_form_no_cycle():
    graph = import_graph()
    assert {"cfr", "mccfr", "tcfr", "strategy_io"} <= graph.keys()
    cycle = find_cycle(graph)
    assert cycle is None, "solver modules import one another in a circle: " + " -> ".join(
        f"solver.{m}" for m in cycle
    )
