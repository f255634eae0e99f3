"""The planner is pure: nothing it imports, directly or through other torchsmith modules, can
start a process (no ``subprocess``, ``torchsmith.proc``, ``multiprocessing`` or ``os.system``).
Read from the source with :mod:`ast`, so the check itself imports nothing."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "torchsmith"
PROCESS_MODULES = {"subprocess", "multiprocessing", "torchsmith.proc", "pty"}


def _path(module: str) -> Path | None:
    base = PACKAGE.parent.joinpath(*module.split("."))
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def _absolute(node: ast.ImportFrom, module: str, path: Path) -> str:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    if not node.level:
        return node.module or ""
    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join([*parts, *([node.module] if node.module else [])])


def _is_type_checking(node: ast.AST) -> bool:
    """``if TYPE_CHECKING:`` — imports there never run."""
    return isinstance(node, ast.If) and ast.unparse(node.test) in {
        "TYPE_CHECKING",
        "typing.TYPE_CHECKING",
    }


def _is_os_system(node: ast.AST) -> bool:
    if not isinstance(node, ast.Attribute) or node.attr != "system":
        return False
    return isinstance(node.value, ast.Name) and node.value.id == "os"


def imports_of(module: str) -> set[str]:
    path = _path(module)
    assert path is not None, module
    found: set[str] = set()
    tree = ast.parse(path.read_text())
    typing_only = {
        id(n) for block in ast.walk(tree) if _is_type_checking(block) for n in ast.walk(block)
    }
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, module, path)
            found.add(base)
            found |= {f"{base}.{a.name}" for a in node.names if _path(f"{base}.{a.name}")}
        elif _is_os_system(node):
            found.add("os.system")
    return found


def closure(root: str) -> dict[str, set[str]]:
    """Every torchsmith module ``root`` imports (with the packages whose __init__ runs)."""
    seen: dict[str, set[str]] = {}
    todo = [root]
    while todo:
        module = todo.pop()
        if module in seen or _path(module) is None:
            continue
        seen[module] = imports_of(module)
        parts = module.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]
        todo += [m for m in seen[module] if m.startswith("torchsmith")]
    return seen


def test_nothing_the_planner_imports_starts_a_process() -> None:
    graph = closure("torchsmith.planner")
    offenders = {m: sorted(i & (PROCESS_MODULES | {"os.system"})) for m, i in graph.items()}
    assert {m: i for m, i in offenders.items() if i} == {}
    assert "torchsmith.planner.toolkit_select" in graph  # the check does follow the planner


def test_the_check_catches_a_module_that_runs_processes() -> None:
    assert "torchsmith.proc" in closure("torchsmith.backends.local")  # the executor itself
