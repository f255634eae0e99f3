"""Step ``environment``: the workspace venv from the tree's own build requirements, made once."""

from __future__ import annotations

from tests.unit.steps.conftest import Rig
from torchsmith.steps import environment, source


def test_the_venv_is_made_once_with_the_trees_requirements(rig: Rig) -> None:
    source.run_fetch(rig.ctx, rig.state)
    source.run_copy(rig.ctx, rig.state)
    (rig.state.need_tree() / "requirements.txt").write_text("pyyaml\ntyping-extensions\n")
    environment.run(rig.ctx, rig.state)
    pip = [a for a in rig.executor.ran if "pip" in a and "install" in a]
    assert len(pip) == 1 and {"pyyaml", "typing-extensions", "wheel"} <= set(pip[0])
    benv = rig.state.need_benv()
    assert benv.env["MAX_JOBS"] == str(rig.ctx.plan.max_jobs.value)
    assert benv.env["VIRTUAL_ENV"] == str(rig.ctx.workspace.venv)
    environment.run(rig.ctx, rig.state)  # resumed: nothing is installed again
    assert len([a for a in rig.executor.ran if "pip" in a and "install" in a]) == 1
