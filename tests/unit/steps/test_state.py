"""What steps share: a step that runs before the one it depends on is an internal error."""

from __future__ import annotations

import pytest

from tests.unit.steps.conftest import Rig
from torchsmith.errors import InternalError
from torchsmith.steps.state import Toolkit


def test_needs_name_the_missing_step(rig: Rig) -> None:
    for need, step in (
        (rig.state.need_fetched, "fetch"),
        (rig.state.need_benv, "environment"),
        (rig.state.need_compiled, "compile"),
        (rig.state.need_wheel, "package"),
    ):
        with pytest.raises(InternalError, match=f"before the '{step}' step ran"):
            need()


def test_toolkit_env_replaces_the_base_env(rig: Rig) -> None:
    rig.state.toolkit = Toolkit({"CUDA_HOME": "/cuda"}, None)
    assert rig.state.build_env_base() == {"CUDA_HOME": "/cuda"}
