"""torchsmith rebuild: the recorded request planned again must give the recorded plan; the
recorded source and compiler are enforced; the build goes through the ordinary pipeline (here
with the recording executor: no process runs) into a new workspace, and the wheels are
compared."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.unit.attest.helpers import key_pair
from tests.unit.planner.kb import ci_host
from tests.unit.steps.recording import RecordingExecutor
from tests.unit.steps.test_pipeline import Quiet, _tree
from torchsmith import kb
from torchsmith.errors import HostError, PlanError, SourceError, UsageError
from torchsmith.plan_model import BuildPlan
from torchsmith.planner import resolve
from torchsmith.rebuild import run as rebuild_run
from torchsmith.rebuild.plan_check import check_same_plan, read_manifest, request_of
from torchsmith.sources.base import SourceTree
from torchsmith.spec_sources import ResolvedSpec, resolve_spec
from torchsmith.steps.context import BuildOptions
from torchsmith.steps.pipeline import run_build
from torchsmith.steps.recorded import Recorded, check_epoch, check_source, check_toolchain

CLI = {"torch": "2.5.1", "accelerator": "cpu", "max_jobs": 4}


def _recorded(tmp_path: Path, **cli: Any) -> tuple[Path, BuildPlan, ResolvedSpec]:
    resolved = resolve_spec(cli={**CLI, **cli}, env={"TORCHSMITH_PYTHON": "3.11"})
    plan = resolve(resolved, kb.load(), ci_host())
    data = {"plan": plan.model_dump(mode="json"), "request": resolved.recorded()}
    path = tmp_path / "torch.manifest.json"
    path.write_text(json.dumps(data))
    return path, plan, resolved


def test_the_recorded_request_plans_the_recorded_plan(tmp_path: Path) -> None:
    path, plan, _ = _recorded(tmp_path)
    manifest = read_manifest(path)
    again = request_of(manifest, tmp_path / "out")
    assert again.origins == {
        "accelerator": "cli",
        "max_jobs": "cli",
        "python": "env",
        "torch": "cli",
    }
    replanned = resolve(again, kb.load(), ci_host())
    assert replanned.output_dir == str(tmp_path / "out")
    check_same_plan(replanned, manifest, path)
    assert replanned.plan_hash() == plan.plan_hash()


def test_a_recorded_plan_that_differs_is_refused_naming_its_keys(tmp_path: Path) -> None:
    path, _, _ = _recorded(tmp_path)
    manifest = read_manifest(path)
    manifest["plan"]["cmake_args"] = ["-DFOO=1"]
    replanned = resolve(request_of(manifest, tmp_path / "out"), kb.load(), ci_host())
    with pytest.raises(PlanError, match=r"plans differently here .*: cmake_args"):
        check_same_plan(replanned, manifest, path)


def test_the_signing_key_is_not_part_of_the_recorded_request(tmp_path: Path) -> None:
    key = key_pair(tmp_path)[0]
    _, plan, resolved = _recorded(tmp_path, sign_key=str(key))
    assert plan.sign_key == str(key) and "sign_key" not in json.dumps(resolved.recorded())


def test_a_manifest_without_a_request_or_plan_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"plan": {}}))
    with pytest.raises(UsageError, match="no recorded request"):
        read_manifest(path)
    path.write_text("[]")
    with pytest.raises(UsageError, match="no recorded plan"):
        read_manifest(path)


TOOLS = {"cc": "gcc (Debian 12.2.0-14) 12.2.0\nCopyright", "cmake": "cmake version 3.25.1"}


def test_another_compiler_is_refused_by_name_other_tools_warned() -> None:
    here = {"cc": "gcc (Debian 14.2.0-19) 14.2.0", "cmake": "cmake version 3.31.6"}
    with pytest.raises(HostError, match=r"cc: recorded 'gcc \(Debian 12.2.0-14\) 12.2.0', here"):
        check_toolchain(Recorded("m.json", toolchain=TOOLS), here, print)
    said: list[str] = []
    check_toolchain(Recorded("m.json", toolchain=TOOLS, allow_drift=True), here, said.append)
    assert [s.split(": ")[2] for s in said] == ["cc", "cmake"]
    said.clear()
    check_toolchain(Recorded("m.json", toolchain=TOOLS), {**TOOLS, "cmake": "cmake 4"}, said.append)
    assert len(said) == 1 and "cmake" in said[0]


def test_another_source_tree_is_refused(tmp_path: Path) -> None:
    tree = SourceTree("git", tmp_path, "abc123", "2.5.1", False, {})
    check_source(Recorded("m.json", source_identity="abc123"), tree)
    with pytest.raises(SourceError, match=r"fetched is abc123, m.json records def456"):
        check_source(Recorded("m.json", source_identity="def456"), tree)


def test_another_epoch_is_refused(tmp_path: Path) -> None:
    tree = SourceTree("git", tmp_path, "abc123", "2.5.1", False, {}, 1795780808, "git commit")
    check_epoch(Recorded("m.json", epoch=1795780808), tree)
    check_epoch(Recorded("m.json"), tree)  # a manifest before the epoch was recorded
    with pytest.raises(SourceError, match=r"SOURCE_DATE_EPOCH is 1795780808 .*records 1744368318"):
        check_epoch(Recorded("m.json", epoch=1744368318), tree)


def _first_build(tmp_path: Path) -> Path:
    cli = {**CLI, "source": f"path:{_tree(tmp_path)}", "output_dir": str(tmp_path / "dist")}
    resolved = resolve_spec(cli=cli, env={"TORCHSMITH_PYTHON": "3.11"})
    plan = resolve(resolved, kb.load(), ci_host())
    options = BuildOptions(
        tmp_path / "cache", tmp_path / "dist", verify=False, request=resolved.recorded()
    )
    result = run_build(plan, options, RecordingExecutor(), Quiet(), ci_host())
    assert result.manifest["request"] == resolved.recorded()
    return result.manifest_paths[0]


def test_rebuild_runs_the_recorded_plan_through_the_pipeline_in_a_new_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = _first_build(tmp_path)
    monkeypatch.setattr(rebuild_run, "make_executor", lambda backend, env: RecordingExecutor())
    req = rebuild_run.RebuildRequest(
        manifest, tmp_path / "again", tmp_path / "again" / "dist", verify=False
    )
    done = rebuild_run.rebuild(req, ci_host(), {}, RecordingExecutor(), reporter=Quiet(), diff=None)
    assert done.result.workspace.parent == tmp_path / "again" / "builds"
    [wheel] = done.wheels
    assert wheel.new is not None and Path(wheel.new).parent == tmp_path / "again" / "dist"
    assert wheel.identical and done.identical and wheel.basis == "sha256"
    same = rebuild_run.RebuildRequest(manifest, tmp_path / "cache", tmp_path / "d2")
    with pytest.raises(UsageError, match="holds the recorded build's workspace"):
        rebuild_run.rebuild(same, ci_host(), {}, RecordingExecutor(), reporter=Quiet(), diff=None)


def test_the_command_names_a_manifest_it_cannot_rebuild(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from torchsmith.cli import main

    old = tmp_path / "old.manifest.json"
    old.write_text(json.dumps({"plan": {}, "kind": "wheel"}))
    assert main(["rebuild", str(old), "--cache-root", str(tmp_path / "new")]) == 2
    assert "no recorded request" in capsys.readouterr().err
    assert main(["rebuild", str(tmp_path / "none.json"), "--cache-root", str(tmp_path)]) == 2
