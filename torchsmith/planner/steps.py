"""The ordered steps of a build, derived from the plan's decisions. The pipeline executes exactly
these, in this order (:func:`torchsmith.steps.pipeline.run_build`)."""

from __future__ import annotations

from dataclasses import dataclass

from torchsmith.plan_model import PlannedFix, PlanStep, SourcePlan


@dataclass(frozen=True)
class StepInputs:
    """The decisions the step list depends on."""

    source: SourcePlan
    cuda: str | None
    toolkit: str | None
    fixes: list[PlannedFix]
    targets: list[str]
    outputs: list[str]
    install_python: str | None = None
    pinned: str | None = None  # the commit a git fetch insists on (planner.versions)


def _fetch(source: SourcePlan, pinned: str | None) -> list[PlanStep]:
    what = f"{source.kind}: {source.location} {source.ref}".strip()
    if source.kind == "git":
        what += " (with its submodules)"
        what += (
            f", must be commit {pinned}"
            if pinned
            else ", NOT PINNED: no commit recorded, the commit fetched is named and recorded"
        )
    steps = [PlanStep(name="fetch", what=what)]
    if not source.in_place:
        steps.append(PlanStep(name="copy", what="the workspace's own copy of the tree (made once)"))
    return steps


def _prepare(inputs: StepInputs) -> list[PlanStep]:
    steps = []
    if inputs.cuda is not None:
        steps.append(PlanStep(name="toolchain", what=f"CUDA {inputs.cuda} from {inputs.toolkit}"))
    steps.append(
        PlanStep(name="environment", what="isolated Python env with the tree's build requirements")
    )
    if inputs.fixes:
        # after the environment: fix commands (e.g. `pip install "numpy<2"`) act on it
        steps.append(PlanStep(name="fixes", what=", ".join(f.id for f in inputs.fixes)))
    steps.append(
        PlanStep(name="configure", what="CMake configure, with ATen/autograd code generation")
    )
    return steps


def _finish(inputs: StepInputs) -> list[PlanStep]:
    if inputs.targets:
        return [
            PlanStep(name="compile", what=f"only CMake targets: {', '.join(inputs.targets)}"),
            PlanStep(name="publish", what="manifest of the partial build"),
        ]
    steps = [
        PlanStep(name="compile", what="every target, ninja"),
        PlanStep(name="package", what="torch wheel"),
        PlanStep(name="repair", what=_repair_what(inputs.cuda)),
        PlanStep(name="verify", what="inspect the wheel against this plan; smoke tests"),
        PlanStep(name="publish", what=f"{', '.join(inputs.outputs)} + manifest, atomically"),
    ]
    if "conda" in inputs.outputs:
        steps.append(
            PlanStep(
                name="conda", what="conda package of the wheel into OUTPUT/conda-channel, indexed"
            )
        )
    if "install" in inputs.outputs:
        where = inputs.install_python or "(no interpreter given)"
        steps.append(
            PlanStep(name="install", what=f"pip install the wheel into {where}; smoke tests there")
        )
    return steps


def _repair_what(cuda: str | None) -> str:
    kept = "the driver" if cuda is None else "the driver and CUDA libraries"
    return f"auditwheel: RPATHs $ORIGIN-relative, other libraries grafted, {kept} left external"


def plan_steps(inputs: StepInputs) -> list[PlanStep]:
    return [*_fetch(inputs.source, inputs.pinned), *_prepare(inputs), *_finish(inputs)]


def attest_step(wheels: list[str], sign_key: str | None) -> PlanStep:
    """The last step of a build with wheels: each one's SBOM and provenance beside it."""
    signed = f", signed with {sign_key} (DSSE, Ed25519)" if sign_key else ", unsigned"
    return PlanStep(
        name="attest",
        what=f"CycloneDX SBOM + in-toto SLSA provenance beside each wheel ({', '.join(wheels)})"
        + signed,
    )
