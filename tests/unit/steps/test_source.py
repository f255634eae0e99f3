"""Steps ``fetch`` and ``copy``: the user's tree is never modified; the build runs in the
workspace's own copy, made once."""

from __future__ import annotations

from pathlib import Path

from tests.unit.steps.conftest import Rig, make_rig
from torchsmith.steps import source


def test_fetch_then_copy_builds_in_the_workspace_copy(rig: Rig) -> None:
    source.run_fetch(rig.ctx, rig.state)
    assert rig.state.fetched is not None and rig.state.fetched.version == "2.5.1"
    source.run_copy(rig.ctx, rig.state)
    assert rig.state.tree == rig.ctx.workspace.src
    assert (rig.state.tree / "CMakeLists.txt").read_text() == "project(torch)\n"
    (rig.state.tree / "CMakeLists.txt").write_text("changed by a fix\n")
    assert (rig.user_tree / "CMakeLists.txt").read_text() == "project(torch)\n"


def test_the_copy_is_made_once(rig: Rig) -> None:
    source.run_fetch(rig.ctx, rig.state)
    source.run_copy(rig.ctx, rig.state)
    marker = rig.ctx.workspace.src / "built-object.o"
    marker.write_text("kept")
    source.run_copy(rig.ctx, rig.state)
    assert marker.read_text() == "kept"
    assert sum(line.startswith("start copy") for line in rig.reporter.lines) == 1


def test_in_place_plans_no_copy_and_builds_in_the_tree(tmp_path: Path) -> None:
    rig = make_rig(tmp_path, targets=("c10",), in_place=True)
    assert "copy" not in [s.name for s in rig.ctx.plan.steps]
    source.run_fetch(rig.ctx, rig.state)
    assert (
        rig.state.need_tree() == rig.user_tree.resolve() or rig.state.need_tree() == rig.user_tree
    )


def test_the_epoch_is_resolved_once_and_a_resumed_build_uses_the_recorded_one(rig: Rig) -> None:
    """Issue 29: the fetch step records the epoch with the source (a path tree: the plan's
    number); the same command again takes the workspace's record for the same tree."""
    source.run_fetch(rig.ctx, rig.state)
    fetched = rig.state.need_fetched()
    assert fetched.epoch == int(rig.ctx.plan.env_dict()["SOURCE_DATE_EPOCH"])
    assert fetched.epoch_record() == {"epoch": fetched.epoch, "epoch_from": fetched.epoch_from}
    recorded = rig.ctx.workspace.read_marker(source.EPOCH_MARKER)
    assert recorded == {"identity": fetched.identity, **fetched.epoch_record()}
    rig.ctx.workspace.mark_done(source.EPOCH_MARKER, {**recorded, "epoch": 1744368318})
    source.run_fetch(rig.ctx, rig.state)
    assert rig.state.need_fetched().epoch == 1744368318  # the earlier run's, not resolved again
