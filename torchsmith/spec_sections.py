"""The sections of a :class:`~torchsmith.spec.BuildSpec` (features, linking, companion source,
NCCL location, compiler cache, training images) and the closed vocabularies the spec uses. Part
of the spec model: import them from :mod:`torchsmith.spec`, which re-exports them."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from torchsmith.spec_companion_parts import check_parts
from torchsmith.spec_text import DebianPackage, ImageRef, PipRequirement, no_control

Linkage = Literal["dynamic", "static", "pip-deps"]
Output = Literal["wheel", "conda", "docker-image", "install"]
Backend = Literal["local", "docker", "apptainer"]
CacheKind = Literal["ccache", "sccache", "none"]
Preset = Literal["default", "official", "minimal"]
ToolkitProvider = Literal["auto", "system", "pypi", "apt", "container"]
PtxPolicy = Literal["asked", "newest", "none"]
Engine = Literal["auto", "docker", "podman", "buildah"]
BaseRecipe = Literal["auto", "image", "nvidia", "debian"]
Companion = Literal["torchvision", "torchaudio", "torchtext"]
COMPANIONS: tuple[str, ...] = ("torchvision", "torchaudio", "torchtext")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    @field_validator("*")
    @classmethod
    def _one_line(cls, value: Any) -> Any:  # every value may reach a generated file
        return no_control(value)


class Features(_Strict):
    """Feature switches. ``None`` means "what this release does by default" (see ``kb options``)."""

    distributed: bool | None = Field(None, description="torch.distributed (USE_DISTRIBUTED).")
    nccl: bool | None = Field(None, description="NCCL backend for distributed GPU work (USE_NCCL).")
    system_nccl: bool | None = Field(
        None, description="Link an NCCL found on the system instead of building the submodule."
    )
    cudnn: bool | None = Field(None, description="cuDNN kernels (USE_CUDNN).")
    mkl: bool | None = Field(None, description="Intel MKL as BLAS/LAPACK (USE_MKL).")
    mkldnn: bool | None = Field(None, description="oneDNN/MKL-DNN CPU kernels (USE_MKLDNN).")
    fbgemm: bool | None = Field(None, description="FBGEMM quantized CPU kernels (USE_FBGEMM).")
    xnnpack: bool | None = Field(None, description="XNNPACK mobile CPU kernels (USE_XNNPACK).")
    nnpack: bool | None = Field(None, description="NNPACK CPU convolutions (USE_NNPACK).")
    qnnpack: bool | None = Field(None, description="QNNPACK quantized kernels (USE_QNNPACK).")
    magma: bool | None = Field(None, description="MAGMA GPU linear algebra (USE_MAGMA).")
    kineto: bool | None = Field(None, description="Kineto profiler (USE_KINETO).")
    numa: bool | None = Field(None, description="NUMA support (USE_NUMA).")
    miopen: bool | None = Field(None, description="MIOpen (ROCm) kernels (USE_MIOPEN).")
    tests: bool | None = Field(False, description="Build the C++ tests (BUILD_TEST).")
    debug_info: bool | None = Field(
        False, description="Keep debug info: REL_WITH_DEB_INFO=1 (bigger, slower link)."
    )
    system_libs: bool | None = Field(
        None, description="Use system libraries instead of submodules (USE_SYSTEM_LIBS)."
    )
    split_cuda: bool | None = Field(
        None, description="Split libtorch_cuda into cu/cpp parts (BUILD_SPLIT_CUDA, 1.7-1.13)."
    )


class Linking(_Strict):
    """How CUDA, cuDNN and NCCL are linked. ``None`` means the release's default."""

    cuda: Linkage | None = Field(None, description="CUDA runtime and math libraries.")
    cudnn: Linkage | None = Field(None, description="cuDNN.")
    nccl: Linkage | None = Field(None, description="NCCL.")


_COMPANION_SOURCE_RE = re.compile(r"^(path:.+|tarball:.+|git(:[^#]+)?(#[^#\s]+)?|debian)$")


def _companion_source(value: str | None) -> str | None:
    if value is None:
        return None
    text = value.strip()
    if _COMPANION_SOURCE_RE.match(text):
        return text
    raise ValueError(
        f"{value!r} is not a companion source; use git (pytorch's repository at the paired "
        "tag), git#REF, git:URL[#REF], path:DIR, tarball:URL_OR_FILE[#sha256=HEX] or debian"
    )


