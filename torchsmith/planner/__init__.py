"""resolve(spec, kb, host) -> BuildPlan: pure, immutable, explained. No subprocess, no I/O."""

from __future__ import annotations

from collections.abc import Mapping

from torchsmith.errors import PlanError
from torchsmith.host.model import HostFacts
from torchsmith.kb import KnowledgeBase
from torchsmith.kb.models import Fix
from torchsmith.plan_model import BuildPlan, Decision, EnvSetting, PlannedFix
from torchsmith.planner.archs import resolve_archs
from torchsmith.planner.context import Ctx, decide
from torchsmith.planner.environment import by_option, cmake_args, feature_env
from torchsmith.planner.features import resolve_features, resolve_linking
from torchsmith.planner.resources import resolve_disk, resolve_jobs
from torchsmith.planner.steps import plan_steps
from torchsmith.planner.toolchain import resolve_compiler, resolve_cuda, resolve_toolkit
from torchsmith.planner.versions import (
    resolve_companions,
    resolve_python,
    resolve_source,
    resolve_torch,
    tag_of,
)
from torchsmith.spec import BuildSpec
from torchsmith.spec_sources import Origin, ResolvedSpec

CACHE_LAUNCHER_VARS = (
    "CMAKE_C_COMPILER_LAUNCHER",
    "CMAKE_CXX_COMPILER_LAUNCHER",
    "CMAKE_CUDA_COMPILER_LAUNCHER",
)


def _planned(fix: Fix) -> PlannedFix:
    source = fix.sources.get("*") or next(iter(fix.sources.values()), "")
    return PlannedFix(
        id=fix.id,
        title=fix.title,
        action=fix.action,
        env=dict(fix.env),
        edits=[e.model_dump() for e in fix.edits],
        command=list(fix.command),
        explanation=fix.explanation,
        source=source,
    )


def _fixes(
    ctx: Ctx, torch: str, cuda: str | None, compiler: str, python: str | None
) -> list[PlannedFix]:
    if ctx.release is None:
        return []
    from torchsmith.fixes import applicable_fixes

    gcc = compiler.split("-")[1] if compiler.startswith("gcc-") else None
    found = applicable_fixes(
        ctx.kb,
        torch=ctx.release.torch if torch != ctx.release.torch else torch,
        cuda=cuda,
        gcc=gcc,
        python=python,
        source_kind=ctx.spec.source.split(":")[0],
    )
    planned = []
    for fix in found:
        if fix.action == "refuse":
            ctx.problem(f"{fix.title}: {fix.explanation}", fix.advice, "torch")
        else:
            planned.append(_planned(fix))
    return planned


def _build_version(ctx: Ctx, torch: str, cuda: str | None) -> EnvSetting:
    if ctx.spec.build_version:
        return EnvSetting(
            name="PYTORCH_BUILD_VERSION", value=ctx.spec.build_version, reason="asked"
        )
    local = f"cu{cuda.replace('.', '')}" if cuda else "cpu"
    return EnvSetting(
        name="PYTORCH_BUILD_VERSION",
        value=f"{torch}+{local}",
        reason="named like the official wheels (else the wheel says X.Y.0a0)",
    )


def _cache_env(ctx: Ctx) -> list[EnvSetting]:
    if ctx.spec.cache == "none":
        return [by_option(ctx, "USE_CCACHE", False, "no compiler cache asked")]
    why = (
        f"{ctx.spec.cache} as compiler launcher (CMake ≥ 3.17 reads CMAKE_<LANG>_COMPILER_LAUNCHER "
        "from the environment, whatever the release's setup.py forwards)"
    )
    env = [EnvSetting(name=v, value=ctx.spec.cache, reason=why) for v in CACHE_LAUNCHER_VARS]
    pinned = "pinned off: torchsmith sets the launcher itself (notes §1.6: an unpinned USE_CCACHE "
    env.append(by_option(ctx, "USE_CCACHE", False, pinned + "flips and rebuilds everything)"))
    return env


def _linking_env(
    ctx: Ctx, linking: dict[str, Decision], features: dict[str, Decision]
) -> list[EnvSetting]:
    env = []
    for lib, option in (("cudnn", "USE_STATIC_CUDNN"), ("nccl", "USE_STATIC_NCCL")):
        if linking[lib].value == "static":
            env.append(by_option(ctx, option, True, linking[lib].reason))
    if linking["cuda"].value == "static":
        # setup.py forwards USE_CUDA_STATIC_LINK; CMake reads ATEN_STATIC_CUDA from the env.
        env.append(by_option(ctx, "USE_CUDA_STATIC_LINK", True, linking["cuda"].reason))
        env.append(by_option(ctx, "ATEN_STATIC_CUDA", True, linking["cuda"].reason))
    if linking["nccl"].value == "dynamic" and features["system_nccl"].value:
        env.append(by_option(ctx, "USE_SYSTEM_NCCL", True, "link the system's NCCL dynamically"))
    return env


