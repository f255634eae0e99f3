"""Issue 28 item 9: a build's closing doctor warnings leave out features the plan itself turned
off, and CUDA features on a CPU build (a --cpu build ended with cuDNN/MAGMA warnings). The
logs are recorded real configure output (tests/fixtures/doctor, README there)."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.unit.steps.conftest import Rig, make_plan
from torchsmith.doctor import warnings_that_changed_result
from torchsmith.steps.outputs import result_warnings, warning_applies

FIXTURES = Path(__file__).parents[2] / "fixtures" / "doctor"


def test_cuda_feature_warnings_do_not_apply_to_a_cpu_build(tmp_path: Path) -> None:
    plan = make_plan(tmp_path)
    assert plan.cuda.value is None
    for rule in ("warn-cudnn-not-found", "warn-magma-not-found", "warn-cuda-not-found"):
        assert not warning_applies(rule, plan)


def test_a_feature_turned_off_by_the_plan_is_not_warned_about(tmp_path: Path) -> None:
    plan = make_plan(tmp_path)
    off = plan.features["mkl"].model_copy(update={"value": False})
    assert not warning_applies(
        "warn-mkl-not-found", plan.model_copy(update={"features": {**plan.features, "mkl": off}})
    )
    assert warning_applies("warn-mkl-not-found", plan)  # auto: MKL was wanted
    assert warning_applies("some-rule-without-a-feature", plan)


def test_the_cpu_builds_closing_warnings_leave_magma_out(rig: Rig) -> None:
    log = rig.ctx.log("configure")
    log.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURES / "warn-magma-not-found.log", log)
    assert warnings_that_changed_result(log)  # the log does warn
    assert not any("MAGMA" in w for w in result_warnings(rig.ctx))
