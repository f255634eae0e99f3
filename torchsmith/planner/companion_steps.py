"""A companion's own steps, each a :class:`PlanStep` with the companion as its subject, carried
out by the same step registry as torch's (:mod:`torchsmith.steps.companion`): environment (a
venv holding exactly its torch), fetch, compile (``pip wheel``: compile and package), repair,
verify, publish and, with ``--output conda``, conda. Pure."""

from __future__ import annotations

from torchsmith.plan_model import PlanStep
from torchsmith.plan_types import CompanionBuild, CompanionBuildPlan, TorchFacts
from torchsmith.redact import redact_url


def _torch(torch: TorchFacts) -> str:
    match torch.kind:
        case "build":
            return f"the torch wheel this build publishes (torch {torch.version}), --no-deps"
        case "wheel":
            return f"{torch.location} --no-deps (published into the output directory first)"
        case "python":
            return f"the torch of {torch.location}, seen read-only (never written to)"


def environment(plan: CompanionBuildPlan) -> str:
    return (
        f"venv of the torch's Python with {_torch(plan.torch)}, its runtime requirements and "
        "the build tools (made once per torch, shared by the companions)"
    )


def fetch(comp: CompanionBuild) -> str:
    own = comp.source
    if own is not None and own.kind == "git":
        mirror = f" through {redact_url(own.git_mirror)}" if own.git_mirror else ""
        pin = f"must be commit {own.commit}" if own.commit else "not pinned: the commit is recorded"
        return (
            f"git: {redact_url(own.location)} {own.ref}{mirror} (with its submodules), {pin} "
            f"(version.txt must say {comp.version})"
        )
    if comp.source is not None:
        where = redact_url(comp.source.location)
        return f"its own source {comp.source.kind}:{where} (version.txt must say {comp.version})"
    return (
        f"Debian {comp.suite} {comp.package} {comp.debian_version}: the orig tarball, checked "
        "against the signed Sources index"
    )


def compile_(plan: CompanionBuildPlan, comp: CompanionBuild) -> str:
    ops = f"CUDA ops for {plan.arch_list}" if plan.cuda else "CPU ops"
    return (
        f"pip wheel --no-build-isolation --no-deps: compile ({ops}, compiler cache, MAX_JOBS "
        f"{plan.max_jobs}) and package {comp.name} {comp.version}"
    )


def repair(plan: CompanionBuildPlan, comp: CompanionBuild) -> str:
    cuda = ", the CUDA libraries" if plan.cuda else ""
    own = ", ".join("lib" + p.value.split(".")[0].removesuffix("lib") for p in comp.system_packages)
    grafted = f"the system libraries it links ({own})" if own else "the system libraries it links"
    return (
        f"auditwheel: {grafted} grafted, RPATHs $ORIGIN-relative, torch's libraries{cuda} and the "
        "driver left external; the manylinux tag auditwheel measures"
    )


def verify(plan: CompanionBuildPlan, comp: CompanionBuild) -> str:
    code = f", GPU code for {plan.arch_list}" if plan.arch_list else ""
    return (
        f"Requires-Dist pins torch=={plan.torch.version}; links torch's libraries with its "
        f"C++ ABI{code}; no build-machine RPATH; smoke test in a fresh venv: {comp.smoke}"
    )


def publish(plan: CompanionBuildPlan, comp: CompanionBuild) -> str:
    manifest = "the torch build's manifest" if plan.torch.kind == "build" else "the manifest"
    return f"the {comp.name} wheel into the output directory, atomically; {manifest} gains it"


def steps_of(plan: CompanionBuildPlan, comp: CompanionBuild, conda: bool) -> list[PlanStep]:
    """One companion's steps, in order."""
    name = comp.name
    steps = [
        PlanStep(name="environment", subject=name, what=environment(plan)),
        PlanStep(name="fetch", subject=name, what=fetch(comp)),
        PlanStep(name="compile", subject=name, what=compile_(plan, comp)),
        PlanStep(name="repair", subject=name, what=repair(plan, comp)),
        PlanStep(name="verify", subject=name, what=verify(plan, comp)),
        PlanStep(name="publish", subject=name, what=publish(plan, comp)),
    ]
    if conda:
        what = f"conda package of the {name} wheel into OUTPUT/conda-channel, indexed"
        steps.append(PlanStep(name="conda", subject=name, what=what))
    return steps


def companion_steps(
    plan: CompanionBuildPlan, outputs: list[str], toolkit: str | None = None
) -> list[PlanStep]:
    """Every companion's steps, after a toolchain step when their CUDA ops need the toolkit
    and torch's own steps do not provision it (``toolkit``: its provider, for ``--against``)."""
    steps = []
    if plan.cuda is not None and toolkit is not None:
        tool = f"CUDA {plan.cuda} from {toolkit} (the companions' CUDA ops)"
        steps.append(PlanStep(name="toolchain", what=tool))
    for comp in plan.builds:
        steps += steps_of(plan, comp, "conda" in outputs)
    return steps
