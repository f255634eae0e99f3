"""Typed records of the knowledge base, as the planner reads them: frozen records
(:class:`~torchsmith.kb.record.Record`), no pydantic (start-up time). Their validation is
:mod:`torchsmith.kb.schema` (pydantic: patterns, and every fact naming its source), run on every
record when ``kb/data/compiled.json`` is written and whenever it is stale;
``tests/unit/kb/test_read_path.py`` checks that both define the same fields and defaults and that
every compiled record validates to the record read here. Field meanings: the schema's
descriptions.
"""

from __future__ import annotations

import re
from typing import ClassVar, Literal

from torchsmith.kb.record import Record, field

# owner/repo@tag:path, a URL, or repo:PATH (a file committed in this repository, e.g. the
# measured log excerpts under docs/measured/ that no public report shows).
SOURCE_RE = re.compile(r"^([\w.-]+/[\w.-]+@[\w./+-]+:\S+|https?://\S+|repo:[\w./-]+)(\s.*)?$")
VERSION_RE = r"^\d+\.\d+(\.\d+)?$"
CC_RE = r"^\d+\.\d+[af]?$"


class Sourced(Record):
    """A record whose facts each carry a source."""

    identity: ClassVar[frozenset[str]] = frozenset()
    sources: dict[str, str]
    notes: str = ""


class Release(Sourced):
    """One torch release and what goes with it."""

    identity: ClassVar[frozenset[str]] = frozenset({"torch", "tag"})
    torch: str
    tag: str
    date: str | None = None
    torchvision: str | None = None
    torchaudio: str | None = None
    torchtext: str | None = None
    python_min: str
    python_max: str
    cuda: list[str] = field(default_factory=list)
    cxx_standard: int
    gcc_min: str | None = None
    cuda_min: str | None = None
    cudnn_min: str | None = None
    cmake_min: str | None = None
    frontend: Literal["setup.py", "pep517"]
    env_style: Literal["legacy-no", "forward-prefixes"]
    split_cuda: bool = False
    cxx11_abi_official: bool | None = None
    commit: str | None = None


class CudaRelease(Sourced):
    """One CUDA toolkit release: host compilers it accepts and archs it compiles."""

    identity: ClassVar[frozenset[str]] = frozenset({"version"})
    version: str
    gcc_max: int
    clang_max: int | None = None
    archs: list[str]
    deprecated_archs: list[str] = field(default_factory=list)
    driver_min_linux: str | None = None


class OfficialArchList(Sourced):
    """The TORCH_CUDA_ARCH_LIST of the official binaries for a range of torch × one CUDA."""

    identity: ClassVar[frozenset[str]] = frozenset({"torch", "cuda"})
    torch: str
    cuda: str
    arch_list: str


class Gpu(Sourced):
    """A GPU model and its compute capability."""

    identity: ClassVar[frozenset[str]] = frozenset({"name"})
    name: str
    aliases: list[str] = field(default_factory=list)
    compute_capability: str
    family: Literal["datacenter", "workstation", "geforce", "jetson", "other"]
    architecture: str


class BuildOption(Sourced):
    """One build switch: its spelling per era, default and meaning."""

    identity: ClassVar[frozenset[str]] = frozenset({"name"})
    name: str
    feature: str | None = None
    legacy: str | None = None
    legacy_inverted: bool = False
    since: str | None = None
    until: str | None = None
    default: str | None = None
    description: str


class FixApplies(Record):
    """When a known fix applies: PEP 440 specifier sets per component; empty = any."""

    torch: str = ""
    cuda: str = ""
    gcc: str = ""
    python: str = ""
    source: str = ""
    python_packages: Literal["", "system", "pypi"] = ""
    cpu: bool | None = None


class PatchEdit(Record):
    """One literal edit of a source file: replace ``find`` with ``replace`` exactly once."""

    path: str
    find: str
    replace: str


class Fix(Sourced):
    """A known fix for a version combination."""

    identity: ClassVar[frozenset[str]] = frozenset({"id"})
    id: str
    title: str
    applies: FixApplies
    action: Literal["env", "patch", "refuse", "command"]
    env: dict[str, str] = field(default_factory=dict)
    edits: list[PatchEdit] = field(default_factory=list)
    command: list[str] = field(default_factory=list)
    advice: str = ""
    explanation: str


class DebianPackage(Sourced):
    """A Debian source package of a torch (or companion) release."""

    identity: ClassVar[frozenset[str]] = frozenset({"package", "version"})
    package: str
    version: str
    upstream: str
    suite: str
    python: str | None = None
    dsc_sha256: str | None = None


class ArchSuffix(Sourced):
    """An architecture suffix ('a': arch-specific, 'f': family-specific) of a compute
    capability: the first CUDA that compiles it, and whether torch's arch-list parser accepts it."""

    identity: ClassVar[frozenset[str]] = frozenset({"suffix"})
    suffix: str
    meaning: str
    cuda_min: str
    torch_accepts: bool


class ArchParser(Sourced):
    """What one range of torch releases accepts as a GPU target (see the schema's
    :class:`~torchsmith.kb.schema.ArchParser`)."""

    identity: ClassVar[frozenset[str]] = frozenset({"torch"})
    torch: str
    cmake_pattern: str
    cmake_names: list[str] = field(default_factory=list)
    extension_archs: list[str] = field(default_factory=list)
    extension_names: list[str] = field(default_factory=list)
    free_threaded: list[str] = field(default_factory=list)

    def accepts(self, entry: str) -> bool:
        """'12.0', '9.0a' or '8.6+PTX': both the CMake parser and cpp_extension take it."""
        arch = entry.removesuffix("+PTX")
        if re.fullmatch(self.cmake_pattern, arch) is None:
            return False
        return not self.extension_archs or arch in self.extension_archs