def _cuda_env(ctx: Ctx, cuda: str | None, arch_list: str) -> list[EnvSetting]:
    no_rocm = by_option(ctx, "USE_ROCM", False, "torchsmith plans CUDA or CPU builds, not ROCm")
    if cuda is None:
        return [by_option(ctx, "USE_CUDA", False, "CPU build"), no_rocm]
    env = [
        by_option(ctx, "USE_CUDA", True, f"CUDA {cuda} build"),
        no_rocm,
        EnvSetting(name="TORCH_CUDA_ARCH_LIST", value=arch_list, reason="GPU targets of the plan"),
    ]
    if ctx.spec.preset == "official":
        env.append(
            EnvSetting(
                name="TORCH_NVCC_FLAGS",
                value="-Xfatbin -compress-all",
                reason="official binaries compress fat binaries (pytorch/builder)",
            )
        )
    return env


def _dedupe_env(env: list[EnvSetting]) -> list[EnvSetting]:
    """Later settings (fixes) override earlier ones of the same name; order is kept."""
    last = {e.name: e for e in env}
    seen: set[str] = set()
    result = []
    for e in env:
        if e.name not in seen:
            seen.add(e.name)
            result.append(last[e.name])
    return result


def resolve(
    spec: BuildSpec | ResolvedSpec,
    kb: KnowledgeBase,
    host: HostFacts,
    origins: Mapping[str, Origin] | None = None,
) -> BuildPlan:
    """Plan the build, or raise :class:`PlanError` listing every conflict at once."""
    if isinstance(spec, ResolvedSpec):
        origins = spec.origins
        spec = spec.spec
    ctx = Ctx(spec=spec, origins=dict(origins or {}), kb=kb, host=host)
    torch = resolve_torch(ctx)
    source = resolve_source(ctx, torch.value)
    companions = resolve_companions(ctx)
    python = resolve_python(ctx)
    cuda, cuda_info = resolve_cuda(ctx)
    toolkit = resolve_toolkit(ctx, cuda.value)
    compiler = resolve_compiler(ctx, cuda_info)
    archs = resolve_archs(ctx, cuda_info)
    arch_list = ";".join(archs.value)
    features = resolve_features(ctx, cuda.value)
    linking = resolve_linking(ctx, cuda.value, features)
    cxx, nvcc = resolve_jobs(ctx, cuda.value)
    disk = resolve_disk(ctx, cuda.value, len(archs.value))
    fixes = _fixes(ctx, torch.value, cuda.value, compiler.value, python.value)
    env = [
        *_cuda_env(ctx, cuda.value, arch_list),
        *feature_env(ctx, features),
        *_linking_env(ctx, linking, features),
        *_cache_env(ctx),
        EnvSetting(name="MAX_JOBS", value=str(cxx.value), reason=cxx.reason),
        _build_version(ctx, torch.value, cuda.value),
        EnvSetting(name="PYTORCH_BUILD_NUMBER", value="1", reason="first build of this version"),
    ]
    if spec.cxx11_abi is not None:
        env.append(
            EnvSetting(
                name="_GLIBCXX_USE_CXX11_ABI", value=str(int(spec.cxx11_abi)), reason="asked"
            )
        )
    env += [
        EnvSetting(name=k, value=v, reason=f"fix {f.id}") for f in fixes for k, v in f.env.items()
    ]
    env = _dedupe_env(env)
    if ctx.problems:
        raise PlanError(ctx.problems, "change the request as suggested; nothing was built")
    rel = ctx.release
    repair = (
        "patchelf: RPATH to the nvidia-* pip packages"
        if linking["cuda"].value == "pip-deps"
        else None
    )
    frontend = (
        decide(rel.frontend, "kb", f"torch {rel.torch} builds with {rel.frontend}")
        if rel
        else decide("pep517", "default", "unknown release")
    )
    return BuildPlan(
        torch=torch,
        tag=tag_of(torch.value, rel),
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
        frontend=frontend,
        env=env,
        cmake_args=cmake_args(env),
        max_jobs=cxx,
        max_jobs_cuda=nvcc,
        disk_gb=disk,
        cache=decide(spec.cache, "user" if ctx.asked("cache") else "default", "compiler cache"),
        fixes=fixes,
        targets=list(spec.targets),
        outputs=list(spec.outputs),
        output_dir=spec.output_dir,
        backend=spec.backend,
        steps=plan_steps(
            source,
            cuda=cuda.value,
            toolkit=toolkit.value,
            fixes=fixes,
            targets=list(spec.targets),
            companions=companions,
            outputs=list(spec.outputs),
            repair=repair,
        ),
        warnings=ctx.warnings,
    )
