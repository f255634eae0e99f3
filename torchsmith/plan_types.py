"""The types a :class:`~torchsmith.plan_model.BuildPlan` carries for its features: the companion
build (companions built against a torch) and the compiler cache. Pure, JSON-serialisable data; they
live with the plan so that no plan type imports a feature package (``companions/`` and ``cache/``
import them from here)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from torchsmith.spec import CacheKind


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TorchFacts(_Frozen):
    """The torch companions are built against: the one ``--against`` names, as ``torchsmith
    inspect`` read it before planning, or (kind ``build``) the torch the same build makes — its
    wheel file and ``Requires-Dist`` are known once it is published, and the companion step
    fills them in."""

    kind: Literal["wheel", "python", "build"]
    location: str = Field(
        description="the wheel file, or the interpreter; '' for a torch this build makes"
    )
    version: str = Field(description="the distribution's metadata version ('2.6.0')")
    runtime_version: str | None = Field(
        None, description="torch.__version__ as built into it ('2.6.0+cu124')"
    )
    cuda: str | None = Field(description="torch.version.cuda; None for a CPU build")
    arch_list: list[str] = Field(default_factory=list)
    cxx11_abi: bool | None
    abi_evidence: str
    python: str | None = Field(description="the Python it is for ('3.11')")
    requires_dist: list[str] = Field(
        default_factory=list, description="the wheel's own Requires-Dist"
    )


class EnvValue(_Frozen):
    """One environment variable of a companion's build, with the reason and its source."""

    name: str
    value: str
    reason: str


class OwnSource(_Frozen):
    """A companion's source other than Debian's source package: a git repository at a tag or
    commit (the default for ``--source git``), a path or a tarball."""

    kind: Literal["path", "tarball", "git"]
    location: str = Field(description="the repository URL, the directory, or the tarball")
    ref: str = Field("", description="git: the tag or commit fetched ('' otherwise)")
    git_mirror: str | None = Field(None, description="git: the --git-mirror it is fetched through")
    commit: str | None = Field(
        None, description="git: the commit the tag must resolve to (None: not pinned, warned)"
    )


class CompanionBuild(_Frozen):
    """One companion: where its source comes from and how it is built."""

    name: str
    version: str
    package: str = Field(description="Debian source package, e.g. 'pytorch-vision'")
    debian_version: str = Field("", description="'' when the companion has its own source")
    suite: str = ""
    source: OwnSource | None = Field(
        None, description="its source (git/path/tarball); None: Debian's source package"
    )
    env: list[EnvValue]
    system_packages: list[EnvValue] = Field(
        default_factory=list,
        description="Debian/Ubuntu packages its build needs on the machine (name, reason)",
    )
    smoke: str = Field(description="what the smoke test checks in a fresh venv")
    reason: str


class CompanionBuildPlan(_Frozen):
    """The companions of a build: the torch they are built against (``--against``'s, or the one
    this build makes), and each companion in build order."""

    torch: TorchFacts
    builds: list[CompanionBuild]
    max_jobs: int
    cuda: str | None = Field(
        None, description="the CUDA their ops are compiled with (the plan's toolkit); None: CPU"
    )
    arch_list: str = Field("", description="TORCH_CUDA_ARCH_LIST of their CUDA ops ('' for CPU)")


RemoteKind = Literal["redis", "webdav", "s3"]
SCHEMES: dict[str, RemoteKind] = {
    "redis": "redis",
    "rediss": "redis",
    "http": "webdav",
    "https": "webdav",
    "s3": "s3",
}


class CachePlan(_Frozen):
    """Where the compiler cache stores, level by level, and why."""

    kind: CacheKind
    local_dir: str | None = Field(None, description="the first level; None: <cache root>/<kind>")
    shared_dir: bool = Field(False, description="local_dir is shared with other builds/users")
    remote: str | None = Field(None, description="the remote URL (never with credentials)")
    remote_kind: RemoteKind | None = None
    remote_read_only: bool = Field(False, description="the remote is read, never written")
    endpoint: str | None = None
    region: str | None = None
    username: str | None = None
    credentials_env: str | None = Field(None, description="variable holding the secret")
    credentials_file: str | None = Field(None, description="mode-600 file holding the secret")
    basedir: str | None = Field(None, description="None: the cache root")
    size: str | None = None
    cluster: str | None = Field(None, description="sccache-dist scheduler URL")
    cluster_slots: int | None = None
    cluster_token_env: str | None = None
    local_jobs: int | None = Field(
        None, description="MAX_JOBS without the cluster (used when it does not answer)"
    )
    reason: str = ""


def remote_kind_of(location: str) -> RemoteKind | None:
    scheme, sep, _ = location.partition("://")
    return SCHEMES.get(scheme.lower()) if sep else None
