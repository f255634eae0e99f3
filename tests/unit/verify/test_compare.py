"""verify's static checks on inspections recorded from real artifacts (tests/fixtures/inspect)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from torchsmith.commands.verify import verdict_table
from torchsmith.errors import UsageError, VerifyError
from torchsmith.inspect.model import Inspection
from torchsmith.plan_model import BuildPlan, Decision, EnvSetting
from torchsmith.verify import Verdict, verify_inspection
from torchsmith.verify.expect import arch_targets, from_plan, load_plan, plan_from_json
from torchsmith.verify.smoke import _parse

INSPECT = Path(__file__).resolve().parents[2] / "fixtures" / "inspect"


def _inspection(name: str) -> Inspection:
    return Inspection.model_validate_json((INSPECT / name).read_text())


def _plan(name: str, **changes: object) -> BuildPlan:
    plan = load_plan(INSPECT / "plans" / name)
    return plan.model_copy(update=changes)


def _decision(value: object) -> Decision:
    return Decision(value=value, origin="user", reason="test")


def _failed(checks: list) -> dict[str, str]:  # type: ignore[type-arg]
    return {c.name: c.detail for c in checks if c.ok is False and c.severity == "error"}


def _warned(checks: list) -> dict[str, str]:  # type: ignore[type-arg]
    return {c.name: c.actual for c in checks if c.ok is False and c.severity == "warning"}


def test_recorded_2_14_1_wheel_matches_its_plan() -> None:
    insp = _inspection("inspect-2.14.1-cu130-wheel.json")
    assert insp.sass == ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]
    assert insp.arch_list == insp.sass  # what get_arch_list() of that release returns
    assert _failed(verify_inspection(insp, _plan("plan-2.14.1-cu130.json"))) == {}


def test_recorded_2_11_on_h100_matches_its_plan() -> None:
    insp = _inspection("inspect-2.11.0-cu130.json")
    assert insp.sass == ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]
    assert insp.cross_check is not None and insp.cross_check.agrees
    assert _failed(verify_inspection(insp, _plan("plan-2.11.0-cu130.json"))) == {}


def test_recorded_cpu_wheel_matches_cpu_plan() -> None:
    insp = _inspection("inspect-2.13.0-cpu-wheel.json")
    assert insp.cuda is None and insp.sass == [] and insp.libraries
    assert all(link.mode == "none" for link in insp.linkage)
    assert _failed(verify_inspection(insp, _plan("plan-2.13.0-cpu.json"))) == {}


def test_wrong_arch_list_is_named() -> None:
    insp = _inspection("inspect-2.14.1-cu130-wheel.json")
    plan = _plan(
        "plan-2.14.1-cu130.json", archs=_decision(["7.5", "8.0", "8.9", "10.0", "12.0+PTX"])
    )
    failed = _failed(verify_inspection(insp, plan))
    assert failed["SASS archs"] == (
        "arch 8.9: asked for SASS, wheel has none; wheel has extra sm_86 sm_90"
    )
    assert failed["PTX archs"] == "arch 12.0: asked for PTX, wheel has none"
    assert "libtorch_cuda.so has extra sm_86 sm_90" in failed["archs of libtorch_cuda.so"]


def test_wrong_linking_is_named() -> None:
    insp = _inspection("inspect-2.14.1-cu130-wheel.json")
    linking = {
        "cuda": _decision("static"),
        "cudnn": _decision("pip-deps"),
        "nccl": _decision("static"),
    }
    failed = _failed(verify_inspection(insp, _plan("plan-2.14.1-cu130.json", linking=linking)))
    assert failed["linking cudart"].startswith("cudart: asked for static, artifact has pip-deps")
    assert "linking nccl" in failed and "linking cudnn" not in failed


def test_cpu_plan_against_cuda_wheel() -> None:
    insp = _inspection("inspect-2.14.1-cu130-wheel.json")
    failed = _failed(verify_inspection(insp, _plan("plan-2.14.1-cu130.json", cuda=_decision(None))))
    assert failed["CUDA"] == "asked for CUDA none (CPU), torch says 13.0"


def test_abi_mismatch() -> None:
    insp = _inspection("inspect-2.13.0-cpu-wheel.json")
    env = [EnvSetting(name="_GLIBCXX_USE_CXX11_ABI", value="0", reason="old ABI")]
    failed = _failed(verify_inspection(insp, _plan("plan-2.13.0-cpu.json", env=env)))
    assert failed["C++11 ABI"].startswith("asked for _GLIBCXX_USE_CXX11_ABI=0, artifact has 1")


def test_verdict_raises_naming_every_difference() -> None:
    insp = _inspection("inspect-2.14.1-cu130-wheel.json")
    plan = _plan("plan-2.14.1-cu130.json", archs=_decision(["8.6"]))
    verdict = Verdict(
        artifact="w.whl", checks=verify_inspection(insp, plan), smoke=[], inspection=insp
    )
    assert not verdict.passed
    with pytest.raises(VerifyError, match="wheel has extra sm_75 sm_80 sm_90 sm_100 sm_120"):
        verdict.raise_if_failed()


def test_extra_archs_not_in_the_plan_are_a_warning_not_a_failure() -> None:
    # the official 2.14.1 wheel builds some kernels for single targets (sm_90a, ...) on purpose
    insp = _inspection("inspect-2.14.1-cu130-wheel.json")
    checks = verify_inspection(insp, _plan("plan-2.14.1-cu130.json"))
    assert _warned(checks) == {
        "extra archs of libtorch_cuda.so": "sm_89 sm_90a sm_100a sm_103 sm_120a sm_121a"
    }
    verdict = Verdict(artifact="w.whl", checks=checks, smoke=[], inspection=insp)
    assert verdict.passed
    assert [c.name for c in verdict.warnings] == ["extra archs of libtorch_cuda.so"]
    verdict.raise_if_failed()
    # an extra arch the plan does name is not reported
    plan = _plan(
        "plan-2.14.1-cu130.json",
        archs=_decision(["7.5", "8.0", "8.6", "8.9", "9.0", "9.0a", "10.0", "12.0"]),
    )
    assert _warned(verify_inspection(insp, plan)) == {
        "extra archs of libtorch_cuda.so": "sm_100a sm_103 sm_120a sm_121a"
    }


def test_verdict_table_names_the_warning() -> None:
    insp = _inspection("inspect-2.14.1-cu130-wheel.json")
    checks = verify_inspection(insp, _plan("plan-2.14.1-cu130.json"))
    table = verdict_table(Verdict(artifact="w.whl", checks=checks, smoke=[], inspection=insp))
    console = Console(width=300, record=True, file=io.StringIO())
    console.print(table)
    row = next(
        ln for ln in console.export_text().splitlines() if "extra archs of libtorch_cuda.so" in ln
    )
    assert "warn" in row and "FAIL" not in row and "sm_90a" in row


def test_manifest_or_plan_json() -> None:
    manifest = json.loads((INSPECT / "plans" / "manifest-2.14.1-cu130.json").read_text())
    assert plan_from_json(manifest) == plan_from_json(manifest["plan"])
    with pytest.raises(UsageError, match="neither a build plan nor a manifest"):
        plan_from_json({"plan": {"torch": "2.5.1"}})


def test_arch_entries() -> None:
    assert arch_targets(["8.6", "9.0a", "10.0+PTX"]) == (
        ["sm_86", "sm_90a", "sm_100"],
        ["compute_100"],
    )
    with pytest.raises(UsageError):
        arch_targets(["sm86"])
    assert from_plan(_plan("plan-2.13.0-cpu.json")).sass == ()


def test_smoke_lines_recorded_on_h100() -> None:
    lines = tuple((INSPECT / "smoke-2.11.0-cu130.log").read_text().splitlines())
    checks = _parse(lines)
    assert [c.name for c in checks] == [
        "import",
        "cpu ops",
        "autograd",
        "cuda matmul",
        "cudnn conv",
        "nccl init",
        "cpp_extension jit",
    ]
    assert all(c.ok for c in checks)
