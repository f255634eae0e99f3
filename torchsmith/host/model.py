"""HostFacts: what this machine has. Produced by :mod:`torchsmith.host.probe` (real probes) or
built directly in tests. Pure data; the planner reads it and never probes by itself."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Tool(_Frozen):
    name: str
    path: str
    version: str | None = Field(None, description="None when the version could not be read")


Family = Literal["gcc", "clang"]
"""Compiler families the planner chooses between."""


class Compiler(_Frozen):
    family: Family
    version: str = Field(description="full version, e.g. '12.2.0'")
    cc: str = Field(description="path of the C compiler")
    cxx: str | None = Field(None, description="path of the C++ compiler, None if missing")

    @property
    def major(self) -> int:
        return int(self.version.split(".")[0])

    @property
    def label(self) -> str:
        return f"{self.family}-{self.major}"


class CudaToolkit(_Frozen):
    root: str = Field(description="toolkit root (CUDA_HOME)")
    nvcc: str
    version: str = Field(description="'12.4' (major.minor) as nvcc reports it")
    origin: str = Field(description="how it was found: CUDA_HOME, PATH, /usr/local/cuda-X, ...")


class GpuInfo(_Frozen):
    index: int
    name: str
    compute_capability: str = Field(description="'9.0'")
    memory_mib: int | None = None
    uuid: str | None = None


class PythonInfo(_Frozen):
    path: str
    version: str = Field(description="'3.11.7'")

    @property
    def minor(self) -> str:
        return ".".join(self.version.split(".")[:2])


class HostFacts(_Frozen):
    os_id: str = ""
    os_version: str = ""
    os_codename: str = Field("", description="VERSION_CODENAME of /etc/os-release: 'bookworm'")
    machine: str = "x86_64"
    glibc: str | None = None
    cores: int = 1
    ram_gib: float = 0.0
    disk_free_gib: float = 0.0
    disk_path: str = "."
    compilers: list[Compiler] = Field(default_factory=list)
    cuda_toolkits: list[CudaToolkit] = Field(default_factory=list)
    cudnn_versions: list[str] = Field(default_factory=list)
    nccl_versions: list[str] = Field(default_factory=list)
    gpus: list[GpuInfo] = Field(default_factory=list)
    driver_version: str | None = None
    driver_cuda: str | None = Field(None, description="newest CUDA the driver supports, '13.0'")
    pythons: list[PythonInfo] = Field(default_factory=list)
    tools: dict[str, Tool] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)
