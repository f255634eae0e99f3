"""One executor: outside the executor's package (``proc.py``, ``runner.py``, ``backends/``) no
module starts a process itself — no ``subprocess.run/Popen/...``, no ``proc.run``/``proc.capture``
(nor importing those two functions), no ``os.system``/``os.popen``. Commands go through the
:class:`torchsmith.runner.Runner` the caller passes in, so the same code runs on any backend and
one wrapper logs, redacts and times them all. Read from the source with :mod:`ast`.

``REMAINING`` lists the modules that still call directly, with how many calls (none today): it
only shrinks (a new module, or one more call, fails; a module that got better must lower its
count)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "torchsmith"
EXECUTOR = {"proc.py", "runner.py", "backends"}
SUBPROCESS_CALLS = {"run", "Popen", "call", "check_call", "check_output", "getoutput",
                    "getstatusoutput"}  # fmt: skip
PROC_CALLS = {"run", "capture"}
OS_CALLS = {"system", "popen"}

REMAINING: dict[str, int] = {}
"""module (relative to torchsmith/) -> direct calls it still makes (issue 22 item 4)."""


def _direct(node: ast.AST) -> bool:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        owner, name = node.func.value, node.func.attr
        if isinstance(owner, ast.Name):
            return (
                (owner.id == "subprocess" and name in SUBPROCESS_CALLS)
                or (owner.id == "proc" and name in PROC_CALLS)
                or (owner.id == "os" and name in OS_CALLS)
            )
    if isinstance(node, ast.ImportFrom):
        names = {alias.name for alias in node.names}
        return bool(
            (node.module == "subprocess" and names & SUBPROCESS_CALLS)
            or (node.module == "torchsmith.proc" and names & PROC_CALLS)
        )
    return False


def direct_calls(source: str) -> int:
    return sum(map(_direct, ast.walk(ast.parse(source))))


def offenders() -> dict[str, int]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        if relative.parts[0] in EXECUTOR:
            continue
        if count := direct_calls(path.read_text(encoding="utf-8")):
            found[relative.as_posix()] = count
    return found


def test_no_module_outside_the_executor_starts_a_process() -> None:
    assert offenders() == REMAINING


def test_the_check_sees_each_kind_of_direct_call() -> None:
    assert direct_calls("import subprocess\nsubprocess.run(['x'])\n") == 1
    assert direct_calls("from subprocess import Popen\n") == 1
    assert direct_calls("from torchsmith import proc\nproc.capture(['x'], env={})\n") == 1
    assert direct_calls("from torchsmith.proc import capture, LineCallback\n") == 1
    assert direct_calls("import os\nos.system('x')\n") == 1
    assert direct_calls("import subprocess\nexcept_ = subprocess.TimeoutExpired\n") == 0
    assert direct_calls("def f(runner):\n    runner.run(['x'], env={})\n") == 0
