"""Provider ``system``: a toolkit the host probe found (CUDA_HOME, nvcc on PATH,
/usr/local/cuda-X.Y, Debian's /usr/lib/nvidia-cuda-toolkit, pip layouts). Nothing is downloaded;
the record points at the toolkit where it is."""

from __future__ import annotations

import shutil
from pathlib import Path

from torchsmith.errors import HostError
from torchsmith.host.cuda import DEBIAN_ROOT
from torchsmith.host.model import HostFacts
from torchsmith.host.selection import select_cuda
from torchsmith.planner.toolkit_offers import Offer, ProviderName, system_offer
from torchsmith.toolchains.cuda import cache, debian_layout, layout
from torchsmith.toolchains.cuda.base import ProvideContext, ToolkitRecord


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
        root, nvcc = Path(found.root), Path(found.nvcc)
        if root == DEBIAN_ROOT and layout.missing_parts(root):
            root = debian_system_root(cuda, ctx.cache_root)
            nvcc = root / "bin" / "nvcc"
        missing = layout.missing_parts(root)
        if missing:
            raise HostError(
                f"the CUDA {cuda} at {found.root} lacks {', '.join(missing)}",
                "install the toolkit's development parts, or use --toolkit pypi/apt",
            )
        _release, full = layout.nvcc_full_version(nvcc, ctx.env, ctx.runner)
        return ToolkitRecord(
            provider=self.name,
            cuda=cuda,
            version=full,
            root=str(root),
            nvcc=str(nvcc),
            origin=f"host: {found.origin}",
        )


def debian_system_root(cuda: str, cache_root: Path, prefix: Path = Path("/")) -> Path:
    """A standard toolkit root (include/, lib64/, nvvm/, bin/nvcc) over Debian's
    nvidia-cuda-toolkit installed under / — the layout the ``apt`` provider builds over its
    unpacked packages: headers in /usr/include, libraries in /usr/lib/x86_64-linux-gnu, only the
    tools in /usr/lib/nvidia-cuda-toolkit. Without it, a toolkit that torchsmith's own apt route
    installed (as root with --install-deps) was refused by the next build for lacking
    include/cuda_runtime.h and nvvm/libdevice."""
    root = cache.entry_dir(cache_root, "system", f"{cuda}-debian") / "root"
    if not layout.missing_parts(root) and (root / "bin" / "nvcc").exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    root.parent.mkdir(parents=True, exist_ok=True)
    debian_layout.make_root(prefix, root)
    return root
