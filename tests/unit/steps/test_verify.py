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
