"""Choosing a toolkit provider for a CUDA version (pure, plan time: only the providers' offers
of :mod:`.toolkit_offers`, never the providers themselves), and the refusal that names
what *could* supply a version none of ours can."""

from __future__ import annotations

from collections.abc import Sequence

from torchsmith.errors import PlanError, Problem
from torchsmith.host.model import HostFacts
from torchsmith.planner.toolkit_offers import OFFERERS, Offer, ProviderName

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


def offers(cuda: str, host: HostFacts) -> list[Offer]:
    return [offer(cuda, host) for offer in OFFERERS.values()]


def unavailable(cuda: str, found: Sequence[Offer]) -> Problem:
    """The refusal: why each provider cannot, and what else can."""
    dash = cuda.replace(".", "-")
    why = "; ".join(f"{o.provider}: {o.reason}" for o in found)
    ways = "; or ".join(w.format(cuda=cuda, dash=dash) for w in ELSEWHERE)
    return Problem(
        f"no provider can supply a CUDA {cuda} compiler here ({why})", f"use {ways}", "toolkit"
    )


def select_toolkit(
    cuda: str, host: HostFacts, wanted: ProviderName | None = None
) -> tuple[ProviderName, str]:
    """The first provider (or the ``wanted`` one) that can supply a full CUDA ``cuda`` toolkit,
    with the reason. Raises :class:`PlanError` naming every alternative when none can."""
    names = [n for n in OFFERERS if wanted is None or n == wanted]
    found = [OFFERERS[n](cuda, host) for n in names]
    for offer in found:
        if offer.capability == "toolkit":
            return offer.provider, offer.reason
    raise PlanError([unavailable(cuda, found)])


def toolkit_problem(cuda: str, host: HostFacts) -> Problem | None:
    """For planners that collect problems: None when some provider can supply ``cuda``."""
    try:
        select_toolkit(cuda, host)
    except PlanError as exc:
        return exc.problems[0]
    return None
