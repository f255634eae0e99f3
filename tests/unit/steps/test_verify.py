"""Step ``verify``: --no-verify keeps the step in the plan and says it was skipped."""

from __future__ import annotations

from pathlib import Path

from tests.unit.steps.conftest import make_rig
from torchsmith.steps import verify


def test_no_verify_is_said_not_silent(tmp_path: Path) -> None:
    rig = make_rig(tmp_path, verify=False)
    assert "verify" in [s.name for s in rig.ctx.plan.steps]
    verify.run(rig.ctx, rig.state)
    assert rig.state.verified is None
    assert any("skipped (--no-verify)" in line for line in rig.reporter.lines)


def test_the_verifiers_stages_are_told_inside_the_build_stage(tmp_path: Path) -> None:
    rig = make_rig(tmp_path)
    within = verify._Within(rig.reporter, "verify")
    within.stage_started("smoke", "a fresh venv")
    within.message("pip install torch-2.5.1.whl into it")
    within.stage_finished("smoke", 21.5)
    assert rig.reporter.lines[-3:] == [
        "verify: smoke — a fresh venv",
        "verify: pip install torch-2.5.1.whl into it",
        "verify: smoke done in 21.5 s",
    ]