class CompanionSource(_Strict):
    """Where a companion's source comes from, when not the default (git for ``--source git``,
    path, tarball or bundle; Debian's source package for ``--source debian``): 'git' (pytorch's
    repository at the paired tag, through ``--git-mirror``), 'git#REF' (there, a tag or
    commit), 'git:URL' (another repository at that tag) or 'git:URL#REF', 'path:DIR' (a
    checkout, copied, never modified), 'tarball:URL_OR_FILE' (optionally '#sha256=HEX') or
    'debian'."""

    torchvision: str | None = Field(None, description="torchvision's source.")
    torchaudio: str | None = Field(None, description="torchaudio's source.")
    torchtext: str | None = Field(None, description="torchtext's source.")

    @field_validator("torchvision", "torchaudio", "torchtext")
    @classmethod
    def _source(cls, value: str | None) -> str | None:
        return _companion_source(value)

    def of(self, name: str) -> str | None:
        """The source given for companion ``name``, or None (the route of ``--source``)."""
        value: str | None = getattr(self, name, None)
        return value


class CompanionWithout(_Strict):
    """Optional parts left out of a companion's build (slimmer library, shorter build): each
    part switched off by the variable its release reads (torchaudio: rnnt = BUILD_RNNT, rir =
    BUILD_RIR, align = BUILD_ALIGN; docs/companions.md). torchvision and torchtext have none."""

    torchvision: tuple[str, ...] = Field((), description="torchvision's parts left out (none).")
    torchaudio: tuple[str, ...] = Field(
        (),
        description="torchaudio's parts left out: 'rnnt' (RNN-T loss, BUILD_RNNT, 0.10-2.11), "
        "'rir' (room impulse response simulation, BUILD_RIR, 2.0.1-2.9.1), 'align' (CTC "
        "forced alignment, BUILD_ALIGN, 2.1-2.11).",
    )
    torchtext: tuple[str, ...] = Field((), description="torchtext's parts left out (none).")

    @field_validator("torchvision", "torchaudio", "torchtext")
    @classmethod
    def _parts(cls, value: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        return check_parts(str(info.field_name), value)

    def of(self, name: str) -> tuple[str, ...]:
        """The parts left out of companion ``name`` (empty: all of it is built)."""
        value: tuple[str, ...] = getattr(self, name, ())
        return value


class NcclLocation(_Strict):
    """Where a system NCCL is installed (with ``features.system_nccl``). The plan spells it the
    way the release reads it: torch <= 1.1 NCCL_ROOT_DIR, later NCCL_ROOT, and always
    NCCL_INCLUDE_DIR / NCCL_LIB_DIR."""

    root: str | None = Field(None, description="Install prefix of the system NCCL ('/usr').")
    include_dir: str | None = Field(
        None, description="Directory holding nccl.h. Default: ROOT/include."
    )
    lib_dir: str | None = Field(
        None,
        description="Directory holding libnccl.so ('/usr/lib/x86_64-linux-gnu'). "
        "Default: ROOT/lib.",
    )


_CACHE_URL_RE = re.compile(r"^(redis|rediss|http|https|s3)://[^\s]+$", re.IGNORECASE)
_SIZE_RE = re.compile(r"^\d+(\.\d+)?\s*[KMGT]i?B?$|^\d+$", re.IGNORECASE)


class CacheSpec(_Strict):
    """The compiler cache: which program, where it stores (a local or shared directory, or a
    remote every build machine reaches), and how paths are made equal between checkouts.
    Credentials never go into the spec: name the variable or the mode-600 file holding them."""

    kind: CacheKind = Field("ccache", description="Compiler cache used as compiler launcher.")
    dir: str | None = Field(
        None,
        description="The local cache directory (also: a directory shared by several builds or "
        "machines, e.g. on NFS). Default: <cache root>/<kind>.",
    )
    location: str | None = Field(
        None,
        description="A remote cache shared by every build naming it: redis://HOST:PORT[/DB], "
        "http(s)://HOST/PATH (WebDAV) or s3://BUCKET[/PREFIX] (sccache only). The local "
        "directory stays the first level. No credentials in the URL.",
    )
    endpoint: str | None = Field(
        None,
        description="S3-compatible endpoint for s3:// (http(s)://HOST:PORT); default: AWS.",
    )
    region: str | None = Field(None, description="S3 region for s3:// (default us-east-1).")
    username: str | None = Field(
        None, description="User name for the remote (Redis ACL user, WebDAV user)."
    )
    credentials_env: str | None = Field(
        None,
        description="Name of the environment variable holding the remote's password or token "
        "(for s3://: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY are read by sccache itself).",
    )
    credentials_file: str | None = Field(
        None, description="A file only you can read (mode 600) holding the password or token."
    )
    basedir: str | None = Field(
        None,
        description="Paths under this directory are hashed relative to it, so checkouts in "
        "different places share entries. Default: the cache root.",
    )
    size: str | None = Field(
        None, description="Maximum size of the local cache ('20G'). Default: the tool's."
    )
    cluster: str | None = Field(
        None,
        description="sccache-dist scheduler URL (http://HOST:PORT) to compile on build servers.",
    )
    cluster_slots: int | None = Field(
        None, ge=1, le=4096, description="Compile slots the cluster offers (sizes MAX_JOBS)."
    )
    cluster_token_env: str | None = Field(
        None, description="Name of the environment variable holding the cluster's client token."
    )
    read_only: bool = Field(
        False,
        description="Only read the remote, never write it: for builds that must not be able to "
        "change what other builds get from the cache (pull requests, machines you do not "
        "trust); let only trusted CI write it.",
    )
    allow_cleartext: bool = Field(
        False,
        description="Accept a remote (http://, redis://) or cluster (http://) on another "
        "machine in clear text: its password and every object travel unencrypted, and anyone on "
        "the path can swap objects (code in every wheel built from the cache). Default: refused "
        "when a credential would travel; use https:// or rediss://.",
    )

    @field_validator("location", "cluster", "endpoint")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        return value.strip()

    @field_validator("location")
    @classmethod
    def _location(cls, value: str | None) -> str | None:
        if value is not None and "://" in value and not _CACHE_URL_RE.match(value):
            raise ValueError(f"{value!r}: a remote cache is redis://, http(s):// (WebDAV) or s3://")
        return value

    @field_validator("size")
    @classmethod
    def _size(cls, value: str | None) -> str | None:
        if value is not None and not _SIZE_RE.match(value.strip()):
            raise ValueError(f"{value!r} is not a size like '20G' or '500M'")
        return None if value is None else value.strip()

    @property
    def remote(self) -> bool:
        return self.location is not None and "://" in self.location


class TrainingImage(_Strict):
    """One image to train in, made from the build's wheels (backend ``docker``)."""

    name: str = Field(
        pattern=r"^[a-z0-9][a-z0-9._-]{0,62}$",
        description="Image name and Dockerfile stage suffix ('train' -> stage train-train).",
    )
    base: ImageRef | None = Field(
        None, description="Base image. Default: the runtime image matching the build image."
    )
    packages: tuple[DebianPackage, ...] = Field(
        (), description="Extra OS packages (apt) to install."
    )
    requirements: tuple[PipRequirement, ...] = Field(
        (), description="Extra Python requirements (pip specifiers) to install."
    )
    tz: str = Field("UTC", description="Time zone (TZ) of the tz database, e.g. 'Asia/Seoul'.")
    user: str = Field(
        "user", pattern=r"^[a-z_][a-z0-9_-]{0,31}$", description="Name of the non-root user."
    )
    uid: int | None = Field(
        None, ge=1, le=2**31 - 1, description="User id. Default: the id of the caller."
    )
    gid: int | None = Field(
        None, ge=1, le=2**31 - 1, description="Group id. Default: the group of the caller."
    )
    workdir: str = Field(
        "/workspace", pattern=r"^/[A-Za-z0-9._/-]*$", description="Working directory."
    )
    root: bool = Field(False, description="Run as root instead of the user (not recommended).")
    python_layout: Literal["venv", "system"] = Field(
        "venv",
        description="'venv': wheels installed into /opt/venv; 'system': into the image's own "
        "Python (dist-packages), the wheels kept under /opt/wheels.",
    )

    @field_validator("tz")
    @classmethod
    def _tz(cls, value: str) -> str:
        return check_time_zone(value)

    @field_validator("user")
    @classmethod
    def _user(cls, value: str) -> str:
        if value == "root":  # trial I15: `groupadd root` failed at image build
            raise ValueError(
                "user 'root' is the image's own superuser, not a user to create; "
                "set root = true to run as root, or name another user"
            )
        return value


# An IANA tz database name: Area/Location (Etc/UTC, America/Argentina/Buenos_Aires) or a legacy
# single name (UTC, EST5EDT); no leading '/', no '..' (https://data.iana.org/time-zones/theory.html
# "Names of timezones": components of letters, digits, '_', '-', '+', '/' separated).
_TZ_FORM = re.compile(r"^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$")


def known_time_zones() -> frozenset[str]:
    """The zones of this machine's tz database (Debian's tzdata, which the images install too);
    empty where it has none (then only the form is checked)."""
    import zoneinfo  # only when an image names a time zone

    return frozenset(zoneinfo.available_timezones())


def check_time_zone(value: str, known: frozenset[str] | None = None) -> str:
    """A time zone the image's tzdata has (trial I05 'Mars/Olympus_Mons', I07 '/etc/shadow')."""
    zones = known_time_zones() if known is None else known
    if not _TZ_FORM.match(value) or (zones and value not in zones):
        import difflib

        close = difflib.get_close_matches(value, sorted(zones), n=1)
        hint = f"did you mean {close[0]!r}?" if close else "e.g. 'UTC', 'Europe/Berlin'"
        raise ValueError(f"{value!r} is not a time zone of the tz database; {hint}")
    return value
