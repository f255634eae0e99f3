"""What each toolkit provider can do for a CUDA version on a host — decided from host facts
alone, at plan time. Pure: nothing here starts a process (the providers' ``provide`` methods,
in their own modules, do the downloading). The planner imports this, never the providers; the
providers (:mod:`torchsmith.toolchains.cuda`) import their offer types from here."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from torchsmith.host.model import HostFacts
from torchsmith.host.selection import select_cuda

# pypi: NVIDIA's CUDA wheels; from CUDA 13 one `cuda-toolkit` wheel set holds nvcc too
# (https://pypi.org/project/cuda-toolkit/), 11.x/12.x wheels hold libraries only.
FULL_TOOLKIT_MAJOR = 13
EXTRAS = "nvcc,cccl,cudart"
WHEEL_MACHINES = frozenset({"x86_64", "aarch64"})

# apt: the Debian suite whose non-free nvidia-cuda-toolkit is this CUDA
# (https://packages.debian.org/bookworm/nvidia-cuda-toolkit: 11.8.89;
#  https://packages.debian.org/trixie/nvidia-cuda-toolkit: 12.4.131)
SUITES = {"11.8": "bookworm", "12.4": "trixie"}
DEBIAN_LIKE = frozenset({"debian", "ubuntu"})

ProviderName = Literal["system", "pypi", "apt"]
# toolkit: nvcc + headers + runtime (can compile); libraries: runtime libraries only (PyPI's
# -cu11/-cu12 wheels: ptxas and libNVVM, no nvcc); none: cannot supply this version.
Capability = Literal["toolkit", "libraries", "none"]


@dataclass(frozen=True)
class Offer:
    """What a provider can do for one CUDA version on one host, and why."""

    provider: ProviderName
    capability: Capability
    reason: str


Offerer = Callable[[str, HostFacts], Offer]


def requirement(cuda: str) -> str:
    """The pip requirement of a whole CUDA release: the newest patch of ``cuda``."""
    return f"cuda-toolkit[{EXTRAS}]=={cuda}.*"


def prefix(cuda: str) -> str:
    return f"nvidia/cu{cuda.split('.', maxsplit=1)[0]}"


def has_apt(host: HostFacts) -> bool:
    """apt-get and dpkg are here: probed as tools, or implied by a Debian/Ubuntu host (the host
    probe's default tool list does not include them)."""
    probed = "apt-get" in host.tools and "dpkg" in host.tools
    return probed or host.os_id in DEBIAN_LIKE


def system_offer(cuda: str, host: HostFacts) -> Offer:
    found = select_cuda(host, cuda)
    if found is None:
        have = ", ".join(f"{t.version} ({t.root})" for t in host.cuda_toolkits) or "none"
        return Offer("system", "none", f"no CUDA {cuda} on this machine (found: {have})")
    return Offer("system", "toolkit", f"CUDA {cuda} found at {found.root} ({found.origin})")


def pypi_offer(cuda: str, host: HostFacts) -> Offer:
    major = int(cuda.split(".", maxsplit=1)[0])
    if host.machine not in WHEEL_MACHINES:
        why = f"NVIDIA's CUDA wheels exist for x86_64/aarch64 only, not {host.machine}"
        return Offer("pypi", "none", why)
    if major >= FULL_TOOLKIT_MAJOR:
        why = (
            f"CUDA {cuda}: complete toolkit from NVIDIA's wheels ({requirement(cuda)}, "
            f"one {prefix(cuda)}/ prefix), installed into torchsmith's cache"
        )
        return Offer("pypi", "toolkit", why)
    if major in (11, 12):
        why = (
            f"CUDA {cuda}: PyPI's -cu{major} wheels hold the libraries (cuBLAS, cuDNN, "
            "NCCL…) and only ptxas/libNVVM, no nvcc: libraries only"
        )
        return Offer("pypi", "libraries", why)
    return Offer("pypi", "none", f"no CUDA {cuda} wheels on PyPI")


def apt_offer(cuda: str, host: HostFacts) -> Offer:
    suite = SUITES.get(cuda)
    if suite is None:
        why = f"no Debian suite packages CUDA {cuda} (bookworm: 11.8, trixie: 12.4)"
        return Offer("apt", "none", why)
    if host.machine != "x86_64":
        return Offer("apt", "none", f"Debian's CUDA packages are amd64 only, not {host.machine}")
    if not has_apt(host):
        return Offer("apt", "none", "apt-get/dpkg not found on this machine")
    why = (
        f"CUDA {cuda}: Debian {suite} non-free nvidia-cuda-toolkit, fetched with "
        "apt-get download + dpkg -x into torchsmith's cache (no root needed)"
    )
    return Offer("apt", "toolkit", why)


OFFERERS: Mapping[ProviderName, Offerer] = {
    "system": system_offer,
    "pypi": pypi_offer,
    "apt": apt_offer,
}
"""In order of preference: what the machine has, then downloads."""
