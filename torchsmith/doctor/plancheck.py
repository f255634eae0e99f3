"""``doctor --env`` with a plan: check what *that* plan needs, not the host's defaults — its
compiler, its CUDA toolkit (when it expects the system's), a container engine that answers
(for a container backend), the cuDNN/NCCL/MKL/magma it asks for, and the directory it writes.
The facts are gathered by :mod:`torchsmith.doctor.envprobe`; this module only judges them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from torchsmith.doctor.envcheck import NOTES, EnvFacts, EnvProblem
from torchsmith.plan_model import BuildPlan

CONTAINER_BACKENDS = ("docker", "apptainer")
Severity = Literal["error", "warning"]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PlanNeeds(_Frozen):
    """The parts of a plan the machine has to supply."""

    backend: str = "local"
    compiler: str | None = None
    cuda: str | None = None
    toolkit: str | None = None
    cudnn: bool = False
    system_nccl: bool = False
    mkl: bool = False
    magma: bool = False

    @classmethod
    def of(cls, plan: BuildPlan) -> PlanNeeds:
        features = {name: d.value for name, d in plan.features.items()}
        cuda = str(plan.cuda.value) if plan.cuda.value else None
        return cls(
            backend=str(plan.backend),
            compiler=str(plan.compiler.value) if plan.compiler.value else None,
            cuda=cuda,
            toolkit=str(plan.toolkit.value) if plan.toolkit.value else None,
            cudnn=cuda is not None and features.get("cudnn") is not False,
            system_nccl=cuda is not None and features.get("system_nccl") is True,
            mkl=features.get("mkl") is True,
            magma=cuda is not None and features.get("magma") is True,
        )

    @property
    def in_container(self) -> bool:
        return self.backend in CONTAINER_BACKENDS


class PlanFacts(_Frozen):
    """What the machine says about the plan's needs (gathered by envprobe)."""

    needs: PlanNeeds
    engine_answer: str | None = Field(None, description="the engine's server version, if any")
    engine_error: str | None = Field(None, description="why the engine did not answer")
    libraries: dict[str, str] = Field(
        default_factory=dict, description="'mkl'/'magma' -> where it was found"
    )


def _problem(pid: str, severity: Severity, what: str, fix: str, *evidence: str) -> EnvProblem:
    return EnvProblem(
        id=pid, severity=severity, what=what, fix=fix, evidence=evidence, source=NOTES
    )


def check_engine(plan: PlanFacts) -> list[EnvProblem]:
    needs = plan.needs
    if not needs.in_container or plan.engine_answer:
        return []
    return [
        _problem(
            "plan-engine-not-answering",
            "error",
            f"the plan builds in a {needs.backend} container, and {needs.backend} does not "
            f"answer: {plan.engine_error or 'no answer'}",
            f"start the {needs.backend} daemon (or install {needs.backend}), or plan with "
            "--backend local",
        )
    ]


def check_compiler(facts: EnvFacts, needs: PlanNeeds) -> list[EnvProblem]:
    labels = {c.label: c for c in facts.host.compilers}
    if needs.in_container or not needs.compiler or needs.compiler in labels:
        return []
    return [
        _problem(
            "plan-compiler-missing",
            "error",
            f"the plan's compiler {needs.compiler} is not on this machine",
            f"install {needs.compiler}, or plan again (torchsmith plan picks from what is here)",
            "compilers here: " + (", ".join(sorted(labels)) or "none"),
        )
    ]


def check_toolkit(facts: EnvFacts, needs: PlanNeeds) -> list[EnvProblem]:
    """A plan that takes the system's toolkit needs one of its CUDA version here; the other
    providers are fetched by the build itself."""
    if needs.in_container or needs.toolkit != "system" or not needs.cuda:
        return []
    want = ".".join(needs.cuda.split(".")[:2])
    here = [t for t in facts.host.cuda_toolkits if ".".join(t.version.split(".")[:2]) == want]
    if here:
        return []
    found = ", ".join(f"{t.version} ({t.root})" for t in facts.host.cuda_toolkits) or "none"
    return [
        _problem(
            "plan-toolkit-missing",
            "error",
            f"the plan uses the system's CUDA {want} toolkit, and there is none here",
            f"install CUDA {want}, or plan again to let torchsmith fetch one",
            f"toolkits here: {found}",
        )
    ]


def check_libraries(facts: EnvFacts, plan: PlanFacts) -> list[EnvProblem]:
    """cuDNN (else torch builds without it, silently), a system NCCL when asked for one, and
    MKL / magma when the plan turns them on."""
    needs = plan.needs
    if needs.in_container:
        return []
    problems: list[EnvProblem] = []
    if needs.cudnn and not facts.host.cudnn_versions:
        problems.append(_missing("cudnn", "warning", "torch then builds without cuDNN"))
    if needs.system_nccl and not facts.host.nccl_versions:
        problems.append(_missing("nccl", "error", "the plan asks for the system's NCCL"))
    for name, why in (("mkl", "the plan sets BLAS=MKL"), ("magma", "the plan sets USE_MAGMA=1")):
        if getattr(needs, name) and name not in plan.libraries:
            problems.append(_missing(name, "error", why))
    return problems


_FIX = {
    "cudnn": "install cuDNN for this CUDA (or pip nvidia-cudnn-cu<major>), or plan --disable cudnn",
    "nccl": "install NCCL (libnccl-dev), or plan without --enable system_nccl",
    "mkl": "install MKL (pip mkl-static mkl-include into the build's Python, or Intel oneAPI), "
    "or plan --disable mkl",
    "magma": "install magma for this CUDA (e.g. /usr/local/magma), or plan --disable magma",
}


def _missing(name: str, severity: Severity, why: str) -> EnvProblem:
    return _problem(
        f"plan-{name}-missing", severity, f"no {name} found on this machine; {why}", _FIX[name]
    )


def check_plan(facts: EnvFacts, plan: PlanFacts) -> list[EnvProblem]:
    """Every plan-specific check."""
    return [
        *check_engine(plan),
        *check_compiler(facts, plan.needs),
        *check_toolkit(facts, plan.needs),
        *check_libraries(facts, plan),
    ]
