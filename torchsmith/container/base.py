"""Which image a container build starts from, and why: NVIDIA's CUDA image of the plan's CUDA
release on the OS whose Python matches (else the newest OS it was built for), a Debian suite for
CPU builds, or the user's ``--base-image``. Pure: reads the image knowledge only."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from torchsmith.container.images import DOCKER_HUB, CudaImage, ImageKb, OsImage
from torchsmith.errors import PlanError, Problem

PythonFrom = Literal["os", "uv"]
DEFAULT_SUITE = "bookworm"


@dataclass(frozen=True)
class BaseChoice:
    """The build image, the runtime image the training images start from, and their OS."""

    image: str
    runtime: str
    os: OsImage
    python: str
    python_from: PythonFrom
    reason: str
    warnings: tuple[str, ...] = field(default=())


def _pick_os(kb: ImageKb, candidates: list[str], python: str | None) -> OsImage:
    oses = [kb.os(i) for i in candidates]
    matching = [o for o in oses if python is not None and o.python_minor == python]
    return (matching or oses)[0]


def _python_from(os_image: OsImage, python: str | None) -> tuple[str, PythonFrom]:
    if python is None or python == os_image.python_minor:
        return os_image.python_minor, "os"
    return python, "uv"


def _cuda_warnings(record: CudaImage, tag: str) -> tuple[str, ...]:
    if record.status == "deleted":
        return (
            f"{tag} was deleted from Docker Hub by NVIDIA ({record.removed}; "
            f"{record.sources.get('status', '')}): build it from NVIDIA's end-of-life "
            "Dockerfiles (gitlab.com/nvidia/container-images/cuda) or take a mirror, and pass "
            "--base-image REGISTRY/IMAGE (docker build: --build-arg BASE_IMAGE=…)",
        )
    if record.status == "renamed":
        old = tag.replace(f":{record.tag_version}-", f":{record.renamed_from}-")
        old = old.removeprefix(f"{DOCKER_HUB}/")
        return (f"{old} no longer resolves ({record.renamed}): the tag is now {tag}",)
    return ()


def _cuda_base(kb: ImageKb, cuda: str, python: str | None) -> BaseChoice:
    record = kb.cuda(cuda)
    os_image = _pick_os(kb, record.os, python)
    version, source = _python_from(os_image, python)
    tag = record.tag("devel", os_image.id)
    why = f"NVIDIA's CUDA {cuda} devel image with cuDNN {record.cudnn} on {os_image.id}"
    why += " (its Python)" if source == "os" else f" (Python {version} via uv)"
    runtime = record.tag("runtime", os_image.id)
    return BaseChoice(tag, runtime, os_image, version, source, why, _cuda_warnings(record, tag))


def _debian_base(kb: ImageKb, python: str | None) -> BaseChoice:
    suites = [o for o in kb.oses if o.family == "debian"]
    matching = [o for o in suites if python is not None and o.python_minor == python]
    os_image = matching[0] if matching else kb.debian(DEFAULT_SUITE)
    version, source = _python_from(os_image, python)
    why = f"CPU build: Debian {os_image.codename}'s image"
    why += " (its Python)" if source == "os" else f" (Python {version} via uv)"
    return BaseChoice(os_image.qualified, os_image.qualified, os_image, version, source, why)


def choose_base(
    kb: ImageKb,
    cuda: str | None,
    python: str | None,
    base_image: str | None = None,
) -> BaseChoice:
    """The base for a build of CUDA ``cuda`` (None: CPU) and Python ``python``; an explicit
    ``base_image`` replaces the image and keeps the facts of the one it stands for."""
    choice = _debian_base(kb, python) if cuda is None else _cuda_base(kb, cuda, python)
    if base_image is None:
        return choice
    if not base_image.strip() or any(c.isspace() for c in base_image):
        raise PlanError(
            [
                Problem(
                    f"base image {base_image!r} is not an image reference",
                    "name it like registry.example/cuda:9.0-cudnn7-devel-ubuntu16.04",
                    "base_image",
                )
            ]
        )
    reason = f"asked (--base-image), standing for {choice.image}: {choice.reason}"
    # a distribution image is its own runtime image: the override then stands for both
    runtime = base_image if choice.runtime == choice.image else choice.runtime
    return BaseChoice(base_image, runtime, choice.os, choice.python, choice.python_from, reason)
