"""Feature switches and linking: what is on, and why."""

from __future__ import annotations

from torchsmith.plan_model import Decision, EnvSetting
from torchsmith.planner import official
from torchsmith.planner.context import Ctx, decide
from torchsmith.spec import Features, Linkage
from torchsmith.spec_sources import env_name

CUDA_ONLY = ("cudnn", "nccl", "system_nccl", "magma", "split_cuda")
# Optional features a 'minimal' preset turns off for the fastest build.
MINIMAL_OFF = (
    "distributed", "nccl", "mkldnn", "fbgemm", "xnnpack", "nnpack", "qnnpack", "magma",
    "kineto", "numa", "miopen",
)  # fmt: skip
# Debian's DFSG tree has no submodules: these need one, or a system library bookworm lacks.
DEBIAN_OFF = (
    "distributed", "nccl", "mkldnn", "fbgemm", "xnnpack", "nnpack", "qnnpack", "magma",
    "kineto", "numa", "miopen",
)  # fmt: skip
DEBIAN_WHY = (
    "Debian DFSG source: the submodule is stripped and the system build leaves it out "
    "(repo:docs/measured/debian-source-builds.md §1.3)"
)


def _one(ctx: Ctx, name: str, cuda: str | None) -> Decision[bool | None]:
    key = f"features.{name}"
    value = getattr(ctx.spec.features, name)
    if ctx.asked(key):
        if value and cuda is None and name in CUDA_ONLY:
            ctx.problem(
                f"{name} needs a CUDA build; this is a CPU build",
                f"add --cuda VERSION or drop {name}",
                key,
            )
        return ctx.user(key, value)
    if cuda is None and name in CUDA_ONLY:
        return decide(False, "default", "CPU build")
    if ctx.spec.source == "debian":
        if name == "system_libs":
            return decide(True, "kb", "Debian source builds against the system libraries")
        if name in DEBIAN_OFF:
            return decide(False, "kb", DEBIAN_WHY)
    if ctx.spec.preset == "minimal" and name in MINIMAL_OFF:
        return decide(False, "default", "preset 'minimal' turns optional features off")
    default = Features.model_fields[name].default
    if default is not None:
        return decide(default, "default", "torchsmith default")
    return decide(None, "default", "the release's own default (not set)")


def resolve_features(ctx: Ctx, cuda: str | None) -> dict[str, Decision[bool | None]]:
    return {name: _one(ctx, name, cuda) for name in Features.model_fields}


def resolve_linking(
    ctx: Ctx, cuda: str | None, features: dict[str, Decision[bool | None]]
) -> dict[str, Decision[Linkage | None]]:
    result: dict[str, Decision[Linkage | None]] = {}
    for lib in ("cuda", "cudnn", "nccl"):
        key = f"linking.{lib}"
        value = getattr(ctx.spec.linking, lib)
        if cuda is None:
            if ctx.asked(key):  # trial E09: --link cuda=pip-deps --cpu was ignored silently
                ctx.problem(
                    f"{key} = {value} links a CUDA library; this is a CPU build",
                    f"add --cuda VERSION, or drop --link {lib}=… / {env_name(key)}",
                    key,
                )
            result[lib] = decide(None, "default", "CPU build")
        elif lib != "cuda" and features[lib].value is False:
            result[lib] = decide(None, "default", f"{lib} is off")
        elif ctx.asked(key):
            result[lib] = ctx.user(key, value)
        elif ctx.spec.preset == "official" and _official_pins(ctx, cuda):
            result[lib] = decide("pip-deps", "kb", _PIP_DEPS_WHY.format(cuda=cuda))
        elif ctx.spec.preset == "official" and lib != "cuda" and _official_static(ctx, lib, cuda):
            result[lib] = decide("static", "kb", official.static_why(lib))
        else:
            result[lib] = decide("dynamic", "default", "PyTorch's default: shared libraries")
    return result


_PIP_DEPS_WHY = (
    "the official wheels for CUDA {cuda} take the CUDA libraries from the nvidia-* wheels they "
    "pin (kb/data/nvidia_wheels.toml); --link LIB=dynamic to link the toolkit's instead"
)


def _official_pins(ctx: Ctx, cuda: str) -> bool:
    """``--preset official`` for a release and CUDA whose official wheels' nvidia-* pins are
    recorded: link as those wheels do (round-3 trial O11: the official 2.6.0 cu124 wheel failed
    verify against a 'dynamic' official plan)."""
    from torchsmith.kb.pipdeps import pins_for

    rel = ctx.release
    return pins_for(rel.torch if rel else ctx.spec.torch, cuda) is not None


def _official_static(ctx: Ctx, lib: str, cuda: str) -> bool:
    rel = ctx.release
    return official.links_statically(rel.torch if rel else None, lib, cuda)


# Where each release reads a system NCCL's location from the environment.
NCCL_LEGACY_SOURCE = (
    "pytorch/pytorch@v1.1.0:tools/setup_helpers/nccl.py reads NCCL_ROOT_DIR, NCCL_LIB_DIR and "
    "NCCL_INCLUDE_DIR (torch <= 1.1)"
)
NCCL_CMAKE_SOURCE = (
    "pytorch/pytorch@main:cmake/Modules/FindNCCL.cmake reads NCCL_INCLUDE_DIR and NCCL_LIB_DIR "
    "and searches NCCL_ROOT (NCCL_ROOT_DIR deprecated; since pytorch/pytorch#22818, 2019)"
)


def _nccl_dirs(ctx: Ctx) -> dict[str, str]:
    loc = ctx.spec.nccl
    legacy = ctx.release is not None and ctx.release.env_style == "legacy-no"
    dirs = {"NCCL_ROOT_DIR" if legacy else "NCCL_ROOT": loc.root}
    dirs["NCCL_INCLUDE_DIR"] = loc.include_dir or (loc.root and f"{loc.root}/include")
    dirs["NCCL_LIB_DIR"] = loc.lib_dir or (loc.root and f"{loc.root}/lib")
    return {k: v for k, v in dirs.items() if v}


def nccl_location_env(ctx: Ctx, features: dict[str, Decision[bool | None]]) -> list[EnvSetting]:
    """The system NCCL's location, spelled the way this release reads it."""
    loc = ctx.spec.nccl
    if not (loc.root or loc.include_dir or loc.lib_dir):
        return []
    if not features["system_nccl"].value:
        ctx.problem(
            "a system NCCL location is given, but features.system_nccl is off",
            "turn it on (--enable system_nccl, or system_nccl = true under [features]) or "
            "drop the [nccl] table",
            "nccl",
        )
        return []
    legacy = ctx.release is not None and ctx.release.env_style == "legacy-no"
    why = NCCL_LEGACY_SOURCE if legacy else NCCL_CMAKE_SOURCE
    return [EnvSetting(name=k, value=v, reason=why) for k, v in _nccl_dirs(ctx).items()]
