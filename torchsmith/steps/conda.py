"""Step ``conda`` (``--output conda``): the published wheel becomes a conda package named as
PyTorch's own (``pytorch-VERSION-py3.11_cpu_0``, ``…_cuda12.4.131_cudnn…_0``; see
:mod:`torchsmith.packaging.conda`), written into the channel directory ``OUTPUT/conda-channel``
and indexed there (``repodata.json``), offline. Re-running is a no-op for the same package; a
different package under the same file name is refused, as ``publish`` refuses it."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from torchsmith.errors import InternalError
from torchsmith.packaging import conda
from torchsmith.publish.conda_channel import add_to_channel
from torchsmith.steps.context import BuildContext
from torchsmith.steps.state import BuildState

STAGE = "conda"
CHANNEL = "conda-channel"


def variant(ctx: BuildContext, state: BuildState) -> tuple[str | None, str | None]:
    """CUDA version for the build string (the toolkit's full one when it recorded it) and
    the cuDNN version (only when the toolkit recorded one: torchsmith does not guess it)."""
    cuda = ctx.plan.cuda.value
    record: dict[str, Any] = (state.toolkit.record or {}) if state.toolkit else {}
    if cuda is None:
        return None, None
    full = record.get("version")
    cudnn = record.get("cudnn_version")
    return (str(full) if full else cuda), (str(cudnn) if cudnn else None)


def package_of(ctx: BuildContext, state: BuildState, wheel: Path) -> conda.CondaPackage:
    python = ctx.plan.python.value
    if python is None:
        raise InternalError("the conda step has no Python version", "report this as a bug")
    cuda, cudnn = variant(ctx, state)
    dynamic = (
        ctx.plan.linking.get("cuda") is not None and ctx.plan.linking["cuda"].value == "dynamic"
    )
    build = conda.build_string(python, cuda, cudnn)
    return conda.package_for(wheel, python, build, ctx.plan.cuda.value if dynamic else None)


def make_package(ctx: BuildContext, wheel: Path, package: conda.CondaPackage) -> Path:
    """The ``.conda`` file, assembled in the workspace (not yet in the channel)."""
    root = ctx.workspace.root / STAGE
    shutil.rmtree(root, ignore_errors=True)
    python = ctx.plan.python.value or ""
    conda.stage_wheel(wheel, root / "files", python)
    made = conda.assemble(root / "files", root / "out", package)
    shutil.rmtree(root / "files")
    return made


def run(ctx: BuildContext, state: BuildState) -> None:
    wheel = state.published[0] if state.published else state.need_wheel()
    package = package_of(ctx, state, wheel)
    channel = ctx.options.output_dir / CHANNEL
    with ctx.stage(STAGE, f"{package.filename} into the channel {channel}"):
        done = add_to_channel(make_package(ctx, wheel, package), channel)
    ctx.reporter.message(f"conda: {done.artifact} {done.outcome} ({channel})")
