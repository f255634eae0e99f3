"""Workspace rules: one dir per plan hash, reuse when the info matches, clean with a reason when
it does not, never delete a directory torchsmith did not create."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torchsmith.errors import HostError
from torchsmith.plan_model import BuildPlan, EnvSetting
from torchsmith.workspace import (
    INFO_NAME,
    MARKER,
    plan_differences,
    prepare_workspace,
    read_info,
    stale_reason,
)

TOOLS = {"cmake": "cmake version 3.25.1", "cxx": "g++ (Debian 12.2.0-14) 12.2.0"}


@pytest.fixture
def plan(fixtures: Path) -> BuildPlan:
    return BuildPlan.model_validate_json(
        (fixtures / "build" / "plan-debian-1.13.1-c10.json").read_text()
    )


def _said() -> tuple[list[str], object]:
    said: list[str] = []
    return said, said.append


def test_new_workspace_has_info_and_plan(tmp_path: Path, plan: BuildPlan) -> None:
    said, say = _said()
    ws = prepare_workspace(tmp_path, plan, TOOLS, say)  # type: ignore[arg-type]
    assert ws.root == tmp_path / "builds" / plan.plan_hash()
    info = read_info(ws.root)
    assert info is not None
    assert info["marker"] == MARKER and info["plan_hash"] == plan.plan_hash()
    assert info["tools"] == TOOLS
    assert json.loads((ws.root / "plan.json").read_text())["tag"] == plan.tag
    assert said == [f"new build dir {ws.root}"]


def test_same_plan_resumes_and_keeps_files(tmp_path: Path, plan: BuildPlan) -> None:
    said, say = _said()
    ws = prepare_workspace(tmp_path, plan, TOOLS, say)  # type: ignore[arg-type]
    (ws.root / "src").mkdir()
    ws.mark_done("fixes", {"fixes": []})
    again = prepare_workspace(tmp_path, plan, TOOLS, say)  # type: ignore[arg-type]
    assert (again.root / "src").is_dir() and again.is_done("fixes")
    assert said[-1] == f"resuming in {ws.root}"


def test_changed_tools_clean_the_dir_with_a_reason(tmp_path: Path, plan: BuildPlan) -> None:
    said, say = _said()
    ws = prepare_workspace(tmp_path, plan, TOOLS, say)  # type: ignore[arg-type]
    (ws.root / "src").mkdir()
    newer = {**TOOLS, "cmake": "cmake version 3.31.6"}
    prepare_workspace(tmp_path, plan, newer, say)  # type: ignore[arg-type]
    assert not (ws.root / "src").exists()
    assert "the tools changed: cmake cmake version 3.25.1 → cmake version 3.31.6" in said[-1]
    assert read_info(ws.root)["tools"] == newer  # type: ignore[index]


def test_changed_plan_names_what_changed(tmp_path: Path, plan: BuildPlan) -> None:
    said, say = _said()
    first = prepare_workspace(tmp_path, plan, TOOLS, say)  # type: ignore[arg-type]
    changed = plan.model_copy(
        update={"env": [*plan.env, EnvSetting(name="X", value="1", reason="t")]}
    )
    second = prepare_workspace(tmp_path, changed, TOOLS, say)  # type: ignore[arg-type]
    assert second.root != first.root
    assert said[-1] == (
        f"new plan {changed.plan_hash()} (the last build of this source, "
        f"{plan.plan_hash()}, differs in: env)"
    )


def test_never_deletes_a_foreign_directory(tmp_path: Path, plan: BuildPlan) -> None:
    foreign = tmp_path / "builds" / plan.plan_hash()
    foreign.mkdir(parents=True)
    (foreign / "precious.txt").write_text("mine")
    with pytest.raises(HostError, match="not created by torchsmith"):
        prepare_workspace(tmp_path, plan, TOOLS, lambda _: None)
    assert (foreign / "precious.txt").read_text() == "mine"


def test_info_of_another_plan_is_stale(tmp_path: Path, plan: BuildPlan) -> None:
    ws = prepare_workspace(tmp_path, plan, TOOLS, lambda _: None)
    info = json.loads((ws.root / INFO_NAME).read_text())
    assert stale_reason(info, plan.plan_hash(), TOOLS) is None
    assert (
        stale_reason(info, "0" * 16, TOOLS)
        == f"it was made for plan {plan.plan_hash()}, not {'0' * 16}"
    )


def test_plan_differences_ignore_warnings() -> None:
    assert plan_differences({"a": 1, "warnings": ["x"]}, {"a": 2, "warnings": []}) == ["a"]


def test_stage_times_add_up_over_runs(tmp_path: Path, plan: BuildPlan) -> None:
    ws = prepare_workspace(tmp_path, plan, TOOLS, lambda _: None)
    assert ws.timings() == {}
    ws.add_time("compile", 60.04)
    again = prepare_workspace(tmp_path, plan, TOOLS, lambda _: None)  # a resumed run
    assert again.add_time("compile", 30.0) == {"compile": 90.0}
    assert again.timings() == {"compile": 90.0}
