"""resolve(spec, kb, host) -> BuildPlan: pure, immutable, explained. No subprocess, no I/O."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from torchsmith.errors import PlanError
from torchsmith.host.model import HostFacts
from torchsmith.kb import KnowledgeBase
from torchsmith.plan_model import (
    BuildPlan,
    CompanionPlan,
    Decision,
    PlannedFix,
    PlanStep,
    SourcePlan,
)
from torchsmith.plan_types import CompanionBuildPlan, TorchFacts
from torchsmith.planner.archs import resolve_archs
from torchsmith.planner.buildenv import plan_env
from torchsmith.planner.cache import cluster_jobs, resolve_cache
from torchsmith.planner.companion_steps import companion_steps
from torchsmith.planner.companions import (
    against_python,
    against_source,
    built_torch,
    one_run_ok,
    plan_companion_builds,
    resolve_against,
)
from torchsmith.planner.context import Ctx, decide
from torchsmith.planner.environment import cmake_args
from torchsmith.planner.features import resolve_features, resolve_linking
from torchsmith.planner.fixes import gcc_refusal, resolve_fixes
from torchsmith.planner.resources import resolve_companion_disk, resolve_disk, resolve_jobs
from torchsmith.planner.steps import StepInputs, attest_step, plan_steps
from torchsmith.planner.support import PIPELINE, Capabilities, refuse_unsupported
from torchsmith.planner.toolchain import resolve_compiler, resolve_cuda, resolve_toolkit
from torchsmith.planner.versions import (
    pinned_commit,
    resolve_companions,
    resolve_python,
    resolve_source,
    resolve_torch,
    tag_of,
)
from torchsmith.spec import BuildSpec
from torchsmith.spec_sources import Origin, ResolvedSpec


def _frontend(ctx: Ctx) -> Decision[str]:
    rel = ctx.release
    if rel is None:
        return decide("pep517", "default", "unknown release")
    return decide(rel.frontend, "kb", f"torch {rel.torch} builds with {rel.frontend}")


def _fail(ctx: Ctx) -> PlanError:
    hint = "change the request as suggested; nothing was built"
    if ctx.warnings:
        hint += "\nnotes: " + "\n       ".join(ctx.warnings)
    return PlanError(ctx.problems, hint)


def _plan(ctx: Ctx, can: Capabilities, against: TorchFacts | None = None) -> BuildPlan:
    _against_inspected(ctx, against)
    torch = resolve_against(ctx, against) if against else resolve_torch(ctx)
    source = against_source(against) if against else resolve_source(ctx, torch.value)
    companions = resolve_companions(ctx)
    python = against_python(ctx, against) if against else resolve_python(ctx)
    cuda, cuda_info = resolve_cuda(ctx)
    toolkit = resolve_toolkit(ctx, cuda.value)
    compiler = resolve_compiler(ctx, cuda_info, gcc_refusal(ctx, cuda.value))
    archs = resolve_archs(ctx, cuda_info)
    arch_list = ";".join(archs.value)
    features = resolve_features(ctx, cuda.value)
    linking = resolve_linking(ctx, cuda.value, features)
    jobs = resolve_jobs(ctx, cuda.value)
    cache, cache_setup = resolve_cache(ctx, jobs[0].value)  # without the cluster's slots
    jobs = (cluster_jobs(ctx, jobs), jobs[1])
    fixes = resolve_fixes(ctx, cuda.value, compiler.value, python.value)
    env = plan_env(
        ctx,
        torch=torch.value,
        cuda=cuda.value,
        arch_list=arch_list,
        features=features,
        linking=linking,
        jobs=jobs,
        fixes=fixes,
    )
    made = (torch.value, python.value, jobs, arch_list if cuda.value else None)
    build = _companion_builds(ctx, can, against, companions, made)
    refuse_unsupported(ctx, can, linking["cuda"].value)
    if ctx.problems:
        raise _fail(ctx)
    return BuildPlan(
        torch=torch,
        tag=tag_of(torch.value, ctx.release),
        source=source,
        companions=companions,
        python=python,
        cuda=cuda,
        toolkit=toolkit,
        compiler=compiler,
        archs=archs,
        arch_list=arch_list,
        features=features,
        linking=linking,
        frontend=_frontend(ctx),
        env=env,
        cmake_args=cmake_args(env),
        max_jobs=jobs[0],
        max_jobs_cuda=jobs[1],
        disk_gb=_disk(ctx, against, cuda.value, len(archs.value), len(companions)),
        cache=cache,
        cache_dir=cache_setup.local_dir,
        cache_setup=cache_setup,
        fixes=fixes,
        **_as_asked(ctx.spec),
        companion_build=build,
        steps=_steps(ctx, build, against, (source, cuda.value, toolkit.value, fixes)),
        **_notes(ctx),
    )


def _notes(ctx: Ctx) -> dict[str, Any]:
    """What the plan says besides its decisions: warnings, and the machine's answer
    (the readiness table, planner/readiness.py), kept apart from the combination's."""
    return {"warnings": ctx.warnings, "readiness": ctx.readiness}


