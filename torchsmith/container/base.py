"""Which image a container build starts from, and why: NVIDIA's CUDA image of the plan's CUDA
release on the OS whose Python matches (else the newest OS it was built for), a Debian suite for
CPU builds, or the user's ``--base-image``. Pure: reads the image knowledge only."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from torchsmith.container.images import DOCKER_HUB, CudaImage, ImageKb, OsImage
from torchsmith.container.recipes import Recipe, RecipeMode, choose_recipe
from torchsmith.errors import PlanError, Problem

PythonFrom = Literal["os", "uv"]
DEFAULT_SUITE = "bookworm"
STAND_IN = "ubuntu22.04"
"""The OS an unrecorded CUDA release's --base-image is planned against (its own facts are
measured by the torchsmith inside)."""


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
    recipe: Recipe | None = None
    """The generated base stage (:mod:`.recipes`): ``image`` is then the OS image it starts from."""
    measured: str | None = None
    """The CUDA to check inside a user's image (``--base-image`` of an unrecorded release)."""


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


def _recipe_base(recipe: Recipe, python: str | None) -> BaseChoice:
    os_image = recipe.os
    version, source = _python_from(os_image, python)
    why = recipe.reason + (" (its Python)" if source == "os" else f" (Python {version} via uv)")
    image = os_image.qualified
    return BaseChoice(image, image, os_image, version, source, why, recipe=recipe)


def _unrecorded_base(kb: ImageKb, cuda: str, python: str | None) -> BaseChoice:
    """--base-image of a CUDA release no image or recipe stands for: planned against the newest
    Ubuntu the knowledge base has; the image's CUDA is measured inside it."""
    os_image = kb.os(STAND_IN)
    version, source = _python_from(os_image, python)
    why = f"no image of CUDA {cuda} is recorded: planned against {STAND_IN}'s facts"
    return BaseChoice(os_image.qualified, os_image.qualified, os_image, version, source, why)


def _debian_base(kb: ImageKb, python: str | None) -> BaseChoice:
    suites = [o for o in kb.oses if o.family == "debian"]
    matching = [o for o in suites if python is not None and o.python_minor == python]
    os_image = matching[0] if matching else kb.debian(DEFAULT_SUITE)
    version, source = _python_from(os_image, python)
    why = f"CPU build: Debian {os_image.codename}'s image"
    why += " (its Python)" if source == "os" else f" (Python {version} via uv)"
    return BaseChoice(os_image.qualified, os_image.qualified, os_image, version, source, why)


def _choice(
    kb: ImageKb, cuda: str | None, python: str | None, recipe: tuple[RecipeMode, str | None]
) -> BaseChoice:
    if cuda is None:
        return _debian_base(kb, python)
    found = choose_recipe(kb, cuda, *recipe)
    return _cuda_base(kb, cuda, python) if found is None else _recipe_base(found, python)


def choose_base(
    kb: ImageKb,
    cuda: str | None,
    python: str | None,
    base_image: str | None = None,
    recipe: tuple[RecipeMode, str | None] = ("image", None),
) -> BaseChoice:
    """The base for a build of CUDA ``cuda`` (None: CPU) and Python ``python``: NVIDIA's image,
    or a recipe (``recipe``: the mode and the mirror, :mod:`.recipes`); an explicit
    ``base_image`` replaces the image and keeps the facts of the one it stands for (its CUDA
    measured inside it when no image of that release is recorded)."""
    if base_image is None:
        return _choice(kb, cuda, python, recipe)
    if cuda is not None and recipe[0] in {"nvidia", "debian"}:
        return _recipe_on(kb, cuda, python, base_image, recipe)
    return _given(kb, cuda, python, base_image)


def _recipe_on(
    kb: ImageKb,
    cuda: str,
    python: str | None,
    base_image: str,
    recipe: tuple[RecipeMode, str | None],
) -> BaseChoice:
    """A recipe asked for by name with --base-image: the image given is the OS image the
    recipe starts from (your registry's copy of debian:trixie on a machine without Docker Hub)."""
    choice = _choice(kb, cuda, python, recipe)
    why = f"{choice.reason}; on --base-image {base_image} (standing for {choice.image})"
    return replace(choice, image=base_image, runtime=base_image, reason=why)


def _given(
    kb: ImageKb,
    cuda: str | None,
    python: str | None,
    base_image: str,
) -> BaseChoice:
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
    unrecorded = cuda is not None and kb.known_cuda(cuda) is None
    if unrecorded:
        assert cuda is not None
        choice = _unrecorded_base(kb, cuda, python)
    else:  # the recipe is not used: the image given replaces NVIDIA's
        choice = _choice(kb, cuda, python, ("image", None))
    reason = f"asked (--base-image), standing for {choice.image}: {choice.reason}"
    # a distribution image is its own runtime image: the override then stands for both
    runtime = base_image if choice.runtime == choice.image else choice.runtime
    if cuda is not None:
        reason += f"; its CUDA {cuda} is measured inside it (nvcc --version, cudart soname)"
    return BaseChoice(
        base_image, runtime, choice.os, choice.python, choice.python_from, reason,
        measured=cuda,
    )  # fmt: skip
