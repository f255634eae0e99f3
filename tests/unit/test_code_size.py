"""Small pieces: no module of torchsmith/ over 400 lines, no function over 60 (ENGINEERING.md,
habit 15). Read with :mod:`ast`. ``LONG_MODULES`` and ``LONG_FUNCTIONS`` name the offenders
still to split, with their size today: the lists only shrink (a new offender fails, a listed one
that grew fails, one that got small enough must leave the list)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "torchsmith"
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60

LONG_MODULES: dict[str, int] = {
}
"""module (relative to torchsmith/) -> its lines today (at most)."""
LONG_FUNCTIONS: dict[str, int] = {
}
"""``module:function`` -> its lines today (at most)."""


def module_lines() -> dict[str, int]:
    return {
        p.relative_to(PACKAGE).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
        for p in sorted(PACKAGE.rglob("*.py"))
    }


def function_lines(source: str) -> dict[str, int]:
    """``qualified name -> lines`` of every function, decorators included."""
    found: dict[str, int] = {}

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                    found[name] = (child.end_lineno or child.lineno) - first + 1
                walk(child, f"{name}.")

    walk(ast.parse(source), "")
    return found


def long_functions() -> dict[str, int]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        for name, lines in function_lines(path.read_text(encoding="utf-8")).items():
            if lines > MAX_FUNCTION_LINES:
                found[f"{module}:{name}"] = lines
    return found


def check(found: dict[str, int], listed: dict[str, int]) -> list[str]:
    """What breaks the rule: a new offender, a listed one that grew, or one that is fine now."""
    new = [f"{k}: {n} lines" for k, n in found.items() if k not in listed]
    grew = [f"{k}: {n} > {listed[k]} lines" for k, n in found.items() if n > listed.get(k, n)]
    fine = [f"{k}: within the limit now, drop it from the list" for k in listed if k not in found]
    return new + grew + fine


def test_no_module_over_the_limit() -> None:
    over = {m: n for m, n in module_lines().items() if n > MAX_MODULE_LINES}
    assert check(over, LONG_MODULES) == []


def test_no_function_over_the_limit() -> None:
    assert check(long_functions(), LONG_FUNCTIONS) == []


def test_the_lists_only_shrink() -> None:
    assert check({"a": 401}, {}) == ["a: 401 lines"]
    assert check({"a": 402}, {"a": 401}) == ["a: 402 > 401 lines"]
    assert check({}, {"a": 401}) == ["a: within the limit now, drop it from the list"]
    assert check({"a": 400}, {"a": 401}) == []


def test_the_check_measures_functions_with_their_decorators() -> None:
    source = "@d\ndef f():\n    pass\n\n\nclass C:\n    def g(self):\n        return 1\n"
    assert function_lines(source) == {"f": 3, "C.g": 2}
