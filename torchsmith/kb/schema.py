"""The knowledge base's schema: pydantic models of its records, validating every record of the
data files when ``kb/data/compiled.json`` is written (``scripts/compile_kb.py``), whenever it is
stale, and in the unit tier. Every record names its sources: ``sources`` maps a field name (or
``"*"`` for every field) to where the fact comes from — ``owner/repo@tag:path`` or a
documentation URL. A non-empty fact without a source is a load error. The planner reads the
records as :mod:`torchsmith.kb.models` (frozen dataclasses of the same fields: start-up time).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from torchsmith.kb.models import CC_RE, SOURCE_RE, VERSION_RE


class Sourced(BaseModel):
    """A record whose facts each carry a source."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
    # Fields that identify the record rather than state a fact about it.
    identity: ClassVar[frozenset[str]] = frozenset()

    sources: dict[str, str] = Field(
        description="field name (or '*') -> 'owner/repo@tag:path' or URL, with optional note"
    )
    notes: str = ""

    @model_validator(mode="after")
    def _every_fact_has_a_source(self) -> Sourced:
        bad = [s for s in self.sources.values() if not SOURCE_RE.match(s)]
        if bad:
            raise ValueError(f"malformed source(s) {bad}: use owner/repo@tag:path or a URL")
        if "*" in self.sources:
            return self
        unsourced = [
            name
            for name in type(self).model_fields
            if name not in {"sources", "notes"} | self.identity
            and _is_fact(getattr(self, name))
            and name not in self.sources
        ]
        if unsourced:
            raise ValueError(f"fact(s) without a source: {', '.join(unsourced)}")
        return self


def _is_fact(value: Any) -> bool:
    return value is not None and not (isinstance(value, (list, dict, str)) and len(value) == 0)


class Release(Sourced):
    """One torch release and what goes with it."""

    identity: ClassVar[frozenset[str]] = frozenset({"torch", "tag"})
    torch: str = Field(pattern=r"^(\d+\.\d+\.\d+|main)$")
    tag: str
    date: str | None = None
    torchvision: str | None = Field(None, description="None: no matching release exists")
    torchaudio: str | None = None
    torchtext: str | None = None
    python_min: str = Field(pattern=VERSION_RE)
    python_max: str = Field(pattern=VERSION_RE)
    cuda: list[str] = Field(default_factory=list, description="CUDA versions of official binaries")
    cxx_standard: int
    gcc_min: str | None = None
    cuda_min: str | None = Field(None, description="oldest CUDA a source build accepts")
    cudnn_min: str | None = None
    cmake_min: str | None = None
    frontend: Literal["setup.py", "pep517"] = Field(
        description="setup.py bdist_wheel, or a PEP 517 frontend (pip wheel / python -m build)"
    )
    env_style: Literal["legacy-no", "forward-prefixes"] = Field(
        description="legacy-no: setup.py reads NO_*/WITH_* itself (<=1.1); forward-prefixes: "
        "setup.py forwards every BUILD_*, USE_*, CMAKE_* env var to CMake (>=1.2)"
    )
    split_cuda: bool = Field(False, description="BUILD_SPLIT_CUDA is understood")
    cxx11_abi_official: bool | None = Field(None, description="_GLIBCXX_USE_CXX11_ABI of wheels")
    commit: str | None = Field(
        None, pattern=r"^[0-9a-f]{40}$", description="commit of the tag, checked on git fetch"
    )


class CudaRelease(Sourced):
    """One CUDA toolkit release: host compilers it accepts and archs it compiles."""

    identity: ClassVar[frozenset[str]] = frozenset({"version"})
    version: str = Field(pattern=r"^\d+\.\d+$")
    gcc_max: int
    clang_max: int | None = None
    archs: list[str] = Field(description="compute capabilities nvcc can compile, e.g. '8.6'")
    deprecated_archs: list[str] = Field(default_factory=list)
    driver_min_linux: str | None = None


class OfficialArchList(Sourced):
    """The TORCH_CUDA_ARCH_LIST of the official binaries for a range of torch × one CUDA."""

    identity: ClassVar[frozenset[str]] = frozenset({"torch", "cuda"})
    torch: str = Field(description="a PEP 440 specifier set, e.g. '>=2.4,<2.6'")
    cuda: str = Field(pattern=r"^\d+\.\d+$")
    arch_list: str = Field(description="as in TORCH_CUDA_ARCH_LIST, e.g. '5.0;6.0;7.0;8.0;9.0+PTX'")


