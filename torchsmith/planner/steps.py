"""The ordered steps of a build, derived from the plan's decisions."""

from __future__ import annotations

from torchsmith.plan_model import CompanionPlan, PlannedFix, PlanStep, SourcePlan


def plan_steps(
    source: SourcePlan,
    *,
    cuda: str | None,
    toolkit: str | None,
    fixes: list[PlannedFix],
    targets: list[str],
    companions: list[CompanionPlan],
    outputs: list[str],
    repair: str | None,
) -> list[PlanStep]:
    steps = [PlanStep(name="fetch", what=f"{source.kind}: {source.location} {source.ref}".strip())]
    if source.kind == "git":
        steps.append(PlanStep(name="submodules", what="git submodule update --init --recursive"))
    if cuda is not None:
        steps.append(PlanStep(name="toolchain", what=f"CUDA {cuda} toolkit from {toolkit}"))
    if fixes:
        steps.append(PlanStep(name="fixes", what=", ".join(f.id for f in fixes)))
    steps += [
        PlanStep(name="environment", what="isolated Python env with the tree's build requirements"),
        PlanStep(name="configure", what="CMake configure (setup.py --cmake-only or cmake)"),
        PlanStep(name="codegen", what="ATen / autograd code generation"),
    ]
    if targets:
        steps.append(PlanStep(name="compile", what=f"only CMake targets: {', '.join(targets)}"))
        steps.append(PlanStep(name="publish", what="manifest of the partial build"))
        return steps
    steps.append(PlanStep(name="compile", what="every target, ninja"))
    steps.append(PlanStep(name="package", what="torch wheel"))
    if repair:
        steps.append(PlanStep(name="repair", what=repair))
    steps.append(PlanStep(name="verify", what="inspect the wheel against this plan; smoke tests"))
    steps += [PlanStep(name="companion", what=f"{c.name} {c.version}") for c in companions]
    steps.append(PlanStep(name="publish", what=f"{', '.join(outputs)} + manifest, atomically"))
    return steps
