"""Choosing a toolkit provider for a CUDA version (pure, plan time), and the refusal that names
what *could* supply a version none of ours can."""

from __future__ import annotations

from collections.abc import Sequence

from torchsmith.errors import PlanError, Problem
from torchsmith.host.model import HostFacts
from torchsmith.toolchains.cuda.apt import AptProvider
from torchsmith.toolchains.cuda.base import Offer, ToolkitProvider
from torchsmith.toolchains.cuda.pypi import PypiProvider
from torchsmith.toolchains.cuda.system import SystemProvider

# Where toolkits of any version come from when no provider of ours has it.
# (torchsmith's own container backend is not carried out yet: planner/support.py)
ELSEWHERE = (
    "a container you start yourself from an NVIDIA CUDA image (nvidia/cuda:{cuda}.*-devel; "
    "https://hub.docker.com/r/nvidia/cuda), running torchsmith inside it with --toolkit system",
    "NVIDIA's apt/dnf repository (cuda-toolkit-{dash}; "
    "https://developer.download.nvidia.com/compute/cuda/repos/)",
    "conda (conda install -c nvidia cuda-nvcc={cuda} cuda-cudart-dev={cuda}; "
    "https://anaconda.org/nvidia/cuda-nvcc), then CUDA_HOME=$CONDA_PREFIX",
)


def default_providers() -> tuple[ToolkitProvider, ...]:
    """In order of preference: what the machine has, then downloads."""
    return (SystemProvider(), PypiProvider(), AptProvider())


def offers(
    cuda: str, host: HostFacts, providers: Sequence[ToolkitProvider] | None = None
) -> list[Offer]:
    return [p.offer(cuda, host) for p in providers or default_providers()]


def unavailable(cuda: str, found: Sequence[Offer]) -> Problem:
    """The refusal: why each provider cannot, and what else can."""
    dash = cuda.replace(".", "-")
    why = "; ".join(f"{o.provider}: {o.reason}" for o in found)
    ways = "; or ".join(w.format(cuda=cuda, dash=dash) for w in ELSEWHERE)
    return Problem(
        f"no provider can supply a CUDA {cuda} compiler here ({why})", f"use {ways}", "toolkit"
    )


def select_toolkit(
    cuda: str,
    host: HostFacts,
    providers: Sequence[ToolkitProvider] | None = None,
    wanted: str | None = None,
) -> tuple[ToolkitProvider, str]:
    """The first provider (or the ``wanted`` one) that can supply a full CUDA ``cuda`` toolkit,
    with the reason. Raises :class:`PlanError` naming every alternative when none can."""
    chain = list(providers or default_providers())
    if wanted is not None:
        chain = [p for p in chain if p.name == wanted]
    found = [(p, p.offer(cuda, host)) for p in chain]
    for provider, offer in found:
        if offer.capability == "toolkit":
            return provider, offer.reason
    raise PlanError([unavailable(cuda, [o for _p, o in found])])


def toolkit_problem(
    cuda: str, host: HostFacts, providers: Sequence[ToolkitProvider] | None = None
) -> Problem | None:
    """For planners that collect problems: None when some provider can supply ``cuda``."""
    try:
        select_toolkit(cuda, host, providers)
    except PlanError as exc:
        return exc.problems[0]
    return None
