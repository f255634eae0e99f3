"""A real BuildContext over a tiny `path:` tree, a CPU plan from the planner's test KB, and the
recording executor: each step module's test runs the real step."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.unit.planner.kb import ci_host, mini_kb
from tests.unit.steps.recording import RecordingExecutor
from torchsmith.plan_model import BuildPlan
from torchsmith.planner import resolve
from torchsmith.spec_sources import resolve_spec
from torchsmith.steps.context import BuildContext, BuildOptions
from torchsmith.steps.preflight import preflight
from torchsmith.steps.state import BuildState
from torchsmith.workspace import prepare_workspace


class Quiet:
    """A Reporter that keeps what it was told."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def stage_started(self, name: str, what: str) -> None:
        self.lines.append(f"start {name}: {what}")

    def stage_finished(self, name: str, seconds: float) -> None:
        self.lines.append(f"done {name}")

    def message(self, text: str) -> None:
        self.lines.append(text)

    def ninja(self, status: Any) -> None:
        pass

    def close(self) -> None:
        pass


@dataclass
class Rig:
    ctx: BuildContext
    state: BuildState
    executor: RecordingExecutor
    reporter: Quiet
    user_tree: Path


def make_tree(root: Path) -> Path:
    tree = root / "pytorch"
    tree.mkdir(parents=True)
    (tree / "version.txt").write_text("2.5.1\n")
    (tree / "CMakeLists.txt").write_text("project(torch)\n")
    return tree


def make_plan(tree: Path, **cli: Any) -> BuildPlan:
    cli = {"torch": "2.5.1", "accelerator": "cpu", "source": f"path:{tree}", **cli}
    return resolve(resolve_spec(cli=cli), mini_kb(), ci_host())


def make_rig(tmp_path: Path, verify: bool = True, **cli: Any) -> Rig:
    tree = make_tree(tmp_path / "user")
    plan = make_plan(tree, **cli)
    executor, reporter = RecordingExecutor(), Quiet()
    options = BuildOptions(tmp_path / "cache", tmp_path / "dist", verify=verify)
    env = executor.environment()
    tools = preflight(executor, plan, env, options.cache_root)
    workspace = prepare_workspace(options.cache_root, plan, tools.versions, reporter.message)
    ctx = BuildContext(plan, workspace, executor, reporter, options, ci_host())  # type: ignore[arg-type]
    return Rig(ctx, BuildState(tools=tools, base_env=env), executor, reporter, tree)


@pytest.fixture
def rig(tmp_path: Path) -> Rig:
    return make_rig(tmp_path, targets=("c10",))
