"""The inspection result: a frozen, JSON-serialisable record of what a wheel or an installed
torch really holds. Keys are stable (documented in docs/inspect.md); bump
:data:`INSPECTION_SCHEMA_VERSION` when one changes meaning."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

INSPECTION_SCHEMA_VERSION = 1

Component = Literal["cudart", "cudnn", "nccl", "cublas"]
LinkMode = Literal["dynamic", "static", "pip-deps", "none"]
Provider = Literal["bundled", "system", "driver", "pip", "found", "external", "missing"]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ArchCode(_Frozen):
    """All code for one target inside one library's fat binaries."""

    arch: str = Field(description="'sm_90', 'sm_90a' (SASS) or 'compute_90' (PTX)")
    kind: Literal["sass", "ptx"]
    entries: int = Field(description="code objects for this target")
    containers: int = Field(description="fat binary containers (≈ translation units) holding it")
    stored_bytes: int = Field(
        description="bytes in the file (compressed when the build compressed)"
    )
    uncompressed_bytes: int
    code_versions: list[str] = Field(description="'major.minor' seen; the PTX ISA for PTX")


class GpuCode(_Frozen):
    """A library's GPU code. ``sass``/``ptx`` hold the targets found in at least half of the
    containers — the build's arch list; rarer targets (kernels built for one arch on purpose,
    e.g. sm_90a) are listed in ``extra``."""

    containers: int
    sass: list[str]
    ptx: list[str]
    extra: list[str]
    archs: list[ArchCode]
    fatbin_bytes: int
    relocatable_bytes: int = Field(description="size of __nv_relfatbin (device-link input)")


class Dependency(_Frozen):
    soname: str
    provider: Provider = Field(
        description="bundled (in torch), system (manylinux allow-list), driver (libcuda), pip "
        "(an nvidia-* package via RPATH), found (resolved on disk), external (must come from "
        "the system), missing (not found)"
    )
    path: str | None = None


class Library(_Frozen):
    path: str = Field(description="path relative to site-packages, e.g. 'torch/lib/libc10.so'")
    size: int
    needed: list[Dependency]
    rpath: list[str]
    runpath: list[str]
    glibc: str | None = Field(description="newest GLIBC_ symbol version needed")
    glibcxx: str | None
    cxxabi: str | None
    compilers: list[str] = Field(description=".comment notes, e.g. 'GCC: (GNU) 13.3.1'")
    cxx11_symbols: int = Field(
        description="torch's own dynamic symbol names (c10::, at::, torch::) spelling "
        "std::string as std::__cxx11 (libstdc++'s own std:: names are not counted)"
    )
    old_abi_symbols: int = Field(
        default=0, description="torch's own dynamic symbol names spelling std::string 'Ss'"
    )
    static_components: list[Component]
    gpu: GpuCode | None


class ComponentLink(_Frozen):
    component: Component
    mode: LinkMode
    libraries: list[str] = Field(description="torch libraries that link or contain it")
    sonames: list[str]
    evidence: str


class BuildConfig(_Frozen):
    """``torch.__config__.show()`` parsed (installed torch), or what the files say (wheel)."""

    source: Literal["show", "files"]
    cuda_runtime: str | None = None
    cudnn: str | None = None
    nccl: str | None = None
    mkl: str | None = None
    mkldnn: str | None = None
    openmp: str | None = None
    lapack: bool | None = None
    compiler: str | None = None
    cxx_standard: str | None = None
    cxx_flags: str | None = None
    cpu_capability: str | None = None
    nvcc_arch_flags: str | None = None
    use: dict[str, bool] = Field(default_factory=dict, description="USE_* build settings")
    settings: dict[str, str] = Field(
        default_factory=dict, description="every 'Build settings' pair"
    )
    raw: str | None = None


class WheelInfo(_Frozen):
    filename: str
    tags: list[str]
    generator: str | None
    requires_dist: list[str]
    glibc_allowed: str | None = Field(
        description="oldest glibc any manylinux tag claims (every tag is a claim)"
    )
    honest: bool | None = Field(description="the glibc floor fits the tag (None: no manylinux tag)")
    problems: list[str]


class CrossCheck(_Frozen):
    tool: str
    agrees: bool
    differences: list[str]


class Sizes(_Frozen):
    total: int
    by_library: dict[str, int]
    by_arch: dict[str, int] = Field(description="stored fat binary bytes per target, all libs")


class Inspection(_Frozen):
    schema_version: int = INSPECTION_SCHEMA_VERSION
    source: Literal["wheel", "installed"]
    location: str
    torch_version: str | None
    git_version: str | None
    cuda: str | None = Field(description="torch.version.cuda; None for CPU builds")
    debug: bool | None
    arch_list: list[str] = Field(description="the compiled-in list get_arch_list() returns")
    sass: list[str] = Field(description="SASS targets of the build (union over libraries)")
    ptx: list[str]
    extra_archs: list[str]
    config: BuildConfig
    cxx11_abi: bool | None
    cxx11_abi_evidence: str
    glibc: str | None
    glibcxx: str | None
    cxxabi: str | None
    linkage: list[ComponentLink]
    missing: list[str]
    libraries: list[Library]
    sizes: Sizes
    wheel: WheelInfo | None = None
    cross_check: CrossCheck | None = None

    def library(self, name: str) -> Library | None:
        """The library whose file name is ``name`` (e.g. 'libtorch_cuda.so')."""
        return next((lib for lib in self.libraries if lib.path.rsplit("/", 1)[-1] == name), None)

    def link(self, component: Component) -> ComponentLink:
        return next(link for link in self.linkage if link.component == component)
