"""Provider ``pypi``: NVIDIA's CUDA wheels, installed with pip into torchsmith's cache.

For CUDA 13.x the wheels hold a complete compiler under one ``nvidia/cu13/`` prefix (nvcc,
cicc/libNVVM, crt headers, the runtime, CCCL); the ``cuda-toolkit`` meta-package pins the
component versions of each release, so ``cuda-toolkit[nvcc,cccl,cudart]==13.0.*`` is one
consistent toolkit. For 11.x/12.x, ``nvidia-cuda-nvcc-cu11``/``-cu12`` hold only ``ptxas`` and
libNVVM (no ``nvcc``; recorded in tests/fixtures/cuda/README.md), so this provider offers the
*libraries* of those versions (cuBLAS, cuDNN, NCCL…) and never a compiler."""

from __future__ import annotations

import sys
from pathlib import Path

from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from torchsmith.hashing import sha256_file
from torchsmith.host.model import HostFacts
from torchsmith.planner.toolkit_offers import (
    Offer,
    ProviderName,
    prefix,
    pypi_offer,
    requirement,
)
from torchsmith.toolchains.cuda import cache, layout
from torchsmith.toolchains.cuda.base import PackageRecord, ProvideContext, ToolkitRecord

_PIP_QUIET = ("--disable-pip-version-check", "--no-input", "-q")
# Wheels only: an sdist would run its build backend (arbitrary code) at download time.
_BINARY_ONLY = "--only-binary=:all:"


def download_argv(
    python: str, dest: Path, requirement: str, hashed: Path | None = None
) -> list[str | Path]:
    """``pip download`` of ``requirement`` into ``dest``, wheels only. ``hashed``: a requirements
    file pinning every wheel with ``--hash`` (where the KB records hashes); pip then refuses any
    file whose hash is not listed (``--require-hashes``)."""
    what: list[str | Path] = (
        ["--require-hashes", "-r", hashed] if hashed is not None else [requirement]
    )
    return [python, "-m", "pip", "download", *_PIP_QUIET, _BINARY_ONLY, "-d", dest, *what]


def install_argv(python: str, wheels: Path, target: Path, requirement: str) -> list[str | Path]:
    """``pip install`` of ``requirement`` from the downloaded ``wheels`` only, into ``target``."""
    return [
        python, "-m", "pip", "install", *_PIP_QUIET, _BINARY_ONLY, "--no-index", "--no-compile",
        "--find-links", wheels, "--target", target, requirement,
    ]  # fmt: skip


class PypiProvider:
    name: ProviderName = "pypi"

    def __init__(self, python: str = sys.executable) -> None:
        self.python = python

    def offer(self, cuda: str, host: HostFacts) -> Offer:
        return pypi_offer(cuda, host)

    def provide(self, cuda: str, host: HostFacts, ctx: ProvideContext) -> ToolkitRecord:
        entry = cache.entry_dir(ctx.cache_root, self.name, cuda)
        return cache.provide_cached(entry, lambda staging: self._make(cuda, ctx, staging, entry))

    def _make(self, cuda: str, ctx: ProvideContext, staging: Path, entry: Path) -> ToolkitRecord:
        """Download, install and record the toolkit in ``staging`` (renamed to ``entry`` after)."""
        wheels = self._download(cuda, staging / "wheels", ctx)
        self._install(cuda, staging, ctx)
        return self._record(cuda, staging, entry, wheels, ctx)

    def _download(self, cuda: str, dest: Path, ctx: ProvideContext) -> list[Path]:
        argv = download_argv(self.python, dest, requirement(cuda))
        ctx.runner.run(argv, env=ctx.env, log_path=ctx.log_path)
        return sorted(dest.glob("*.whl"))

    def _install(self, cuda: str, staging: Path, ctx: ProvideContext) -> None:
        argv = install_argv(self.python, staging / "wheels", staging / "site", requirement(cuda))
        ctx.runner.run(argv, env=ctx.env, log_path=ctx.log_path)
        root = staging / "site" / prefix(cuda)
        layout.ensure_lib64(root)
        layout.check_root(root)

    def _record(
        self, cuda: str, staging: Path, entry: Path, wheels: list[Path], ctx: ProvideContext
    ) -> ToolkitRecord:
        _release, full = layout.nvcc_full_version(
            staging / "site" / prefix(cuda) / "bin/nvcc", ctx.env, ctx.runner
        )
        root = entry / "site" / prefix(cuda)
        return ToolkitRecord(
            provider=self.name,
            cuda=cuda,
            version=full,
            root=str(root),
            nvcc=str(root / "bin" / "nvcc"),
            origin=f"pip: {requirement(cuda)}",
            packages=[wheel_record(w) for w in wheels],
        )


def wheel_record(path: Path) -> PackageRecord:
    try:
        parsed = parse_wheel_filename(path.name)
        name, version = str(parsed[0]), str(parsed[1])
    except InvalidWheelFilename:
        name, version = path.stem, "unknown"
    return PackageRecord(
        name=str(name), version=str(version), sha256=sha256_file(path), filename=path.name
    )