def _as_asked(spec: BuildSpec) -> dict[str, Any]:
    """What the plan carries over from the spec as asked."""
    return {
        "targets": list(spec.targets),
        "outputs": list(spec.outputs),
        "output_dir": spec.output_dir,
        "install_python": spec.install_python,
        "backend": spec.backend,
        "sign_key": spec.sign_key,
    }


def _steps(
    ctx: Ctx,
    build: CompanionBuildPlan | None,
    against: TorchFacts | None,
    torch: tuple[SourcePlan, str | None, str | None, list[PlannedFix]],
) -> list[PlanStep]:
    """torch's own steps (none with ``--against``), then each companion's."""
    spec, outputs = ctx.spec, [str(o) for o in ctx.spec.outputs]
    wheels = [c.name for c in build.builds] if build else []
    if build is not None and against is not None:
        return [*companion_steps(build, outputs, torch[2]), attest_step(wheels, spec.sign_key)]
    pinned = pinned_commit(torch[0], ctx.release)
    inputs = StepInputs(*torch, list(spec.targets), outputs, spec.install_python, pinned)
    steps = plan_steps(inputs) + (companion_steps(build, outputs) if build else [])
    return steps if spec.targets else [*steps, attest_step(["torch", *wheels], spec.sign_key)]


def _disk(
    ctx: Ctx, against: TorchFacts | None, cuda: str | None, n_archs: int, companions: int
) -> Decision[float]:
    if against is None:
        return resolve_disk(ctx, cuda, n_archs)
    return resolve_companion_disk(ctx, against.cuda, against.kind, cuda, companions)


def _companion_builds(
    ctx: Ctx,
    can: Capabilities,
    against: TorchFacts | None,
    companions: list[CompanionPlan],
    made: tuple[str, str | None, tuple[Decision[int], Decision[int]], str | None],
) -> CompanionBuildPlan | None:
    """The companions' builds: against ``--against``'s torch, or (one run) against the torch
    this build makes (``made``: its version, Python and jobs) — when this pipeline carries that
    out (else support.py refuses it)."""
    torch, python, jobs, arch_list = made
    if against is not None:
        return plan_companion_builds(ctx, against, companions, jobs[0].value, arch_list)
    runs_here = can.companion_step and ctx.spec.backend in can.backends
    if not (ctx.spec.companions and runs_here) or not one_run_ok(ctx):
        return None
    facts = built_torch(torch, python, ctx.spec.cuda)
    return plan_companion_builds(ctx, facts, companions, jobs[0].value, arch_list)


def resolve(
    spec: BuildSpec | ResolvedSpec,
    kb: KnowledgeBase,
    host: HostFacts,
    origins: Mapping[str, Origin] | None = None,
    *,
    can: Capabilities = PIPELINE,
    against: TorchFacts | None = None,
) -> BuildPlan:
    """Plan the build, or raise :class:`PlanError` listing every conflict at once — including
    every request the pipeline ``can`` not carry out (default: what `torchsmith build` runs).
    ``against``: the facts of the torch ``spec.against`` names (read by `inspect`), to plan
    companions built against it instead of a torch build."""
    if isinstance(spec, ResolvedSpec):
        origins = spec.origins
        spec = spec.spec
    ctx = Ctx(spec=spec, origins=dict(origins or {}), kb=kb, host=host)
    return _plan(ctx, can, against)


def _against_inspected(ctx: Ctx, against: TorchFacts | None) -> None:
    if ctx.spec.against is not None and against is None:
        ctx.problem(
            f"--against {ctx.spec.against}: its torch was not inspected",
            "plan with `torchsmith plan`/`build`, which read it with `torchsmith inspect`",
            "against",
        )
