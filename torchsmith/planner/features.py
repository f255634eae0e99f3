"""Feature switches and linking: what is on, and why."""

from __future__ import annotations

from typing import Any

from torchsmith.plan_model import Decision
from torchsmith.planner.context import Ctx, decide
from torchsmith.spec import Features

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


def _one(ctx: Ctx, name: str, cuda: str | None) -> Decision[Any]:
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


def resolve_features(ctx: Ctx, cuda: str | None) -> dict[str, Decision[Any]]:
    return {name: _one(ctx, name, cuda) for name in Features.model_fields}


def resolve_linking(
    ctx: Ctx, cuda: str | None, features: dict[str, Decision[Any]]
) -> dict[str, Decision[Any]]:
    result: dict[str, Decision[Any]] = {}
    for lib in ("cuda", "cudnn", "nccl"):
        key = f"linking.{lib}"
        value = getattr(ctx.spec.linking, lib)
        if cuda is None:
            result[lib] = decide(None, "default", "CPU build")
        elif lib != "cuda" and features[lib].value is False:
            result[lib] = decide(None, "default", f"{lib} is off")
        elif ctx.asked(key):
            result[lib] = ctx.user(key, value)
        elif ctx.spec.preset == "official" and lib != "cuda" and _official_static(ctx):
            result[lib] = decide("static", "kb", "official 1.x binaries link cuDNN/NCCL statically")
        else:
            result[lib] = decide("dynamic", "default", "PyTorch's default: shared libraries")
    return result


def _official_static(ctx: Ctx) -> bool:
    rel = ctx.release
    return rel is not None and rel.torch.startswith("1.")
