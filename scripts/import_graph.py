#!/usr/bin/env python3
"""The import graph of ``torchsmith/`` with folders as nodes: prints every import loop and every
import from a lower layer to a higher one, and exits 1 when there is any (CI runs it through
``tests/unit/test_import_graph.py``).

A node is a sub-package (``torchsmith/host/`` -> ``host``) or, for a top-level module, the node
named in ``TOP_LEVEL`` (``plan.py`` and ``plan_model.py`` belong to ``plan``; ``spec_*``/``plan_*``
modules to their concept; any other module to the floor, so one that imports upward is caught).
The layering below is the architecture of ENGINEERING.md, bottom first: a node may import its own
layer and the layers under it, never one above. Imports under ``if TYPE_CHECKING:`` count too (a
type is a dependency). Read from the source with :mod:`ast`; nothing of torchsmith is imported.

Usage: ``scripts/import_graph.py [--edges]`` (``--edges`` also prints every arrow with the modules
that make it).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "torchsmith"

LAYERS: tuple[frozenset[str], ...] = (
    # 0: the floor: errors, the subprocess wrapper, small utilities
    frozenset({"errors", "proc", "util"}),
    # 1: the knowledge base
    frozenset({"kb"}),
    # 2: what the user asks for
    frozenset({"spec"}),
    # 3: facts about a machine or an image
    frozenset({"host"}),
    # 4: the plan: BuildPlan, every type it carries, the resolver
    frozenset({"plan"}),
    # 5: what carries a plan out, and what reads its results
    frozenset(
        {
            "steps",
            "attest",
            "rebuild",
            "backends",
            "sources",
            "toolchains",
            "cache",
            "companions",
            "container",
            "inspect",
            "verify",
            "doctor",
            "report",
            "packaging",
            "publish",
            "matrix",
            "workspace",
        }
    ),
    # 6: argument parsing and printing
    frozenset({"commands", "cli"}),
)

TOP_LEVEL = {
    "errors": "errors",
    "proc": "proc",
    "runner": "proc",
    "redact": "util",
    "atomic": "util",
    "hashing": "util",
    "lock": "util",
    "console": "util",
    "terminal": "util",
    "interpreter": "util",
    "transport": "util",
    "spec": "spec",
    "spec_sources": "spec",
    "docgen": "spec",
    "plan": "plan",
    "plan_model": "plan",
    "planner": "plan",
    "workspace": "workspace",
    "cli": "cli",
    "__main__": "cli",
    "__init__": "util",
}


def layer_of(node: str) -> int:
    for index, members in enumerate(LAYERS):
        if node in members:
            return index
    raise SystemExit(f"import_graph: folder {node!r} has no layer; add it to LAYERS")


def node_of(module: str) -> str | None:
    """``torchsmith.host.cuda`` -> ``host``; None for a module outside torchsmith."""
    parts = module.split(".")
    if parts[0] != "torchsmith":
        return None
    if len(parts) == 1:
        return "util"
    head = parts[1]
    if (PACKAGE / head).is_dir():
        return TOP_LEVEL.get(head, head)
    for prefix in ("spec_", "plan_"):  # spec_text.py, plan_types.py: their concept's node
        if head not in TOP_LEVEL and head.startswith(prefix):
            return prefix.rstrip("_")
    return TOP_LEVEL.get(head, "util")  # an unlisted module sits on the floor: its imports show


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _absolute(node: ast.ImportFrom, module: str, path: Path) -> str:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    if not node.level:
        return node.module or ""
    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join([*parts, *([node.module] if node.module else [])])


def imports_of(path: Path) -> Iterator[str]:
    module = module_name(path)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, module, path)
            if base == "torchsmith":
                yield from (_top_level(alias.name) for alias in node.names)
            else:
                yield base


def _top_level(name: str) -> str:
    """``from torchsmith import X``: the module X, or the package for a name it defines."""
    found = (PACKAGE / name).is_dir() or (PACKAGE / f"{name}.py").is_file()
    return f"torchsmith.{name}" if found else "torchsmith"


Edges = dict[tuple[str, str], set[str]]


def edges() -> Edges:
    """(from node, to node) -> the modules that make the arrow."""
    found: Edges = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        source = node_of(module_name(path))
        for target in filter(None, map(node_of, imports_of(path))):
            if source is not None and target != source:
                found.setdefault((source, target), set()).add(module_name(path))
    return found


def loops(graph: Edges) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    nodes = sorted({n for edge in graph for n in edge})
    succ = {n: sorted(b for a, b in graph if a == n) for n in nodes}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in succ[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while (top := stack.pop()) != node:
                component.append(top)
            if component:
                found.append(sorted([*component, node]))

    for node in nodes:
        if node not in index:
            visit(node)
    return found


def upward(graph: Edges) -> list[tuple[str, str]]:
    return sorted((a, b) for a, b in graph if layer_of(a) < layer_of(b))


COMMAND_SHARED = frozenset({"torchsmith.commands", "torchsmith.commands.spec_args"})
"""What commands may share: the registry and the argument parsing (no command logic)."""
COMMAND_ALLOWED: frozenset[tuple[str, str]] = frozenset()
"""Command -> command imports still to move (shared logic goes to host/, report/, container/):
none left. Stays empty: a new arrow fails the check."""


def command_imports() -> list[tuple[str, str]]:
    """(command, command it imports): none but the shared argument parsing."""
    found: set[tuple[str, str]] = set()
    for path in sorted((PACKAGE / "commands").glob("*.py")):
        source = module_name(path)
        for target in imports_of(path):
            command = ".".join(target.split(".")[:3])
            if command.startswith("torchsmith.commands.") and command != source:
                found.add((source, command))
    ignored = {(a, b) for a, b in found if b in COMMAND_SHARED or a == "torchsmith.commands"}
    return sorted(found - ignored - COMMAND_ALLOWED)


def main(argv: list[str]) -> int:
    graph = edges()
    cycles, ups = loops(graph), upward(graph)
    print(f"import graph: {len({n for e in graph for n in e})} folders, {len(graph)} arrows")
    if "--edges" in argv:
        for (a, b), modules in sorted(graph.items()):
            print(f"  {a} -> {b}: {', '.join(sorted(modules))}")
    for cycle in cycles:
        print(f"loop: {' <-> '.join(cycle)}")
        for a, b in sorted(e for e in graph if e[0] in cycle and e[1] in cycle):
            print(f"  {a} -> {b}: {', '.join(sorted(graph[a, b]))}")
    for a, b in ups:
        print(
            f"upward: {a} (layer {layer_of(a)}) -> {b} (layer {layer_of(b)}): "
            f"{', '.join(sorted(graph[a, b]))}"
        )
    commands = command_imports()
    for a, b in commands:
        print(f"command imports command: {a} -> {b}")
    counts = f"{len(cycles)} loops, {len(ups)} upward arrows"
    print(f"{counts}, {len(commands)} command->command imports")
    return 1 if cycles or ups or commands else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
