"""The registry's companion entries: every step a companion is planned with has its own
implementation; the pipeline hands a step with a subject to it (with the subject), records its
label, and a failure names the companion, its step and the step to resume at."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.steps.companion.rig import companion_rig, one_run
from torchsmith.errors import BuildError, InternalError, ToolError
from torchsmith.steps import companion
from torchsmith.steps.context import BuildContext
from torchsmith.steps.pipeline import StepFn, execute
from torchsmith.steps.state import BuildState


def test_every_planned_companion_step_has_its_implementation() -> None:
    plan = one_run(outputs=("wheel", "conda"))
    planned = {s.name for s in plan.steps if s.subject is not None}
    assert planned == {"environment", "fetch", "compile", "repair", "verify", "publish", "conda"}
    for name in planned:
        assert companion.STEPS[name].__name__ != "refuse", name


def test_a_step_no_companion_has_is_an_internal_error(tmp_path: Path) -> None:
    rig = companion_rig(tmp_path)
    with pytest.raises(InternalError, match="'configure' step for companion torchvision"):
        companion.STEPS["configure"](rig.ctx, rig.state, "torchvision")


def test_the_pipeline_hands_subject_steps_to_the_companion_entries(tmp_path: Path) -> None:
    rig = companion_rig(tmp_path)
    seen: list[str] = []

    def torch_step(name: str) -> StepFn:
        return lambda ctx, state: seen.append(name)

    def comp_step(name: str) -> companion.SubjectStepFn:
        return lambda ctx, state, subject: seen.append(f"{subject}:{name}")

    names = {s.name for s in rig.ctx.plan.steps}
    execute(rig.ctx, rig.state, {n: torch_step(n) for n in names}, {n: comp_step(n) for n in names})
    kinds = ["environment", "fetch", "compile", "repair", "verify", "publish"]
    assert seen[seen.index("publish") + 1 :] == [*(f"torchvision:{k}" for k in kinds), "attest"]
    assert rig.state.executed == [s.label for s in rig.ctx.plan.steps]


def test_a_failure_names_the_companion_its_step_and_where_to_resume(tmp_path: Path) -> None:
    rig = companion_rig(tmp_path)
    [step] = [s for s in rig.ctx.plan.steps if s.label == "torchvision-compile"]

    def fails(ctx: BuildContext, state: BuildState, subject: str) -> None:
        raise ToolError("pip wheel failed", log_path=str(ctx.log("torchvision-compile")))

    with pytest.raises(BuildError) as info:
        companion.run_step(rig.ctx, rig.state, step, {"compile": fails})
    said = info.value.message + " " + info.value.hint
    assert "companion torchvision 0.14.1 failed in step torchvision-compile" in said
    assert "resumes at torchvision-compile" in said and "torchvision-compile.log" in said
