"""Base images as knowledge: NVIDIA's CUDA images per CUDA release (with the tags NVIDIA renamed
or deleted), the operating systems inside them, and the facts a plan is resolved against when a
build runs in an image (its compiler, Python, glibc, CUDA) — never the host's.

The data is ``kb/data/images/images.toml``; every fact carries a source (:class:`Sourced`).
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from importlib import resources
from typing import ClassVar, Literal

from pydantic import Field, ValidationError

from torchsmith.errors import KnowledgeBaseError, UnknownEntryError
from torchsmith.host.model import Compiler, CudaToolkit, HostFacts, PythonInfo
from torchsmith.kb.schema import Sourced

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DATA = "images.toml"
DOCKER_HUB = "docker.io"
"""Image names are written fully qualified: podman and buildah refuse short names unless the
host's registries.conf defines search registries."""
Flavour = Literal["devel", "runtime"]


class OsImage(Sourced):
    """An operating system image and what it ships."""

    identity: ClassVar[frozenset[str]] = frozenset({"id", "family", "codename"})
    id: str = Field(description="'ubuntu16.04', 'debian12'")
    family: Literal["ubuntu", "debian"]
    codename: str
    image: str = Field(description="the distribution's own image: 'ubuntu:16.04'")
    gcc: str
    python: str
    glibc: str
    apt_cuda: str | None = Field(None, description="CUDA of the suite's nvidia-cuda-toolkit")

    @property
    def qualified(self) -> str:
        """``docker.io/library/ubuntu:16.04``."""
        return f"{DOCKER_HUB}/library/{self.image}"

    @property
    def python_minor(self) -> str:
        return ".".join(self.python.split(".")[:2])


class CudaImage(Sourced):
    """NVIDIA's ``nvidia/cuda`` images of one CUDA release."""

    identity: ClassVar[frozenset[str]] = frozenset({"cuda"})
    cuda: str
    tag_version: str = Field(description="the version as the tag spells it: '9.0', '11.0.3'")
    cudnn: str
    os: list[str]
    status: Literal["available", "renamed", "deleted"]
    removed: str | None = Field(None, description="when NVIDIA deleted the tags (YYYY-MM)")
    renamed_from: str | None = Field(None, description="the version the old tags spelled")
    renamed: str | None = Field(None, description="when the old name was seen gone (YYYY-MM)")

    def tag(self, flavour: Flavour, os_id: str) -> str:
        name = f"nvidia/cuda:{self.tag_version}-cudnn{self.cudnn}-{flavour}-{os_id}"
        return f"{DOCKER_HUB}/{name}"


class CudaRepo(Sourced):
    """NVIDIA's CUDA apt repository for one OS: where, and the key that signs it."""

    identity: ClassVar[frozenset[str]] = frozenset({"os"})
    os: str
    url: str = Field(description="the repository (a flat one: `deb URL /`)")
    ml_url: str = Field(description="the machine-learning repository (cuDNN/NCCL of 9.0-11.x)")
    key: str
    fingerprint: str = Field(pattern=r"^[0-9A-F]{40}$")
    ml_key: str
    ml_fingerprint: str = Field(pattern=r"^[0-9A-F]{40}$")


class CudaRecipe(Sourced):
    """What NVIDIA's image of one CUDA release held, as packages of its apt repository."""

    identity: ClassVar[frozenset[str]] = frozenset({"cuda", "os"})
    cuda: str
    os: str
    cuda_packages: list[str]
    cudnn_packages: list[str]
    nccl_packages: list[str]
    root: str = Field(description="where the packages put the toolkit: /usr/local/cuda-X.Y")


class ToolImage(Sourced):
    """An image a generated Dockerfile copies a tool from (``COPY --from``)."""

    identity: ClassVar[frozenset[str]] = frozenset({"name"})
    name: str
    image: str
    digest: str | None = Field(
        None,
        pattern=r"^sha256:[0-9a-f]{64}$",
        description="the manifest digest it is pulled by (scripts/refresh_tool_images.py); "
        "without one it is pulled by tag and `torchsmith image` warns",
    )

    @property
    def reference(self) -> str:
        """``IMAGE:TAG@sha256:…`` when the digest is recorded (the engine pulls by digest and
        refuses other bytes), else the tag alone."""
        return f"{self.image}@{self.digest}" if self.digest else self.image


