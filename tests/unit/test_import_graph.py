"""The import graph of torchsmith/ (folders as nodes) has no loop and no arrow from a lower
layer to a higher one, and no command imports another command: ``scripts/import_graph.py``,
loaded as a module (unit tests start no process)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "import_graph.py"


@pytest.fixture(scope="module")
def graph() -> ModuleType:
    spec = importlib.util.spec_from_file_location("import_graph", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["import_graph"] = module  # dataclass-free, but keep the usual import contract
    spec.loader.exec_module(module)
    return module


def test_no_folder_loop_and_no_upward_import(graph: ModuleType) -> None:
    edges = graph.edges()
    assert graph.loops(edges) == []
    assert graph.upward(edges) == []


def test_no_command_imports_another_command(graph: ModuleType) -> None:
    assert graph.command_imports() == []


def test_the_script_exits_0_on_the_package(
    graph: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    assert graph.main([]) == 0
    assert "0 loops, 0 upward arrows" in capsys.readouterr().out


def test_a_loop_and_an_upward_arrow_are_caught(graph: ModuleType) -> None:
    edges = {("plan", "steps"): {"torchsmith.plan_model"}, ("steps", "plan"): {"x"}}
    assert graph.loops(edges) == [["plan", "steps"]]
    assert graph.upward(edges) == [("plan", "steps")]
    assert graph.loops({**edges, ("host", "kb"): {"y"}}) == [["plan", "steps"]]


def test_every_folder_has_a_layer(graph: ModuleType) -> None:
    nodes = {n for edge in graph.edges() for n in edge}
    assert all(isinstance(graph.layer_of(n), int) for n in nodes)
    assert graph.layer_of("errors") < graph.layer_of("kb") < graph.layer_of("spec")
    assert graph.layer_of("host") < graph.layer_of("plan") < graph.layer_of("steps")
    assert graph.layer_of("steps") < graph.layer_of("commands")
