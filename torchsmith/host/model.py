"""HostFacts: what this machine has. Produced by :mod:`torchsmith.host.probe` (real probes),
read from a recorded file (:mod:`torchsmith.host.load`) or built directly in tests. Pure data;
the planner reads it and never probes by itself. Frozen records read by
:class:`~torchsmith.kb.record.Record` (no pydantic: every command's start-up reads them)."""

from __future__ import annotations

from typing import Literal

from torchsmith.kb.record import Record, field


class Tool(Record):
    name: str
    path: str
    version: str | None = None
    """None when the version could not be read"""


Family = Literal["gcc", "clang"]
"""Compiler families the planner chooses between."""


class Compiler(Record):
    family: Family
    version: str
    """full version, e.g. '12.2.0'"""
    cc: str
    """path of the C compiler"""
    cxx: str | None = None
    """path of the C++ compiler, None if missing"""

    @property
    def major(self) -> int:
        return int(self.version.split(".")[0])

    @property
    def label(self) -> str:
        return f"{self.family}-{self.major}"


class CudaToolkit(Record):
    root: str
    """toolkit root (CUDA_HOME)"""
    nvcc: str
    version: str
    """'12.4' (major.minor) as nvcc reports it"""
    origin: str
    """how it was found: CUDA_HOME, PATH, /usr/local/cuda-X, ..."""


class GpuInfo(Record):
    index: int
    name: str
    compute_capability: str
    """'9.0'"""
    memory_mib: int | None = None
    uuid: str | None = None


class PythonInfo(Record):
    path: str
    version: str
    """'3.11.7'"""

    @property
    def minor(self) -> str:
        return ".".join(self.version.split(".")[:2])


class HostFacts(Record):
    os_id: str = ""
    os_version: str = ""
    os_codename: str = ""
    """VERSION_CODENAME of /etc/os-release: 'bookworm'"""
    machine: str = "x86_64"
    glibc: str | None = None
    cores: int = 1
    ram_gib: float = 0.0
    disk_free_gib: float = 0.0
    disk_path: str = "."
    compilers: list[Compiler] = field(default_factory=list)
    cuda_toolkits: list[CudaToolkit] = field(default_factory=list)
    cudnn_versions: list[str] = field(default_factory=list)
    nccl_versions: list[str] = field(default_factory=list)
    gpus: list[GpuInfo] = field(default_factory=list)
    driver_version: str | None = None
    driver_cuda: str | None = None
    """newest CUDA the driver supports, '13.0'"""
    pythons: list[PythonInfo] = field(default_factory=list)
    tools: dict[str, Tool] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
