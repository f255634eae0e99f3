"""Step ``toolchain``: planned only for CUDA builds; a CPU plan's environment passes through."""

from __future__ import annotations

from tests.unit.steps.conftest import Rig
from torchsmith.steps import toolchain


def test_cpu_plans_have_no_toolchain_step_and_provision_passes_the_env_through(rig: Rig) -> None:
    assert "toolchain" not in [s.name for s in rig.ctx.plan.steps]
    toolchain.run(rig.ctx, rig.state)
    assert rig.state.toolkit is not None and rig.state.toolkit.record is None
    assert rig.state.build_env_base() == rig.state.base_env
    assert toolchain.toolkit_root(rig.state.toolkit) is None
