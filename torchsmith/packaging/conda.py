"""A wheel turned into a conda package with the rattler libraries (``py-rattler-build``'s
``assemble_package``; ``py-rattler``'s ``index_fs`` for the channel), offline.

Naming follows PyTorch's own conda packages: ``pytorch-1.8.0-py3.8_cuda11.0.221_cudnn8.0.5_0``
and ``pytorch-1.8.0-py3.8_cpu_0`` (the package names and build strings of the ``pytorch``
channel, https://anaconda.org/pytorch/pytorch/files; pytorch/builder:conda/build_pytorch.sh:
``build_string="py${py_ver}_${build_string_suffix}"`` with the suffix
``cuda${CUDA_VERSION}_cudnn${CUDNN_VERSION}_${PYTORCH_BUILD_NUMBER}`` or ``cpu_…``).
The files are the wheel's, under ``lib/pythonX.Y/site-packages`` (``.data/`` directories mapped
as an installer maps them); run dependencies are the wheel's ``Requires-Dist`` whose markers hold
for the target, plus ``python X.Y``.
"""

from __future__ import annotations

import asyncio
import zipfile
from dataclasses import dataclass
from email.parser import Parser
from pathlib import Path, PurePosixPath

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

from torchsmith.errors import BuildError

SUBDIR = "linux-64"
CONDA_NAMES = {
    # the pytorch channel's name of torch (https://anaconda.org/pytorch/pytorch)
    "torch": "pytorch",
    # conda-forge's feedstock names (conda-forge/typing_extensions-feedstock)
    "typing-extensions": "typing_extensions",
}
_DATA_DIRS = {
    "purelib": "site-packages",
    "platlib": "site-packages",
    "scripts": "bin",
    "headers": "include",
    "data": "",
}


@dataclass(frozen=True)
class CondaPackage:
    """What one conda package is called and needs."""

    name: str
    version: str
    build: str
    depends: tuple[str, ...]

    @property
    def filename(self) -> str:
        return f"{self.name}-{self.version}-{self.build}.conda"


def conda_name(dist: str) -> str:
    canonical = canonicalize_name(dist)
    return CONDA_NAMES.get(canonical, canonical)


def build_string(python: str, cuda: str | None, cudnn: str | None, number: int = 0) -> str:
    """``py3.8_cuda11.0.221_cudnn8.0.5_0``, ``py3.8_cuda11.0_0`` (no cuDNN), ``py3.8_cpu_0``."""
    if cuda is None:
        return f"py{python}_cpu_{number}"
    cudnn_part = f"_cudnn{cudnn}" if cudnn else ""
    return f"py{python}_cuda{cuda}{cudnn_part}_{number}"


def python_pin(python: str) -> str:
    """``python >=3.11,<3.12.0a0``: the ABI of one minor version (conda-build's pin)."""
    major, minor = (int(p) for p in python.split(".")[:2])
    return f"python >={major}.{minor},<{major}.{minor + 1}.0a0"


def run_depends(requires: list[str], python: str) -> list[str]:
    """The wheel's ``Requires-Dist`` that apply on linux-64 with ``python`` and no extra, as
    conda match specs."""
    env = {str(k): str(v) for k, v in default_environment().items()}
    env |= {
        "python_version": python,
        "python_full_version": f"{python}.0",
        "extra": "",
        "sys_platform": "linux",
        "platform_system": "Linux",
        "platform_machine": "x86_64",
    }
    depends = [python_pin(python)]
    for text in requires:
        req = Requirement(text)
        if req.marker is None or req.marker.evaluate(env):
            depends.append(f"{conda_name(req.name)} {req.specifier}".strip())
    return depends


def wheel_metadata(wheel: Path) -> tuple[str, Version, list[str]]:
    """Name, version and ``Requires-Dist`` lines of a wheel (its METADATA)."""
    name, version, _build, _tags = parse_wheel_filename(wheel.name)
    with zipfile.ZipFile(wheel) as zf:
        meta = f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info/METADATA"
        text = zf.read(meta).decode("utf-8")
    return str(name), version, Parser().parsestr(text).get_all("Requires-Dist") or []


def package_for(wheel: Path, python: str, build: str, cuda: str | None = None) -> CondaPackage:
    """The conda package ``wheel`` becomes, with build string ``build`` (its version without
    the local ``+cpu`` part: conda versions have none, the build string says it); a CUDA
    build also requires the ``cudatoolkit`` of its CUDA minor version."""
    name, version, requires = wheel_metadata(wheel)
    depends = run_depends(requires, python)
    if cuda is not None:
        depends.append(cuda_pin(cuda))
    return CondaPackage(conda_name(name), version.public, build, tuple(depends))


def plain_build(python: str, number: int = 0) -> str:
    """``py311_0``: the build string of a package that is not a torch variant."""
    return f"py{python.replace('.', '')}_{number}"


def cuda_pin(cuda: str) -> str:
    """``cudatoolkit >=11.0,<11.1``: what PyTorch's own 1.x CUDA packages require
    (pytorch/builder:conda/build_pytorch.sh exports ``CONDA_CUDATOOLKIT_CONSTRAINT=
    "- cudatoolkit >=X.Y,<X.Y+1 # [not osx]"`` for the package's meta.yaml)."""
    major, minor = (int(p) for p in cuda.split(".")[:2])
    return f"cudatoolkit >={major}.{minor},<{major}.{minor + 1}"


def member_destination(member: str, python: str) -> PurePosixPath | None:
    """Where a wheel member goes in the prefix (None: a directory entry)."""
    path = PurePosixPath(member)
    if member.endswith("/") or path.is_absolute() or ".." in path.parts:
        if member.endswith("/"):
            return None
        raise BuildError(f"wheel member {member!r} leaves the package", "rebuild the wheel")
    site = PurePosixPath("lib", f"python{python}", "site-packages")
    top = path.parts[0]
    if top.endswith(".data") and len(path.parts) > 2:
        kind = _DATA_DIRS.get(path.parts[1])
        if kind is None:
            raise BuildError(f"wheel member {member!r}: unknown .data directory", "rebuild it")
        base = site if kind == "site-packages" else PurePosixPath(kind)
        return base.joinpath(*path.parts[2:])
    return site / path


def stage_wheel(wheel: Path, root: Path, python: str) -> None:
    """The wheel's files laid out as they are in a conda prefix."""
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            dest = member_destination(info.filename, python)
            if dest is None:
                continue
            target = root / dest
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, target.open("wb") as out:
                while chunk := src.read(1 << 20):
                    out.write(chunk)
            if info.external_attr >> 16 & 0o111:
                target.chmod(0o755)


def assemble(stage: Path, out_dir: Path, package: CondaPackage, compression: int = 9) -> Path:
    """The ``.conda`` file of ``package`` holding every file under ``stage``."""
    from rattler_build import assemble_package

    out_dir.mkdir(parents=True, exist_ok=True)
    made = assemble_package(
        package.name,
        package.version,
        SUBDIR,
        package.build,
        out_dir,
        files_dir=stage,
        depends=list(package.depends),
        license="BSD-3-Clause",
        detect_prefix=False,
        compression_level=compression,
    )
    return made.path


def index_channel(channel: Path) -> None:
    """``repodata.json`` for every subdirectory of ``channel`` (``noarch`` must exist)."""
    from rattler.index import index_fs

    (channel / "noarch").mkdir(parents=True, exist_ok=True)
    asyncio.run(index_fs(channel, force=True))
