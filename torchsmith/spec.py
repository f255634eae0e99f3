"""BuildSpec: what the user asks for. One typed model; TOML, env and CLI are adapters
(:mod:`torchsmith.spec_sources`). Field descriptions feed the generated JSON schema and the
option reference, so they are the documentation.
"""

from __future__ import annotations

import re

from packaging.version import InvalidVersion, Version
from pydantic import Field, ValidationInfo, field_validator

from torchsmith.mirror_url import mirror_refusal
from torchsmith.spec_sections import (
    COMPANIONS,
    Backend,
    BaseRecipe,
    CacheKind,
    CacheSpec,
    Companion,
    CompanionSource,
    CompanionWithout,
    Engine,
    Features,
    Linkage,
    Linking,
    NcclLocation,
    Output,
    Preset,
    PtxPolicy,
    ToolkitProvider,
    TrainingImage,
    _Strict,
)
from torchsmith.spec_text import AptMirror, ImageRef, requirement_name

__all__ = [
    "COMPANIONS",
    "Backend",
    "BaseRecipe",
    "BuildSpec",
    "CacheKind",
    "CacheSpec",
    "Companion",
    "CompanionSource",
    "CompanionWithout",
    "Engine",
    "Features",
    "Linkage",
    "Linking",
    "NcclLocation",
    "Output",
    "Preset",
    "PtxPolicy",
    "ToolkitProvider",
    "TrainingImage",
]

_CUDA_RE = re.compile(r"^(?:cuda|cu)?\s*(\d{1,2})\.?(\d)$", re.IGNORECASE)
_SOURCE_RE = re.compile(r"^(git|debian|path:.+|tarball:.+|bundle:.+)$")
# A ninja/CMake target name or output path; never anything cmake could read as an option.
_TARGET_RE = re.compile(r"^[A-Za-z0-9_.+/][A-Za-z0-9_.+/-]*$")
_COMPANION_RE = re.compile(r"^(auto|torchvision|torchaudio|torchtext)(==?\d+(\.\d+)*([.+-]\w+)*)?$")
_PYTHON_RE = re.compile(r"^[23]\.\d{1,2}(\.\d+)?t?$")  # "3.13t": free-threaded (planner refuses)


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
    companion_without: CompanionWithout = Field(
        default_factory=CompanionWithout,
        description="Optional parts left out of a companion's build, by companion: "
        "companion_without.torchaudio = ['rnnt', 'rir'] (--companion-without "
        "torchaudio=rnnt,rir). Default: every part its release builds.",
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
    base_recipe: BaseRecipe = Field(
        "auto",
        description="How `torchsmith image` gets a CUDA base: 'auto' takes NVIDIA's nvidia/cuda "
        "image when it is recorded and not deleted, else generates the base stage (the OS image "
        "plus the CUDA packages of a package repository); 'image' always NVIDIA's image; "
        "'nvidia' NVIDIA's CUDA apt repository on the image's Ubuntu; 'debian' a Debian "
        "suite's nvidia-cuda-toolkit (11.8 bookworm, 12.4 trixie). --base-image overrides.",
    )
    apt_mirror: AptMirror | None = Field(
        None,
        description="The base-image recipe's package repository replaced by this URL (same "
        "layout: a Debian archive mirror, or a copy of NVIDIA's CUDA repository for the OS), "
        "for machines that cannot reach the default one.",
    )
    images: tuple[TrainingImage, ...] = Field(
        (),
        description="Training images made from the build's wheels: [[images]] tables of a "
        "spec file (file only: no flag).",
    )
    build_version: str | None = Field(
        None, description="Version string baked into the wheel (PYTORCH_BUILD_VERSION)."
    )
    sign_key: str | None = Field(
        None,
        description="Ed25519 private key (PEM, unencrypted, mode 600) that signs each wheel's "
        "provenance: a DSSE envelope beside it. Default: provenance unsigned.",
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

    @field_validator("git_mirror")
    @classmethod
    def _git_mirror(cls, value: str | None) -> str | None:
        """The fetch's own transport rules, at spec load: `plan` and `image` accepted
        git:// and http:// mirrors the fetch then refused (security review f1b4bec M2, N18)."""
        refusal = None if value is None else mirror_refusal(value)
        if refusal is not None:
            raise ValueError("; ".join(refusal))
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

    @field_validator("images")
    @classmethod
    def _images(
        cls, value: tuple[TrainingImage, ...], info: ValidationInfo
    ) -> tuple[TrainingImage, ...]:
        names = [image.name for image in value]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:  # trial I12: two `AS train-a` stages
            raise ValueError(f"image name(s) {twice} given twice: each [[images]] needs its own")
        built = {"torch", *(info.data.get("companions") or ())}
        clash = [r for i in value for r in i.requirements if requirement_name(r) in built]
        if clash:  # trial I14: 'torch==1.0' clashed with the image's own torch at image build
            raise ValueError(
                f"[[images]] requirements {clash} name what the image installs from the build's "
                f"own wheels ({', '.join(sorted(built))}): drop them (the spec's torch and "
                "companions are the image's)"
            )
        return value

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
