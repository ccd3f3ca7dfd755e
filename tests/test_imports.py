"""The packages import one way and no module imports itself in a circle.

The direction is ``poker`` ◄ ``abstraction`` ◄ ``solver`` ◄ ``agent``, with ``bench``
above all: a module may import its own package and the packages below it, never one
above. Every ``*.py`` of those packages is parsed with :mod:`ast`; every import statement
counts, at module level, inside a function or under ``TYPE_CHECKING`` (a lazy import
dodges a cycle at run time but is still one), relative (``from .cfr import X``, ``from ..
import _kernels``) or absolute (``import solver.training.cfr``, ``from solver import
tree``). ``importlib.import_module`` with a constant name counts too.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Lower packages first; a package may import those at or below its own rank.
LAYERS = ("poker", "abstraction", "solver", "agent", "bench")


def module_name(path: Path, root: Path = ROOT) -> str:
    """``solver/training/cfr.py`` -> ``solver.training.cfr``; a package's ``__init__.py``
    -> the package's name."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(current: str, is_package: bool, level: int, module: str | None) -> str:
    """The absolute name a relative import of ``current`` refers to."""
    base = current.split(".") if is_package else current.split(".")[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def imported_names(source: str, current: str, is_package: bool, modules: set[str]) -> set[str]:
    """The project modules (names in ``modules``) that ``source``, the module ``current``,
    imports anywhere in its text. ``from P import x`` imports ``P.x`` where that is a
    module, and ``P`` otherwise."""
    out: set[str] = set()

    def add(name: str) -> None:
        # the longest prefix that is a module of the project
        parts = name.split(".")
        for k in range(len(parts), 0, -1):
            cand = ".".join(parts[:k])
            if cand in modules:
                out.add(cand)
                return

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = (_resolve(current, is_package, node.level, node.module) if node.level
                    else node.module or "")
            for alias in node.names:
                full = f"{base}.{alias.name}"
                add(full if full in modules else base)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "import_module" and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            add(node.args[0].value)
    out.discard(current)
    return out


def import_graph(root: Path = ROOT, packages: tuple[str, ...] = LAYERS) -> dict[str, set[str]]:
    """Module -> the project modules it imports, for every ``*.py`` under ``packages``."""
    files = [f for p in packages for f in sorted((root / p).rglob("*.py"))]
    modules = {module_name(f, root) for f in files}
    return {
        module_name(f, root): imported_names(
            f.read_text(encoding="utf-8"), module_name(f, root), f.name == "__init__.py", modules
        )
        for f in files
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


def upward_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Every (importer, imported) pair where a lower package imports a higher one."""
    rank = {p: i for i, p in enumerate(LAYERS)}
    return sorted(
        (m, d) for m, deps in graph.items() for d in deps
        if rank[d.split(".")[0]] > rank[m.split(".")[0]]
    )


def test_parser_sees_every_kind_of_import() -> None:
    modules = {"solver", "solver.training", "solver.training.a", "solver.training.b",
               "solver.c", "solver.d", "solver.e", "solver.training.f", "solver.g", "poker",
               "poker.game", "agent", "agent.commands", "agent.commands.x"}
    source = (
        "from .a import X\n"
        "from . import b as B, helper\n"
        "from .. import e\n"
        "import solver.c as C\n"
        "from solver.d import Y\n"
        "import numpy\n"
        "from poker.game import Game\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from agent.commands import x\n"
        "def lazy():\n"
        "    from .f import Z\n"
        "    return Z\n"
        "class K:\n"
        "    def m(self):\n"
        "        import solver.g\n"
        "        importlib.import_module('agent')\n"
    )
    got = imported_names(source, "solver.training.h", False, modules)
    assert got == {"solver.training.a", "solver.training.b", "solver.training", "solver.e",
                   "solver.c", "solver.d", "poker.game", "agent.commands.x",
                   "solver.training.f", "solver.g", "agent"}
    # in a package's __init__, one dot is the package itself
    assert imported_names("from .a import X", "solver.training", True, modules) == {"solver.training.a"}


def test_cycle_finder() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"a"}}) == ["a", "a"]


def test_direction_finder() -> None:
    graph = {"poker.x": {"agent.y"}, "agent.y": {"poker.x"}, "bench.z": {"agent.y"}}
    assert upward_imports(graph) == [("poker.x", "agent.y")]


def test_packages_import_one_way() -> None:
    graph = import_graph()
    assert {"solver.training.cfr", "agent.cli", "poker.state", "bench.blueprint"} <= graph.keys()
    wrong = upward_imports(graph)
    assert not wrong, "imports against the direction poker < abstraction < solver < agent < bench: " + ", ".join(
        f"{a} imports {b}" for a, b in wrong
    )


def test_no_import_cycle() -> None:
    graph = import_graph()
    # the command line imports its subcommands by name (agent.cli.COMMANDS)
    from agent.cli import COMMANDS

    graph["agent.cli"] |= {f"agent.commands.{name}" for name in COMMANDS}
    cycle = find_cycle(graph)
    assert cycle is None, "modules import one another in a circle: " + " -> ".join(cycle or [])
