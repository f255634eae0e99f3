"""The plan is executed as data: the pipeline runs exactly ``plan.steps``, in order, with the
real step implementations (through an executor that records instead of running)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

import pytest

from tests.unit.planner.kb import ci_host, mini_kb
from tests.unit.steps.recording import RecordingExecutor
from torchsmith.attest.files import attestations_of
from torchsmith.errors import InternalError
from torchsmith.plan_model import BuildPlan, StepName
from torchsmith.planner import resolve
from torchsmith.planner.support import PIPELINE
from torchsmith.report.progress import Reporter
from torchsmith.spec_sources import resolve_spec
from torchsmith.steps.context import BuildOptions
from torchsmith.steps.pipeline import STEPS, run_build


class Quiet(Reporter):
    def __init__(self) -> None:
        self.messages: list[str] = []

    def stage_started(self, name: str, what: str) -> None:
        self.messages.append(f"start {name}")

    def stage_finished(self, name: str, seconds: float) -> None:
        self.messages.append(f"done {name}")

    def message(self, text: str) -> None:
        self.messages.append(text)

    def ninja(self, status: Any) -> None:
        pass

    def close(self) -> None:
        pass


def _tree(tmp_path: Path) -> Path:
    tree = tmp_path / "pytorch"
    tree.mkdir()
    (tree / "version.txt").write_text("2.5.1\n")
    (tree / "CMakeLists.txt").write_text("project(torch)\n")
    return tree


def _plan(tmp_path: Path, **cli: Any) -> BuildPlan:
    cli = {"torch": "2.5.1", "accelerator": "cpu", "source": f"path:{_tree(tmp_path)}", **cli}
    return resolve(resolve_spec(cli=cli), mini_kb(), ci_host())


def _build(tmp_path: Path, plan: BuildPlan, verify: bool = True) -> tuple[Any, RecordingExecutor]:
    options = BuildOptions(tmp_path / "cache", tmp_path / "dist", verify=verify)
    executor = RecordingExecutor()
    return run_build(plan, options, executor, Quiet(), ci_host()), executor


def test_partial_build_runs_exactly_the_planned_steps(tmp_path: Path) -> None:
    plan = _plan(tmp_path, targets=("c10",))
    result, executor = _build(tmp_path, plan)
    assert result.executed == [s.name for s in plan.steps]
    assert result.executed == ["fetch", "copy", "environment", "configure", "compile", "publish"]
    assert executor.programs_run() == ["python3.11", "python", "cmake", "ccache", "cmake", "ccache"]
    assert result.manifest["executed_steps"] == result.executed


def test_wheel_build_runs_exactly_the_planned_steps(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    result, executor = _build(tmp_path, plan, verify=False)
    names = [s.name for s in plan.steps]
    assert result.executed == names
    assert names[-6:] == ["compile", "package", "repair", "verify", "publish", "attest"]
    assert result.wheel is not None and result.wheel.parent == tmp_path / "dist"
    assert executor.ran[-1][1:4] == ["-m", "auditwheel", "repair"]
    manifest = json.loads(result.manifest_paths[0].read_text())
    # the manifest is written by publish: the attest step after it is not in its list
    assert manifest["executed_steps"] == names[:-1] and manifest["verify"] is None
    assert [p.name for p in attestations_of(result.wheel)] == [
        result.wheel.name + ".cdx.json",
        result.wheel.name + ".provenance.json",
    ]
    assert manifest["repair"]["excluded"] == ["libcuda.so.1", "libnvidia-ml.so.1"]


def test_every_step_name_has_an_implementation_and_the_planner_knows_it() -> None:
    assert set(STEPS) == set(get_args(StepName)) == PIPELINE.steps


def test_a_step_out_of_order_is_an_internal_error_not_a_crash(tmp_path: Path) -> None:
    plan = _plan(tmp_path, targets=("c10",))
    steps = [s for s in plan.steps if s.name not in {"copy", "fetch"}]
    with pytest.raises(InternalError, match="before the 'fetch' step ran"):
        _build(tmp_path, plan.model_copy(update={"steps": steps}))


def test_the_spec_cache_dir_is_the_compiler_cache_the_build_uses(tmp_path: Path) -> None:
    shared = tmp_path / "shared-ccache"
    plan = _plan(tmp_path, targets=("c10",), **{"cache.dir": str(shared)})
    result, _ = _build(tmp_path, plan)
    assert result.manifest["env"]["CCACHE_DIR"] == str(shared)


def test_an_executor_is_a_runner_for_the_providers() -> None:
    from torchsmith.backends.local import LocalExecutor
    from torchsmith.proc import HOST, Runner

    runners: list[Runner] = [LocalExecutor({}), RecordingExecutor(), HOST]
    assert all(callable(r.run) and callable(r.capture) for r in runners)
