"""Step ``compile``: `cmake --build` of the planned targets with the plan's job count."""

from __future__ import annotations

from pathlib import Path

from tests.unit.steps.conftest import Rig
from torchsmith.steps import compile, configure, environment, source


def test_build_command_names_targets_and_jobs() -> None:
    argv = compile.build_command(Path("/b"), ["c10", "torch_cpu"], 3)
    assert argv == ["cmake", "--build", "/b", "--parallel", "3", "--target", "c10", "torch_cpu"]
    assert "--target" not in compile.build_command(Path("/b"), [], 3)


def test_the_step_builds_the_planned_targets(rig: Rig) -> None:
    for step in (source.run_fetch, source.run_copy, environment.run, configure.run):
        step(rig.ctx, rig.state)
    compile.run(rig.ctx, rig.state)
    build = [a for a in rig.executor.ran if a[:2] == ["cmake", "--build"]]
    assert build == [compile.build_command(rig.state.need_tree() / "build", ["c10"], 2)]
    assert rig.state.need_compiled().targets == ["c10"]