@dataclass(frozen=True)
class ImageKb:
    oses: tuple[OsImage, ...]
    cuda_images: tuple[CudaImage, ...]
    tools: tuple[ToolImage, ...]
    repos: tuple[CudaRepo, ...] = ()
    recipes: tuple[CudaRecipe, ...] = ()

    def known_cuda(self, version: str) -> CudaImage | None:
        return next((c for c in self.cuda_images if c.cuda == version), None)

    def repo(self, os_id: str) -> CudaRepo | None:
        return next((r for r in self.repos if r.os == os_id), None)

    def recipe(self, cuda: str) -> CudaRecipe | None:
        return next((r for r in self.recipes if r.cuda == cuda), None)

    def os(self, os_id: str) -> OsImage:
        found = next((o for o in self.oses if o.id == os_id), None)
        if found is None:
            known = ", ".join(o.id for o in self.oses)
            raise UnknownEntryError(f"no OS image {os_id!r} is known", f"known: {known}")
        return found

    def cuda(self, version: str) -> CudaImage:
        found = next((c for c in self.cuda_images if c.cuda == version), None)
        if found is None:
            known = ", ".join(c.cuda for c in self.cuda_images)
            raise UnknownEntryError(
                f"no nvidia/cuda image of CUDA {version} is recorded",
                f"CUDA images known: {known}; or name your own with --base-image",
            )
        return found

    def tool(self, name: str) -> str:
        """The reference a Dockerfile copies the tool from (by digest when recorded)."""
        return next(t.reference for t in self.tools if t.name == name)

    def tool_warning(self, name: str) -> str | None:
        """The plan warning for a tool image pulled by tag alone (security review f1b4bec
        N18): whoever controls the tag controls a binary the image build runs."""
        found = next(t for t in self.tools if t.name == name)
        if found.digest is not None:
            return None
        return (
            f"the tool image {found.image} is pulled by tag: no digest is recorded in "
            "kb/data/images/images.toml, so whoever can move the tag chooses the binary the "
            "image build runs; record one with scripts/refresh_tool_images.py"
        )

    def debian(self, codename: str) -> OsImage:
        found = next((o for o in self.oses if o.codename == codename), None)
        if found is None or found.family != "debian":
            raise UnknownEntryError(f"no Debian suite {codename!r} is known", "use bookworm")
        return found


def _records(table: str, model: type[Sourced], data: dict[str, object]) -> list[Sourced]:
    rows = data.get(table, [])
    assert isinstance(rows, list)
    try:
        return [model.model_validate(row) for row in rows]
    except ValidationError as exc:
        raise KnowledgeBaseError(
            f"kb/data/images/{DATA}: bad [[{table}]] record:\n{exc}",
            "fix the data file; every fact needs a source",
        ) from exc


@functools.cache
def load_images() -> ImageKb:
    """The image knowledge, read and validated once per process."""
    entry = resources.files("torchsmith.kb") / "data" / "images" / DATA
    data = tomllib.loads(entry.read_text(encoding="utf-8"))
    oses = tuple(o for o in _records("os", OsImage, data) if isinstance(o, OsImage))
    cudas = tuple(c for c in _records("cuda_image", CudaImage, data) if isinstance(c, CudaImage))
    tools = tuple(t for t in _records("tool_image", ToolImage, data) if isinstance(t, ToolImage))
    repos = tuple(r for r in _records("cuda_repo", CudaRepo, data) if isinstance(r, CudaRepo))
    rows = _records("cuda_recipe", CudaRecipe, data)
    recipes = tuple(r for r in rows if isinstance(r, CudaRecipe))
    return ImageKb(oses, cudas, tools, repos, recipes)


def image_facts(
    os_image: OsImage, cuda: str | None, machine: HostFacts, root: str | None = None
) -> HostFacts:
    """What a plan may assume inside an image of ``os_image`` (with CUDA ``cuda``): the OS's
    compiler and Python, CUDA at /usr/local/cuda (or ``root``: a recipe's); cores, RAM, disk
    and GPUs are ``machine``'s (the container runs there)."""
    cuda_root = root or "/usr/local/cuda"
    major = os_image.gcc.split(".")[0]
    toolkits = []
    if cuda is not None:
        toolkits.append(
            CudaToolkit(
                root=cuda_root,
                nvcc=f"{cuda_root}/bin/nvcc",
                version=cuda,
                origin="image",
            )
        )
    return HostFacts(
        os_id=os_image.family,
        os_version=os_image.id.removeprefix(os_image.family),
        os_codename=os_image.codename,
        glibc=os_image.glibc,
        cores=machine.cores,
        ram_gib=machine.ram_gib,
        disk_free_gib=machine.disk_free_gib,
        disk_path=machine.disk_path,
        gpus=machine.gpus,
        driver_version=machine.driver_version,
        driver_cuda=machine.driver_cuda,
        compilers=[
            Compiler(
                family="gcc",
                version=os_image.gcc,
                cc=f"/usr/bin/gcc-{major}",
                cxx=f"/usr/bin/g++-{major}",
            ),
        ],
        cuda_toolkits=toolkits,
        pythons=[PythonInfo(path="/usr/bin/python3", version=os_image.python)],
    )
