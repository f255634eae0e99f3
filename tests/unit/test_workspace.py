"""Workspace rules: one dir per plan hash, reuse when the info matches, clean with a reason when
it does not, never delete a directory torchsmith did not create."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from torchsmith.cache_root import default_cache_root
from torchsmith.errors import HostError, UsageError
from torchsmith.plan_model import BuildPlan, EnvSetting
from torchsmith.workspace import (
    INFO_NAME,
    MARKER,
    check_cache_root,
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
    ws.release()
    again = prepare_workspace(tmp_path, plan, TOOLS, say)  # type: ignore[arg-type]
    assert (again.root / "src").is_dir() and again.is_done("fixes")
    assert said[-1] == f"resuming in {ws.root}"


def test_changed_tools_clean_the_dir_with_a_reason(tmp_path: Path, plan: BuildPlan) -> None:
    said, say = _said()
    ws = prepare_workspace(tmp_path, plan, TOOLS, say)  # type: ignore[arg-type]
    (ws.root / "src").mkdir()
    ws.release()
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
    assert sorted(p.name for p in foreign.iterdir()) == ["precious.txt"]  # no lock file left


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
    ws.release()
    again = prepare_workspace(tmp_path, plan, TOOLS, lambda _: None)  # a resumed run
    assert again.add_time("compile", 30.0) == {"compile": 90.0}
    assert again.timings() == {"compile": 90.0}


def test_a_second_run_of_the_plan_is_refused_naming_the_holder(
    tmp_path: Path, plan: BuildPlan
) -> None:
    ws = prepare_workspace(tmp_path, plan, TOOLS, lambda _: None)
    (ws.root / "src").mkdir()
    with pytest.raises(HostError, match=rf"in use by another torchsmith run \(pid {os.getpid()}\)"):
        prepare_workspace(tmp_path, plan, TOOLS, lambda _: None, wait_s=0.2)
    assert (ws.root / "src").is_dir()  # the holder's files are untouched
    ws.release()
    again = prepare_workspace(tmp_path, plan, TOOLS, lambda _: None, wait_s=0.2)
    assert again.lock is not None and again.lock.held


def test_a_lock_file_left_by_a_dead_process_does_not_block(tmp_path: Path, plan: BuildPlan) -> None:
    root = tmp_path / "builds" / plan.plan_hash()
    root.mkdir(parents=True)
    (root / ".lock").write_text("999999999\n")  # a killed run: the kernel dropped its flock
    ws = prepare_workspace(tmp_path, plan, TOOLS, lambda _: None, wait_s=0.2)
    assert (root / ".lock").read_text() == f"{os.getpid()}\n"
    assert read_info(ws.root) is not None


def test_plan_json_has_no_credentials_and_the_hash_ignores_them(
    tmp_path: Path, plan: BuildPlan
) -> None:
    def with_url(url: str) -> BuildPlan:
        source = plan.source.model_copy(update={"kind": "tarball", "location": url, "ref": url})
        return plan.model_copy(update={"source": source})

    secret = with_url("https://alice:CANARY-pw@h/t.tgz?X-Amz-Signature=CANARY-sig")
    rotated = with_url("https://alice:other@h/t.tgz?X-Amz-Signature=other")
    assert secret.plan_hash() == rotated.plan_hash()
    assert secret.plan_hash() != with_url("https://h/other.tgz").plan_hash()
    ws = prepare_workspace(tmp_path, secret, TOOLS, lambda _: None)
    stored = (ws.root / "plan.json").read_text()
    assert "CANARY" not in stored
    assert "https://***@h/t.tgz?X-Amz-Signature=***" in stored


def test_a_new_cache_root_is_private(tmp_path: Path) -> None:
    root = check_cache_root(tmp_path / "cache")
    assert stat.S_IMODE(root.stat().st_mode) == 0o700


def test_root_refuses_a_cache_root_others_can_write(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(HostError, match="mode drwxrwxrwx") as caught:
        check_cache_root(shared, euid=0)
    assert "chmod go-w" in caught.value.hint
    shared.chmod(0o700)
    assert check_cache_root(shared, euid=os.stat(shared).st_uid) == shared


def test_root_refuses_a_cache_root_another_user_owns(tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o755)
    if os.geteuid() == 0:
        os.chown(theirs, 65534, 65534)
    with pytest.raises(HostError, match="owned by uid"):
        check_cache_root(theirs, euid=0)


@pytest.mark.parametrize("value", ["relative/path", "", " ", "./c"])
def test_a_relative_or_blank_cache_root_variable_is_refused(value: str) -> None:
    """Trial E03: TORCHSMITH_CACHE_ROOT=relative/path was taken against the working directory
    without a word (another cache in every directory)."""
    with pytest.raises(UsageError, match=r"TORCHSMITH_CACHE_ROOT=.* is not an absolute path"):
        default_cache_root({"TORCHSMITH_CACHE_ROOT": value})


def test_cache_root_variable_absolute_home_or_none() -> None:
    assert default_cache_root({"TORCHSMITH_CACHE_ROOT": "/x/c"}) == Path("/x/c")
    assert default_cache_root({"TORCHSMITH_CACHE_ROOT": "~/c"}) == Path.home() / "c"
    home = Path.home() / ".cache" / "torchsmith"
    assert default_cache_root({"TORCHSMITH_CACHE_ROOT": "none"}) == home
    assert default_cache_root({"XDG_CACHE_HOME": "rel"}) == home  # XDG: relative is ignored