class Gpu(Sourced):
    """A GPU model and its compute capability."""

    identity: ClassVar[frozenset[str]] = frozenset({"name"})
    name: str
    aliases: list[str] = Field(default_factory=list)
    compute_capability: str = Field(pattern=CC_RE)
    family: Literal["datacenter", "workstation", "geforce", "jetson", "other"]
    architecture: str = Field(description="Kepler, Maxwell, ..., Hopper, Blackwell")


class BuildOption(Sourced):
    """One build switch: its spelling per era, default and meaning."""

    identity: ClassVar[frozenset[str]] = frozenset({"name"})
    name: str = Field(pattern=r"^(USE|BUILD)_[A-Z0-9_]+$|^[A-Z][A-Z0-9_]+$")
    feature: str | None = Field(None, description="the Features field it implements, if any")
    legacy: str | None = Field(
        None, description="the <=1.1 spelling, e.g. NO_CUDA (inverted) or WITH_CUDA"
    )
    legacy_inverted: bool = Field(False, description="legacy spelling means 'off' when set")
    since: str | None = Field(None, description="first torch release that reads it")
    until: str | None = Field(None, description="last torch release that reads it")
    default: str | None = Field(None, description="default value, may say 'ON if CUDA found'")
    description: str


class FixApplies(BaseModel):
    """When a known fix applies: PEP 440 specifier sets per component; empty = any."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
    torch: str = ""
    cuda: str = ""
    gcc: str = ""
    python: str = ""
    source: str = Field("", description="source kind: git, debian, ... (empty = any)")
    python_packages: Literal["", "system", "pypi"] = Field(
        "",
        description="where the build's Python packages come from: 'system' (Debian's route over "
        "its own python3 and python3-* packages), 'pypi' (a venv filled from PyPI); empty = any",
    )
    cpu: bool | None = Field(None, description="only CPU (True) or only CUDA (False) builds")


class PatchEdit(BaseModel):
    """One literal edit of a source file: replace ``find`` with ``replace`` exactly once."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
    path: str
    find: str
    replace: str


class Fix(Sourced):
    """A known fix for a version combination."""

    identity: ClassVar[frozenset[str]] = frozenset({"id"})
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]+$")
    title: str
    applies: FixApplies
    action: Literal["env", "patch", "refuse", "command"]
    env: dict[str, str] = Field(default_factory=dict)
    edits: list[PatchEdit] = Field(default_factory=list)
    command: list[str] = Field(default_factory=list, description="argv run in the source root")
    advice: str = Field("", description="for 'refuse': what to do instead")
    explanation: str


class DebianPackage(Sourced):
    """A Debian source package of a torch (or companion) release."""

    identity: ClassVar[frozenset[str]] = frozenset({"package", "version"})
    package: str
    version: str = Field(description="Debian version, e.g. '1.13.1+dfsg-4'")
    upstream: str = Field(description="upstream release it packages, e.g. '1.13.1'")
    suite: str = Field(description="Debian suite carrying it: bookworm, trixie, ...")
    python: str | None = Field(None, description="the suite's python3 (minor) it builds with")
    dsc_sha256: str | None = Field(
        None, pattern=r"^[0-9a-f]{64}$", description="sha256 of the .dsc file, checked on fetch"
    )


class ArchSuffix(Sourced):
    """An architecture suffix ('a': arch-specific, 'f': family-specific) of a compute
    capability: the first CUDA that compiles it, and whether torch's arch-list parser accepts it."""

    identity: ClassVar[frozenset[str]] = frozenset({"suffix"})
    suffix: str = Field(pattern=r"^[a-z]$")
    meaning: str
    cuda_min: str = Field(pattern=r"^\d+\.\d+$")
    torch_accepts: bool = Field(description="TORCH_CUDA_ARCH_LIST accepts e.g. '9.0<suffix>'")


class ArchParser(Sourced):
    """What one range of torch releases accepts as a GPU target: the numeric pattern and names
    of its CMake arch parser, the archs its extension builder (and so every companion) accepts,
    and the free-threaded Pythons it has official wheels for. Generated by
    scripts/refresh_ranges.py from each release's own files."""

    identity: ClassVar[frozenset[str]] = frozenset({"torch"})
    torch: str = Field(description="a PEP 440 specifier set of torch releases")
    cmake_pattern: str = Field(description="regex a numeric TORCH_CUDA_ARCH_LIST entry must match")
    cmake_names: list[str] = Field(default_factory=list)
    extension_archs: list[str] = Field(
        default_factory=list,
        description="torch.utils.cpp_extension supported_arches; [] = no check",
    )
    extension_names: list[str] = Field(default_factory=list)
    free_threaded: list[str] = Field(
        default_factory=list, description="Pythons with official free-threaded (cpXYt) wheels"
    )
