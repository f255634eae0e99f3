"""Provider ``system``: a toolkit the host probe found (CUDA_HOME, nvcc on PATH,
/usr/local/cuda-X.Y, Debian's /usr/lib/nvidia-cuda-toolkit, pip layouts). Nothing is downloaded;
the record points at the toolkit where it is."""

from __future__ import annotations

from pathlib import Path

from torchsmith.errors import HostError
from torchsmith.host.model import HostFacts
from torchsmith.host.selection import select_cuda
from torchsmith.proc import HOST
from torchsmith.toolchains.cuda import layout
from torchsmith.toolchains.cuda.base import Offer, ProvideContext, ProviderName, ToolkitRecord
from torchsmith.toolchains.cuda.offers import system_offer


class SystemProvider:
    name: ProviderName = "system"

    def offer(self, cuda: str, host: HostFacts) -> Offer:
        return system_offer(cuda, host)

    def provide(self, cuda: str, host: HostFacts, ctx: ProvideContext) -> ToolkitRecord:
        found = select_cuda(host, cuda)
        if found is None:
            raise HostError(
                f"no CUDA {cuda} toolkit on this machine",
                "install it, point CUDA_HOME at it, or use --toolkit pypi/apt",
            )
        missing = layout.missing_parts(Path(found.root))
        if missing:
            raise HostError(
                f"the CUDA {cuda} at {found.root} lacks {', '.join(missing)}",
                "install the toolkit's development parts, or use --toolkit pypi/apt",
            )
        _release, full = layout.nvcc_full_version(Path(found.nvcc), ctx.env, ctx.runner or HOST)
        return ToolkitRecord(
            provider=self.name,
            cuda=cuda,
            version=full,
            root=found.root,
            nvcc=found.nvcc,
            origin=f"host: {found.origin}",
        )
