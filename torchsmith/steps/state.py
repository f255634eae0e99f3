"""The types steps share: what each step leaves for the later ones. Steps import this module,
never each other; the pipeline hands one :class:`BuildState` from step to step."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from torchsmith.cache import CacheStats, CompilerCache
from torchsmith.errors import InternalError
from torchsmith.sources.base import SourceTree

if TYPE_CHECKING:
    from torchsmith.steps.companion.run import CompanionRun

T = TypeVar("T")


@dataclass(frozen=True)
class Toolchain:
    """The programs the build uses, as full paths, and their versions (for the manifest)."""

    cc: str
    cxx: str
    cmake: str
    ninja: str
    python: str
    cache: str | None
    versions: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class BuildEnv:
    """The Python and the variables every later stage runs with."""

    python: Path
    env: dict[str, str]
    cache: CompilerCache
    set_keys: frozenset[str]


@dataclass(frozen=True)
class CompileResult:
    targets: list[str]
    edges_run: int
    edges_total: int
    seconds_by_kind: dict[str, float]
    cache: CacheStats | None
    cpu: dict[str, Any] | None = None
    """CPU utilisation while ninja ran (torchsmith.host.cpu), None without samples."""


@dataclass(frozen=True)
class Toolkit:
    """The CUDA toolkit's variables (CUDA_HOME, PATH…) over the base environment."""

    env: dict[str, str]
    record: dict[str, Any] | None


def build_dir(tree: Path) -> Path:
    """CMake's build directory inside a source tree (where setup.py puts it too)."""
    return tree / "build"


@dataclass
class BuildState:
    """What the steps of one build have produced so far. A step reads what earlier steps
    wrote through the ``need_*`` accessors, which fail loudly when the plan's order is wrong."""

    tools: Toolchain
    base_env: dict[str, str]
    fetched: SourceTree | None = None
    tree: Path | None = None
    toolkit: Toolkit | None = None
    benv: BuildEnv | None = None
    fixes: list[dict[str, str]] = field(default_factory=list)
    compiled: CompileResult | None = None
    wheel: Path | None = None
    repaired: dict[str, Any] | None = None
    verified: dict[str, Any] | None = None
    published: list[Path] = field(default_factory=list)
    installed: dict[str, Any] | None = None
    manifest: dict[str, Any] = field(default_factory=dict)
    manifest_paths: list[Path] = field(default_factory=list)
    artifacts: list[dict[str, Any]] = field(default_factory=list)
    executed: list[str] = field(default_factory=list)
    attestations: list[Path] = field(default_factory=list)
    """The SBOM, provenance and envelope files the attest step wrote."""
    companions: CompanionRun | None = None
    """The companions' part of the run (made by their first environment step)."""

    def need_fetched(self) -> SourceTree:
        return _need(self.fetched, "the fetched source", "fetch")

    def need_tree(self) -> Path:
        fetched = self.need_fetched()
        return self.tree or fetched.root

    def need_benv(self) -> BuildEnv:
        return _need(self.benv, "the build environment", "environment")

    def need_compiled(self) -> CompileResult:
        return _need(self.compiled, "the compile result", "compile")

    def need_wheel(self) -> Path:
        return _need(self.wheel, "the wheel", "package")

    def build_env_base(self) -> dict[str, str]:
        """The base environment, with the CUDA toolkit's variables once it is provisioned."""
        return self.toolkit.env if self.toolkit else dict(self.base_env)


def _need(value: T | None, what: str, step: str) -> T:
    if value is None:
        raise InternalError(
            f"{what} is needed before the {step!r} step ran",
            "the plan's steps are out of order; report this as a torchsmith bug",
        )
    return value
