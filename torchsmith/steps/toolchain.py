"""The `toolchain` step: turn the plan's CUDA toolkit decision into a toolkit root (provisioned
into torchsmith's cache by torchsmith.toolchains when the provider downloads it) and the
variables (CUDA_HOME, CUDACXX, PATH) the later steps run with."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from torchsmith.errors import InternalError
from torchsmith.steps.context import BuildContext
from torchsmith.steps.state import BuildState, Toolkit
from torchsmith.toolchains.cuda.base import ProvideContext
from torchsmith.toolchains.provision import provider_named, toolkit_build_env

STAGE = "toolchain"


def provision(ctx: BuildContext, base: Mapping[str, str]) -> Toolkit:
    """CPU builds pass ``base`` through; CUDA builds get the plan's toolkit first on PATH."""
    cuda, provider = ctx.plan.cuda.value, ctx.plan.toolkit.value
    if cuda is None:
        return Toolkit(dict(base), None)
    if provider is None or provider == "container":  # refused at plan time (planner/support)
        raise InternalError(
            f"the plan's CUDA {cuda} toolkit provider is {provider!r}, which this pipeline "
            "cannot run",
            "plan again with this torchsmith; report this as a bug if it persists",
        )
    with ctx.stage(STAGE, f"CUDA {cuda} toolkit from {provider}"):
        pctx = ProvideContext(
            cache_root=ctx.options.cache_root / "toolchains",
            env=base,
            log_path=ctx.log(STAGE),
            install_deps=ctx.options.install_deps,
            is_root=os.geteuid() == 0,
            runner=ctx.executor,
        )
        record = provider_named(provider).provide(cuda, ctx.host, pctx)
    return Toolkit(toolkit_build_env(record, base), record.model_dump(mode="json"))


def toolkit_root(toolkit: Toolkit) -> Path | None:
    return Path(toolkit.record["root"]) if toolkit.record else None


def run(ctx: BuildContext, state: BuildState) -> None:
    """Step ``toolchain``."""
    state.toolkit = provision(ctx, state.base_env)
