"""Step ``fixes``: each planned patch applied once to the build tree, recorded for resumes."""

from __future__ import annotations

from tests.unit.steps.conftest import Rig
from torchsmith.plan_model import PlannedFix
from torchsmith.steps import environment, fixes, source

FIX = PlannedFix(
    id="test-edit",
    title="an edit",
    action="patch",
    edits=[{"path": "CMakeLists.txt", "find": "project(torch)", "replace": "project(torch2)"}],
    explanation="why",
    source="https://example.invalid/source",
)


def test_a_patch_is_applied_once_and_recorded(rig: Rig) -> None:
    ctx = rig.ctx.__class__(
        rig.ctx.plan.model_copy(update={"fixes": [FIX]}),
        rig.ctx.workspace, rig.ctx.executor, rig.ctx.reporter, rig.ctx.options, rig.ctx.host,
    )  # fmt: skip
    for step in (source.run_fetch, source.run_copy, environment.run):
        step(ctx, rig.state)
    fixes.run(ctx, rig.state)
    tree = rig.state.need_tree()
    assert (tree / "CMakeLists.txt").read_text() == "project(torch2)\n"
    assert [f["id"] for f in rig.state.fixes] == ["test-edit"]
    fixes.run(ctx, rig.state)  # resumed: read from the workspace record
    assert [f["id"] for f in rig.state.fixes] == ["test-edit"]
    assert (rig.user_tree / "CMakeLists.txt").read_text() == "project(torch)\n"
