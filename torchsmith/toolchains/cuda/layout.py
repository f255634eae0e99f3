"""The toolkit root every provider produces, the one PyTorch's CMake of any era accepts:
``bin/nvcc`` (with an ``nvcc.profile`` beside it), ``include/`` (cuda_runtime.h), ``lib64/``
(FindCUDA looks there; FindCUDAToolkit too) with the unversioned ``libX.so`` links the
linker and CMake need, and ``nvvm/`` (libdevice, cicc)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from torchsmith.errors import HostError
from torchsmith.host.parse import parse_nvcc_version
from torchsmith.runner import Runner

REQUIRED = ("bin/nvcc", "include/cuda_runtime.h", "nvvm/libdevice")
_SONAME = re.compile(r"^(lib[\w+-]+\.so)\.\d+(\.\d+)*$")


def link(target: Path, link_path: Path) -> None:
    """A relative symlink ``link_path`` → ``target`` (parents made; an old link replaced)."""
    link_path.parent.mkdir(parents=True, exist_ok=True)
    if link_path.is_symlink():
        link_path.unlink()
    link_path.symlink_to(os.path.relpath(target, link_path.parent))


def link_unversioned(libdir: Path) -> list[str]:
    """For every ``libX.so.N[.M]`` without a ``libX.so`` beside it, add that link."""
    made: list[str] = []
    for lib in sorted(libdir.iterdir()) if libdir.is_dir() else ():
        match = _SONAME.match(lib.name)
        plain = libdir / match.group(1) if match else None
        if plain is not None and not plain.exists() and not plain.is_symlink():
            plain.symlink_to(lib.name)
            made.append(plain.name)
    return made


def ensure_lib64(root: Path) -> None:
    """Wheels put libraries in ``lib/``; FindCUDA of CMake ≤ 3.17 looks in ``lib64/``."""
    lib64 = root / "lib64"
    if not lib64.exists() and (root / "lib").is_dir():
        lib64.symlink_to("lib")
    link_unversioned(lib64)


def missing_parts(root: Path) -> list[str]:
    return [part for part in REQUIRED if not (root / part).exists()]


def check_root(root: Path) -> None:
    missing = missing_parts(root)
    if missing:
        raise HostError(
            f"the toolkit at {root} is incomplete: missing {', '.join(missing)}",
            "remove that cache entry and provision it again; report it if it persists",
        )


def nvcc_full_version(nvcc: Path, env: Mapping[str, str], runner: Runner) -> tuple[str, str]:
    """('13.0', '13.0.88') from the toolkit's own ``nvcc --version``."""
    done = runner.capture([nvcc, "--version"], env=env)
    found = parse_nvcc_version(done.stdout)
    if found is None:
        raise HostError(
            f"{nvcc} --version did not print a CUDA version",
            f"run it by hand to see why; output was: {done.stdout.strip()[:200]}",
        )
    return found
