"""The CUDA toolkit provider interface and the record a provisioned toolkit leaves behind.

A provider answers two questions: *can you supply CUDA X.Y here, and how much of it?* (pure,
plan time: :meth:`ToolkitProvider.offer`) and *supply it* (:meth:`ToolkitProvider.provide`,
which downloads into torchsmith's cache and returns a :class:`ToolkitRecord`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from torchsmith.host.model import HostFacts
from torchsmith.planner.toolkit_offers import Offer, ProviderName
from torchsmith.runner import Runner


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PackageRecord(_Frozen):
    """One downloaded package (wheel or .deb) a toolkit was made of."""

    name: str
    version: str
    sha256: str = Field(description="of the downloaded file; '' for a system toolkit")
    filename: str = ""


class ToolkitRecord(_Frozen):
    """A usable toolkit root and what it is made of; stored in the manifest."""

    provider: ProviderName
    cuda: str = Field(description="'13.0' (major.minor)")
    version: str = Field(description="nvcc's full version, '13.0.88'")
    root: str = Field(description="toolkit root: bin/nvcc, include/, lib64/, nvvm/")
    nvcc: str
    origin: str = Field(description="where it came from: an index, a Debian suite, a path")
    packages: list[PackageRecord] = Field(default_factory=list)

    def env(self) -> dict[str, str]:
        """Variables that point PyTorch's CMake (FindCUDA and FindCUDAToolkit) here."""
        return {
            "CUDA_HOME": self.root,
            "CUDA_PATH": self.root,
            "CUDA_TOOLKIT_ROOT_DIR": self.root,
            "CUDA_BIN_PATH": str(Path(self.root) / "bin"),
            "CUDACXX": self.nvcc,
            "CUDA_NVCC_EXECUTABLE": self.nvcc,
        }


@dataclass(frozen=True)
class ProvideContext:
    """Where and how a provider may work."""

    cache_root: Path
    env: Mapping[str, str]
    runner: Runner
    """Where the provider's commands run: the build's executor (this machine: ``proc.HOST``)."""
    log_path: Path | None = None
    install_deps: bool = False
    is_root: bool = False


class ToolkitProvider(Protocol):
    name: ProviderName

    def offer(self, cuda: str, host: HostFacts) -> Offer:
        """Pure: can this provider supply CUDA ``cuda`` (major.minor) on ``host``?"""
        ...

    def provide(self, cuda: str, host: HostFacts, ctx: ProvideContext) -> ToolkitRecord:
        """Supply it (from the cache when already there) and return its record."""
        ...
