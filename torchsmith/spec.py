"""BuildSpec: what the user asks for. One typed model; TOML, env and CLI are adapters
(:mod:`torchsmith.spec_sources`). Field descriptions feed the generated JSON schema and the
option reference, so they are the documentation.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, ConfigDict, Field, field_validator

from torchsmith.spec_text import DebianPackage, ImageRef, PipRequirement, no_control

Linkage = Literal["dynamic", "static", "pip-deps"]
Output = Literal["wheel", "conda", "docker-image", "install"]
Backend = Literal["local", "docker", "apptainer"]
CacheKind = Literal["ccache", "sccache", "none"]
Preset = Literal["default", "official", "minimal"]
ToolkitProvider = Literal["auto", "system", "pypi", "apt", "container"]
PtxPolicy = Literal["asked", "newest", "none"]
Engine = Literal["auto", "docker", "podman", "buildah"]
Companion = Literal["torchvision", "torchaudio", "torchtext"]
COMPANIONS: tuple[str, ...] = ("torchvision", "torchaudio", "torchtext")

_CUDA_RE = re.compile(r"^(?:cuda|cu)?\s*(\d{1,2})\.?(\d)$", re.IGNORECASE)
_SOURCE_RE = re.compile(r"^(git|debian|path:.+|tarball:.+|bundle:.+)$")
# A ninja/CMake target name or output path; never anything cmake could read as an option.
_TARGET_RE = re.compile(r"^[A-Za-z0-9_.+/][A-Za-z0-9_.+/-]*$")
_COMPANION_RE = re.compile(r"^(auto|torchvision|torchaudio|torchtext)(==?\d+(\.\d+)*([.+-]\w+)*)?$")
_PYTHON_RE = re.compile(r"^[23]\.\d{1,2}(\.\d+)?t?$")  # "3.13t": free-threaded (planner refuses)


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


_COMPANION_SOURCE_RE = re.compile(r"^(path:.+|tarball:.+)$")


def _companion_source(value: str | None) -> str | None:
    if value is None:
        return None
    text = value.strip()
    if _COMPANION_SOURCE_RE.match(text):
        return text
    if text in {"debian", "git"} or text.startswith("git:"):
        raise ValueError(
            f"{value!r}: a companion's own source is 'path:DIR' or 'tarball:URL_OR_FILE' "
            "(Debian's source package is what --source debian builds; a git tag: give its "
            "release tarball, e.g. tarball:https://github.com/pytorch/vision/archive/refs/tags/"
            "v0.21.0.tar.gz#sha256=HEX)"
        )
    raise ValueError(f"{value!r} is not a companion source; use path:DIR or tarball:URL_OR_FILE")


class CompanionSource(_Strict):
    """A companion's own source instead of Debian's source package: 'path:DIR' (a checkout,
    copied, never modified) or 'tarball:URL_OR_FILE' (optionally '#sha256=HEX')."""

    torchvision: str | None = Field(None, description="torchvision's source.")
    torchaudio: str | None = Field(None, description="torchaudio's source.")
    torchtext: str | None = Field(None, description="torchtext's source.")

    @field_validator("torchvision", "torchaudio", "torchtext")
    @classmethod
    def _source(cls, value: str | None) -> str | None:
        return _companion_source(value)

    def of(self, name: str) -> str | None:
        """The source given for companion ``name``, or None (Debian's source package)."""
        value: str | None = getattr(self, name, None)
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
    tz: str = Field(
        "UTC", pattern=r"^[A-Za-z0-9_+/-]+$", description="Time zone (TZ), e.g. 'Asia/Seoul'."
    )
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


class BuildSpec(_Strict):
    """Everything a user can ask of a torchsmith build."""

    torch: str | None = Field(
        None,
        description="PyTorch version: a release ('2.5.1'), 'main', or a 7-40 hex commit. "
        "Default: the newest release the knowledge base knows.",
    )
    companions: tuple[str, ...] = Field(
        (),
        description="Domain libraries to build against this torch: 'torchvision', 'torchaudio', "
        "'torchtext' (optionally '==VERSION'), or 'auto' for every one with a matching release.",
    )
    companion_source: CompanionSource = Field(
        default_factory=CompanionSource,
        description="A companion's own source instead of Debian's source package.",
    )
    against: str | None = Field(
        None,
        description="Build the companions against this torch instead of building torch: a "
        "wheel file ('dist/torch-2.6.0-cp311-…whl') or 'python:/path/to/python' (the torch "
        "that interpreter imports). Its version, CUDA and C++ ABI are read by `inspect`.",
    )
    python: str | None = Field(
        None, description="Python version to build for ('3.11'). Default: the host's if supported."
    )
    accelerator: str = Field(
        "cpu", description="'cpu' or a CUDA version ('12.4', 'cu124', 'cuda12.4')."
    )
    gpus: tuple[str, ...] = Field(
        (),
        description="GPU targets: names ('RTX 4090'), compute capabilities ('8.6', '8.6+PTX', "
        "'9.0a'), 'native' (the GPUs on this machine) or 'official' (the release's own list).",
    )
    ptx: PtxPolicy = Field(
        "asked",
        description="PTX policy: only where a target says '+PTX' ('asked'), also for the newest "
        "target ('newest', forward compatible), or never ('none').",
    )
    preset: Preset = Field(
        "default",
        description="'official' reproduces the official binaries' settings; 'minimal' turns "
        "off everything optional for the fastest build.",
    )
    features: Features = Field(default_factory=Features, description="Feature switches.")
    linking: Linking = Field(default_factory=Linking, description="Linking of CUDA libraries.")
    nccl: NcclLocation = Field(
        default_factory=NcclLocation, description="Location of a system NCCL."
    )
    toolkit: ToolkitProvider = Field(
        "auto", description="Where the CUDA toolkit comes from: system, pypi, apt or container."
    )
    compiler: str | None = Field(
        None, description="Host C/C++ compiler ('gcc-11', 'clang-14'). Default: chosen by the plan."
    )
    cxx11_abi: bool | None = Field(
        None, description="_GLIBCXX_USE_CXX11_ABI. Default: the release's official choice."
    )
    source: str = Field(
        "git",
        description="Where the source comes from: 'git', 'debian', 'path:DIR', "
        "'tarball:URL_OR_FILE', 'bundle:FILE'.",
    )
    git_mirror: str | None = Field(
        None, description="Base URL replacing https://github.com/ for clones and submodules."
    )
    in_place: bool = Field(False, description="Build inside a 'path:' source tree (modifies it).")
    targets: tuple[str, ...] = Field(
        (), description="Build only these CMake targets (partial build, no wheel)."
    )
    max_jobs: int | None = Field(
        None, ge=1, le=1024, description="Parallel compile jobs. Default: from cores and RAM."
    )
    cache: CacheSpec = Field(default_factory=CacheSpec, description="The compiler cache.")
    outputs: tuple[Output, ...] = Field(("wheel",), description="What the build produces.")
    output_dir: str = Field("dist", description="Where artifacts are published.")
    install_python: str | None = Field(
        None,
        description="The interpreter the 'install' output installs the wheel into and verifies "
        "it in ('/opt/venv/bin/python'); never the build's own environment.",
    )
    backend: Backend = Field("local", description="Where the build runs.")
    engine: Engine = Field(
        "auto",
        description="Container engine for backend 'docker': docker (BuildKit), podman or "
        "buildah; 'auto' takes the first that answers.",
    )
    base_image: ImageRef | None = Field(
        None,
        description="Build image for backend 'docker' instead of the one the knowledge base "
        "names (e.g. your registry's copy of a deleted nvidia/cuda tag).",
    )
    images: tuple[TrainingImage, ...] = Field(
        (),
        description="Training images made from the build's wheels: [[images]] tables of a "
        "spec file (file only: no flag).",
    )
    build_version: str | None = Field(
        None, description="Version string baked into the wheel (PYTORCH_BUILD_VERSION)."
    )

    @field_validator("accelerator")
    @classmethod
    def _accelerator(cls, value: str) -> str:
        text = value.strip()
        if text.lower() == "cpu":
            return "cpu"
        match = _CUDA_RE.match(text)
        if not match:
            raise ValueError(
                f"{value!r} is neither 'cpu' nor a CUDA version like '12.4' or 'cu124'"
            )
        return f"{int(match.group(1))}.{match.group(2)}"

    @field_validator("python")
    @classmethod
    def _python(cls, value: str | None) -> str | None:
        if value is None:
            return None
        text = value.strip().removeprefix("python").removeprefix("py")
        if not _PYTHON_RE.match(text):
            hint = " (an interpreter to install into is install_python)" if "/" in text else ""
            raise ValueError(f"{value!r} is not a Python version like '3.11'{hint}")
        return text

    @field_validator("build_version")
    @classmethod
    def _build_version(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            Version(value)
        except InvalidVersion:
            raise ValueError(f"{value!r} is not a PEP 440 version (e.g. 2.5.1+cu124)") from None
        return value

    @field_validator("source")
    @classmethod
    def _source(cls, value: str) -> str:
        if not _SOURCE_RE.match(value):
            raise ValueError(
                f"{value!r} is not a source; use git, debian, path:DIR, tarball:URL, bundle:FILE"
            )
        return value

    @field_validator("against")
    @classmethod
    def _against(cls, value: str | None) -> str | None:
        if value is None:
            return None
        text = value.strip()
        if text.startswith("python:") and len(text) > len("python:"):
            return text
        if text.endswith(".whl"):
            return text
        raise ValueError(
            f"{value!r} is neither a torch wheel file (…whl) nor 'python:/path/to/python'"
        )

    @field_validator("companions")
    @classmethod
    def _companions(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        bad = [v for v in value if not _COMPANION_RE.match(v.strip())]
        if bad:
            raise ValueError(
                f"unknown companion(s) {bad}; use torchvision, torchaudio, torchtext or auto"
            )
        return tuple(v.strip() for v in value)

    @field_validator("gpus", "targets")
    @classmethod
    def _strip_items(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if any(not v.strip() for v in value):
            raise ValueError(
                f"{list(value)} holds an empty name, which would be dropped without a word "
                "(no targets at all means the whole build); name each item or leave the key out"
            )
        return tuple(v.strip() for v in value)

    @field_validator("targets")
    @classmethod
    def _targets(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        bad = [v for v in value if not _TARGET_RE.match(v)]
        if bad:
            raise ValueError(
                f"{bad} are not build target names: a target is letters, digits and _.+/- "
                "and does not start with '-' (e.g. c10, torch_cpu, caffe2/CMakeFiles/x.cpp.o)"
            )
        return value

    @property
    def cuda(self) -> str | None:
        """The CUDA version asked for, or ``None`` for a CPU build."""
        return None if self.accelerator == "cpu" else self.accelerator
