"""The build's environment variables, assembled from the plan's decisions in a fixed order;
later entries (fixes) override earlier ones of the same name."""

from __future__ import annotations

from torchsmith.plan_model import Decision, EnvSetting, PlannedFix
from torchsmith.planner import official
from torchsmith.planner.context import Ctx
from torchsmith.planner.environment import by_option, feature_env
from torchsmith.planner.features import nccl_location_env
from torchsmith.planner.reproducible import reproducible_env
from torchsmith.spec import Linkage

CACHE_LAUNCHER_VARS = (
    "CMAKE_C_COMPILER_LAUNCHER",
    "CMAKE_CXX_COMPILER_LAUNCHER",
    "CMAKE_CUDA_COMPILER_LAUNCHER",
)


def _build_version(ctx: Ctx, torch: str, cuda: str | None) -> list[EnvSetting]:
    if ctx.spec.build_version:
        value, why = ctx.spec.build_version, "asked"
    elif ctx.release is None or ctx.release.torch == "main":
        return []  # main/commits: version.txt + git sha give a valid PEP 440 version
    else:
        local = f"cu{cuda.replace('.', '')}" if cuda else "cpu"
        value, why = f"{torch}+{local}", "named like the official wheels (else X.Y.0a0)"
    return [
        EnvSetting(name="PYTORCH_BUILD_VERSION", value=value, reason=why),
        EnvSetting(name="PYTORCH_BUILD_NUMBER", value="1", reason="first build of this version"),
    ]


# PyTorch's code generators (tools/autograd, torchgen) leaked set iteration order into generated
# sources until 2.1 (pytorch/pytorch#101425, #100986, earlier #58889, #82536): with Python's
# per-process string hash seed, each build's autograd/generated/Functions.cpp, VariableType_*.cpp
# … differ in line order, and a compiler cache misses on them in every new workspace (measured:
# docs/benchmarks.md, full 1.13.1 build). pytorch/pytorch#58944 proposes the fixed seed.
HASH_SEED = EnvSetting(
    name="PYTHONHASHSEED",
    value="0",
    reason="deterministic code generation: a fixed string-hash seed, so the generated sources "
    "(autograd Functions.cpp, VariableType_*.cpp, ...) are the same in every build and a "
    "compiler cache hits on them (pytorch/pytorch#58944; set-order leaks fixed only in 2.1, "
    "pytorch/pytorch#101425)",
)


def _cache_env(ctx: Ctx) -> list[EnvSetting]:
    kind = ctx.spec.cache.kind
    if kind == "none":
        return [by_option(ctx, "USE_CCACHE", False, "no compiler cache asked")]
    why = (
        f"{kind} as compiler launcher (CMake ≥ 3.17 reads CMAKE_<LANG>_COMPILER_LAUNCHER "
        "from the environment, whatever the release's setup.py forwards)"
    )
    env = [EnvSetting(name=v, value=kind, reason=why) for v in CACHE_LAUNCHER_VARS]
    pinned = (
        "pinned off: torchsmith sets the launcher itself "
        "(docs/debian-source-builds.md §1.6: an unpinned USE_CCACHE "
    )
    env.append(by_option(ctx, "USE_CCACHE", False, pinned + "flips and rebuilds everything)"))
    return env


def _linking_env(
    ctx: Ctx,
    linking: dict[str, Decision[Linkage | None]],
    features: dict[str, Decision[bool | None]],
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
                value=official.NVCC_FLAGS,
                reason=official.NVCC_FLAGS_WHY,
            )
        )
    return env


def _jobs_env(cxx: Decision[int], nvcc: Decision[int]) -> EnvSetting:
    if nvcc.value and nvcc.value < cxx.value:
        return EnvSetting(
            name="MAX_JOBS",
            value=str(nvcc.value),
            reason=f"CUDA build: nvcc jobs bound the parallelism ({nvcc.reason})",
        )
    return EnvSetting(name="MAX_JOBS", value=str(cxx.value), reason=cxx.reason)


def _dedupe(env: list[EnvSetting]) -> list[EnvSetting]:
    last = {e.name: e for e in env}
    seen: set[str] = set()
    result = []
    for e in env:
        if e.name not in seen:
            seen.add(e.name)
            result.append(last[e.name])
    return result


def plan_env(
    ctx: Ctx,
    *,
    torch: str,
    cuda: str | None,
    arch_list: str,
    features: dict[str, Decision[bool | None]],
    linking: dict[str, Decision[Linkage | None]],
    jobs: tuple[Decision[int], Decision[int]],
    fixes: list[PlannedFix],
) -> list[EnvSetting]:
    env = [
        *_cuda_env(ctx, cuda, arch_list),
        *feature_env(ctx, features),
        *_linking_env(ctx, linking, features),
        *nccl_location_env(ctx, features),
        *_cache_env(ctx),
        _jobs_env(*jobs),
        *_build_version(ctx, torch, cuda),
        HASH_SEED,
        *reproducible_env(ctx),
    ]
    if ctx.spec.cxx11_abi is not None:
        abi = str(int(ctx.spec.cxx11_abi))
        env.append(EnvSetting(name="_GLIBCXX_USE_CXX11_ABI", value=abi, reason="asked"))
    env += [
        EnvSetting(name=k, value=v, reason=f"fix {f.id}") for f in fixes for k, v in f.env.items()
    ]
    return _dedupe(env)
