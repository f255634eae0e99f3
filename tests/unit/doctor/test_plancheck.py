"""`doctor --env` with a plan checks that plan's needs (new-user trial §3 #10, #11): its
compiler, not the host default; a container engine that answers; cuDNN/NCCL/MKL/magma it asks
for; the system toolkit it expects; a build directory that does not exist."""

from __future__ import annotations

from pathlib import Path

from tests.unit.doctor.test_envcheck import GCC12, GCC14, KB, _facts
from torchsmith.doctor.envcheck import check_all, check_disk_path, check_host_compiler
from torchsmith.doctor.envprobe import disk_path_state
from torchsmith.doctor.plancheck import PlanFacts, PlanNeeds, check_plan
from torchsmith.host.model import CudaToolkit
from torchsmith.verify.expect import load_plan

PLANS = Path(__file__).resolve().parents[2] / "fixtures" / "inspect" / "plans"
CUDA124 = CudaToolkit(root="/usr/local/cuda-12.4", nvcc="/x/nvcc", version="12.4", origin="PATH")


def _ids(problems: list) -> dict[str, str]:  # type: ignore[type-arg]
    return {p.id: p.severity for p in problems}


def test_the_plans_compiler_is_checked_not_the_default() -> None:
    """The host default is GCC 14 (too new for CUDA 12.4); the plan chose gcc-12."""
    facts = _facts(cuda_toolkits=[CUDA124], compilers=[GCC14, GCC12]).model_copy(
        update={"compiler": "gcc-12", "target_cuda": "12.4"}
    )
    assert check_host_compiler(facts, KB) == []
    missing = facts.model_copy(update={"compiler": "gcc-11"})
    needs = PlanNeeds(compiler="gcc-11", cuda="12.4", toolkit="pypi")
    assert _ids(check_plan(missing, PlanFacts(needs=needs))) == {"plan-compiler-missing": "error"}


def test_a_container_plan_needs_an_engine_that_answers() -> None:
    why = "`docker info` exited with status 1: Cannot connect to the Docker daemon"
    needs = PlanNeeds(backend="docker", compiler="gcc-6", cuda="9.0", mkl=True)
    facts = _facts(compilers=[GCC14])
    [problem] = check_plan(facts, PlanFacts(needs=needs, engine_error=why))
    assert problem.id == "plan-engine-not-answering" and "Cannot connect" in problem.what
    assert check_plan(facts, PlanFacts(needs=needs, engine_answer="28.2.2")) == []
    # the image's compiler is the build's: the host's GCC 14 is not checked against CUDA 9.0
    assert "nvcc-host-gcc-too-new" not in _ids(check_all(facts, KB, in_container=True))


def test_libraries_the_plan_asks_for() -> None:
    needs = PlanNeeds(cuda="11.8", compiler="gcc-12", cudnn=True, system_nccl=True, mkl=True)
    needs = needs.model_copy(update={"magma": True})
    facts = _facts(compilers=[GCC12])
    assert _ids(check_plan(facts, PlanFacts(needs=needs))) == {
        "plan-cudnn-missing": "warning",
        "plan-nccl-missing": "error",
        "plan-mkl-missing": "error",
        "plan-magma-missing": "error",
    }
    found = PlanFacts(needs=needs, libraries={"mkl": "ldconfig -p", "magma": "/usr/local/magma"})
    having = _facts(compilers=[GCC12], cudnn_versions=["8.9.7"], nccl_versions=["2.18.1"])
    assert check_plan(having, found) == []


def test_a_plan_on_the_system_toolkit_needs_it_here() -> None:
    needs = PlanNeeds(cuda="11.8", toolkit="system", compiler="gcc-12")
    facts = _facts(compilers=[GCC12], cuda_toolkits=[CUDA124])
    assert _ids(check_plan(facts, PlanFacts(needs=needs))) == {"plan-toolkit-missing": "error"}
    other = needs.model_copy(update={"toolkit": "pypi"})
    assert check_plan(facts, PlanFacts(needs=other)) == []


def test_needs_of_a_recorded_plan() -> None:
    needs = PlanNeeds.of(load_plan(PLANS / "plan-2.14.1-cu130.json"))
    assert (needs.backend, needs.cuda, needs.in_container) == ("local", "13.0", False)
    assert needs.cudnn


def test_build_directory_that_does_not_exist(tmp_path: Path) -> None:
    """`doctor --env --disk /nonexistent` said "no problem found"."""
    problem, creatable = disk_path_state(tmp_path / "new" / "dir")
    assert creatable and problem is not None and "does not exist" in problem
    facts = _facts().model_copy(update={"disk_path_problem": problem})
    assert _ids(check_disk_path(facts)) == {"disk-path": "warning"}
    problem, creatable = disk_path_state(Path("/proc/nope"))
    assert not creatable and problem is not None and "cannot be made in /proc" in problem
    bad = _facts(disk_free_gib=0.0).model_copy(
        update={"disk_path_problem": problem, "disk_path_creatable": False}
    )
    assert _ids(check_all(bad, None)) == {"disk-path": "error"}  # not "0.0 GiB free"
    assert disk_path_state(tmp_path) == (None, True)
