"""A companion's ``environment`` step: the venv holding exactly its torch (made once per torch
and shared by the companions of the build: its marker records the torch wheel's sha256, or the
interpreter), the compiler cache, the CUDA variables of a provisioned toolkit, and the system
packages this companion's build needs. The first companion's step also publishes the torch
wheel into the output directory — a companion that fails later never loses it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from torchsmith.cache import CompilerCache
from torchsmith.companions import buildenv
from torchsmith.companions.torchsource import (
    ASK_SITE,
    TorchSource,
    install_args,
    link,
    of_interpreter,
    of_wheel,
)
from torchsmith.errors import BuildError, InternalError
from torchsmith.hashing import sha256_file
from torchsmith.packaging.conda import wheel_metadata
from torchsmith.plan_types import CompanionBuild, CompanionBuildPlan
from torchsmith.sources.hostdeps import ensure_packages
from torchsmith.steps.companion.run import CompanionRun, Env, companion, plan_of, root
from torchsmith.steps.context import BuildContext
from torchsmith.steps.publish import publish_file
from torchsmith.steps.state import BuildState

ENV_STAGE = "companion-env"


def cuda_env(
    plan: CompanionBuildPlan, toolkit: dict[str, Any] | None, cache: CompilerCache
) -> dict[str, str]:
    """CUDA_HOME of the provisioned toolkit, and nvcc through the compiler cache: torchvision's
    ninja file calls ``$PYTORCH_NVCC`` (torch/utils/cpp_extension.py: "user can set nvcc
    compiler with ccache"), torchaudio's CMake reads CMAKE_CUDA_COMPILER_LAUNCHER."""
    if plan.cuda is None:
        return {}
    if toolkit is None:
        raise InternalError(
            "the companions' CUDA ops are planned but no toolkit was provisioned",
            "the plan's toolchain step must come before the companions'; report this as a bug",
        )
    root_dir = Path(toolkit["root"])
    env = {"CUDA_HOME": str(root_dir), "CUDA_PATH": str(root_dir)}
    if cache.active and cache.program:
        env["PYTORCH_NVCC"] = f"{cache.program} {root_dir / 'bin' / 'nvcc'}"
        env["CMAKE_CUDA_COMPILER_LAUNCHER"] = cache.program
    return env


def runtime_plan(plan: CompanionBuildPlan, state: BuildState) -> CompanionBuildPlan:
    """The companions' plan with the torch they are built against on disk: for a torch this
    build makes (kind ``build``), the wheel the publish step published and its Requires-Dist."""
    if plan.torch.kind != "build":
        return plan
    wheel = state.published[0] if state.published else state.need_wheel()
    requires = wheel_metadata(wheel)[2]
    torch = plan.torch.model_copy(update={"location": str(wheel), "requires_dist": requires})
    return plan.model_copy(update={"torch": torch})


def publish_torch(ctx: BuildContext, plan: CompanionBuildPlan) -> Path | None:
    """The torch wheel into the output directory (none for --against python:)."""
    if plan.torch.kind == "python":
        return None
    wheel = Path(plan.torch.location)
    out = ctx.options.output_dir
    with ctx.stage("companion-torch", f"{wheel.name} → {out} (before any companion)"):
        out.mkdir(parents=True, exist_ok=True)
        if (out / wheel.name).resolve() == wheel.resolve():
            return wheel
        return publish_file(wheel, out)


def torch_source(
    ctx: BuildContext, state: BuildState, plan: CompanionBuildPlan, published: Path | None
) -> TorchSource:
    """The published torch wheel, or the torch the --against interpreter imports."""
    if published is not None:
        return of_wheel(published, state.tools.python)
    python = plan.torch.location
    done = ctx.executor.capture([python, "-c", ASK_SITE], env=state.base_env, timeout=300)
    if done.returncode != 0 or not done.stdout.strip():
        raise BuildError(
            f"--against python:{python} cannot import torch: {done.stderr.strip()[-400:]}",
            "name an interpreter whose environment has torch installed",
        )
    return of_interpreter(python, done.stdout.strip().splitlines()[-1])


def _ask_torch(ctx: BuildContext, python: Path, env: dict[str, str]) -> dict[str, Any]:
    done = ctx.executor.capture([python, "-c", buildenv.ASK_TORCH], env=env, timeout=300)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise BuildError(
            f"the companions' build env cannot import its torch: {done.stderr.strip()[-400:]}",
            f"see {ctx.log(ENV_STAGE)}; the torch wheel's own requirements must install",
        )
    facts: dict[str, Any] = json.loads(lines[-1])
    return facts


def _make_venv(
    ctx: BuildContext, plan: CompanionBuildPlan, source: TorchSource, env: dict[str, str]
) -> None:
    venv = root(ctx) / "env"
    reqs = buildenv.runtime_requirements(plan.torch.requires_dist)
    log = ctx.log(ENV_STAGE)
    first, *rest = buildenv.venv_commands(source.creator, venv, install_args(source), reqs)
    ctx.executor.run(first, env=env, log_path=log)
    link(source, venv)
    for argv in rest:
        ctx.executor.run(argv, env=env, log_path=log)


def _env_key(plan: CompanionBuildPlan, source: TorchSource) -> dict[str, Any]:
    if source.wheel is not None:
        return {"torch_sha256": sha256_file(source.wheel)}
    return {"torch": plan.torch.version, **source.key()}


def _venv(
    ctx: BuildContext, plan: CompanionBuildPlan, source: TorchSource, env: dict[str, str]
) -> dict[str, Any]:
    """The build venv, made unless an earlier run made it for this very torch."""
    key = _env_key(plan, source)
    made = ctx.workspace.read_marker(ENV_STAGE) if ctx.workspace.is_done(ENV_STAGE) else {}
    if made != key:
        venv = root(ctx) / "env"
        with ctx.stage(ENV_STAGE, f"{venv}: torch {plan.torch.version}: {source.describe()}"):
            _make_venv(ctx, plan, source, env)
        ctx.workspace.mark_done(ENV_STAGE, key)
    return key


def abi_note(plan: CompanionBuildPlan, torch: dict[str, Any]) -> str:
    """Say so when inspect's reading of the C++ ABI differs from the torch's own."""
    inspected, actual = plan.torch.cxx11_abi, torch.get("cxx11_abi")
    if inspected is None or actual is None or inspected == actual:
        return ""
    return (
        f"C++11 ABI: inspect read {inspected} ({plan.torch.abi_evidence}); the torch itself "
        f"says {actual} (torch._C._GLIBCXX_USE_CXX11_ABI). The companions are compiled with "
        "the torch's own value (torch.utils.cpp_extension passes it)"
    )


def environment(
    ctx: BuildContext, state: BuildState, plan: CompanionBuildPlan, published: Path | None
) -> Env:
    """The build env (made once per torch) and the compiler cache."""
    source = torch_source(ctx, state, plan, published)
    base = state.build_env_base()
    cache = buildenv.plan_cache(ctx.plan, ctx.options.cache_root, state.tools.cache, base)
    cache_bin = None
    if cache.active and cache.kind == "ccache" and cache.program:
        cache_bin = buildenv.masquerade(root(ctx) / "ccache-bin", cache.program)
    venv = root(ctx) / "env"
    env = buildenv.build_env(base, venv, cache, cache_bin, {})
    key = _venv(ctx, plan, source, env)
    torch = {**_ask_torch(ctx, venv / "bin" / "python", env), **key}
    torch["abi_note"] = abi_note(plan, torch)
    if torch["abi_note"]:
        ctx.reporter.message(torch["abi_note"])
    record = state.toolkit.record if state.toolkit else None
    cuda = cuda_env(plan, record, cache)
    return Env(venv / "bin" / "python", base, cache, cache_bin, torch, source, cuda, record)


def system_packages(ctx: BuildContext, comp: CompanionBuild, env: dict[str, str]) -> None:
    """The packages its build needs (libjpeg, libpng…): checked, installed with --install-deps;
    without them setup.py would leave the decoders out and only the smoke test would notice."""
    names = [p.name for p in comp.system_packages]
    if not names:
        return
    why = f"{comp.name} {comp.version} (" + "; ".join(p.reason for p in comp.system_packages)
    installed = ensure_packages(
        names,
        env,
        runner=ctx.executor,
        install=ctx.options.install_deps,
        why=why + ")",
        on_line=None,
    )
    if installed:
        ctx.reporter.message(f"{comp.name}: installed {' '.join(installed)} (--install-deps)")


def start(ctx: BuildContext, state: BuildState) -> CompanionRun:
    """The companions' part of this run: the torch published, the build env ready."""
    plan = runtime_plan(plan_of(ctx), state)
    published = publish_torch(ctx, plan)
    return CompanionRun(plan, environment(ctx, state, plan, published), published)


def run(ctx: BuildContext, state: BuildState, subject: str) -> None:
    """Step ``environment`` of companion ``subject``."""
    if state.companions is None:
        state.companions = start(ctx, state)
    else:
        ctx.reporter.message(f"{subject}: the companions' build env is shared ({ENV_STAGE})")
    comp = companion(state.companions.plan, subject)
    system_packages(ctx, comp, state.companions.env.base)
