"""Provider ``apt``: Debian's non-free ``nvidia-cuda-toolkit`` (11.8 in bookworm, 12.4 in trixie).

Without root: a private sources list and state directory, ``apt-get download`` of the packages
and ``dpkg -x`` into torchsmith's cache — nothing on the system changes. With root and
``--install-deps``: ``apt-get install`` of the same packages. Either way the result is laid out
as a standard toolkit root (:mod:`.layout`), since Debian spreads CUDA over ``/usr/bin``,
``/usr/include``, ``/usr/lib/x86_64-linux-gnu`` and ``/usr/lib/nvidia-cuda-toolkit``."""

from __future__ import annotations

import shutil
from pathlib import Path

from torchsmith import proc
from torchsmith.hashing import sha256_file
from torchsmith.host.model import HostFacts
from torchsmith.toolchains.cuda import cache, debian_layout, layout
from torchsmith.toolchains.cuda.base import (
    Offer,
    PackageRecord,
    ProvideContext,
    ProviderName,
    ToolkitRecord,
)
from torchsmith.toolchains.cuda.offers import SUITES, apt_offer

MIRROR = "http://deb.debian.org/debian"
# CUDA release -> Debian suite whose non-free nvidia-cuda-toolkit packages it:
# https://packages.debian.org/bookworm/nvidia-cuda-toolkit (11.8.89~11.8.0-5~deb12u1),
# https://packages.debian.org/trixie/nvidia-cuda-toolkit (12.4.131~12.4.1-2); both versions
# recorded in tests/fixtures/cuda/README.md.
# What compiling PyTorch needs: nvcc and its tools, headers (nvidia-cuda-dev holds every
# header and the unversioned .so links), CCCL (thrust/cub/libcu++ are separate in Debian),
# libNVVM, and the runtime libraries torch links.
_COMMON = ("nvidia-cuda-toolkit", "nvidia-cuda-dev", "libcub-dev", "libthrust-dev", "libcu++-dev")
PACKAGES = {
    "11.8": (
        *_COMMON,
        "libnvvm4",
        "libcudart11.0",
        "libcublas11",
        "libcublaslt11",
        "libcufft10",
        "libcufftw10",
        "libcurand10",
        "libcusolver11",
        "libcusolvermg11",
        "libcusparse11",
        "libnvrtc11.2",
        "libnvrtc-builtins11.8",
        "libnvtoolsext1",
        "libcupti11.8",
        "libcupti-dev",
        "libnvblas11",
        "libnvidia-ml-dev",
    ),
    "12.4": (
        *_COMMON,
        "libnvvm4",
        "libcudart12",
        "libcublas12",
        "libcublaslt12",
        "libcufft11",
        "libcufftw11",
        "libcurand10",
        "libcusolver11",
        "libcusolvermg11",
        "libcusparse12",
        "libnvrtc12",
        "libnvrtc-builtins12.4",
        "libnvtoolsext1",
        "libnvjitlink12",
        "libcupti12",
        "libcupti-dev",
        "libnvblas12",
        "libnvidia-ml-dev",
    ),
}


def sources_list(suite: str) -> str:
    return f"deb {MIRROR} {suite} main contrib non-free\n"


def apt_options(state: Path) -> list[str]:
    """apt-get options that keep every file it writes under ``state`` (no root needed)."""
    return [
        f"-oDir::Etc::SourceList={state / 'sources.list'}",
        "-oDir::Etc::SourceParts=/dev/null",
        f"-oDir::State::Lists={state / 'lists'}",
        f"-oDir::Cache={state / 'cache'}",
        "-oDir::State::status=/dev/null",
        "-oAPT::Architecture=amd64",
        "-oDebug::NoLocking=1",
    ]


class AptProvider:
    name: ProviderName = "apt"

    def offer(self, cuda: str, host: HostFacts) -> Offer:
        return apt_offer(cuda, host)

    def __init__(self, static_libs: bool = False) -> None:
        # The static CUDA libraries are 2.9 of 4.8 GB for 11.8; only a plan that links CUDA
        # statically needs them (cached apart, as '<cuda>-static').
        self.static_libs = static_libs

    def provide(self, cuda: str, host: HostFacts, ctx: ProvideContext) -> ToolkitRecord:
        key = f"{cuda}-static" if self.static_libs else cuda
        entry = cache.entry_dir(ctx.cache_root, self.name, key)
        found = cache.load_record(entry)
        if found is not None:
            return found
        with cache.building(entry) as staging:
            debs = self.download(cuda, staging, ctx)
            prefix = self._unpack(debs, staging, ctx)
            shutil.rmtree(staging / "apt", ignore_errors=True)
            record = self._finish(cuda, prefix, staging, entry, debs=debs, ctx=ctx)
            cache.save_record(staging, record)
            shutil.rmtree(staging / "debs")  # 1.4 GB for 11.8; the record keeps their sha256
        return record

    def download(self, cuda: str, staging: Path, ctx: ProvideContext) -> list[Path]:
        state = staging / "apt"
        (state / "lists" / "partial").mkdir(parents=True)
        (state / "cache" / "archives" / "partial").mkdir(parents=True)
        (state / "sources.list").write_text(sources_list(SUITES[cuda]), encoding="utf-8")
        opts = apt_options(state)
        proc.run(["apt-get", *opts, "-q", "update"], env=ctx.env, log_path=ctx.log_path)
        debs = staging / "debs"
        debs.mkdir()
        proc.run(
            ["apt-get", *opts, "-q", "download", *PACKAGES[cuda]],
            env=ctx.env,
            cwd=debs,
            log_path=ctx.log_path,
        )
        return sorted(debs.glob("*.deb"))

    def _unpack(self, debs: list[Path], staging: Path, ctx: ProvideContext) -> Path:
        if ctx.is_root and ctx.install_deps:
            # The system's own state, our sources: their dependencies come from the same suite.
            state = staging / "apt"
            opts = apt_options(state)[:3]  # SourceList, SourceParts, Lists
            proc.run(
                ["apt-get", *opts, "install", "-y", "--no-install-recommends", *debs],
                env={**ctx.env, "DEBIAN_FRONTEND": "noninteractive"},
                log_path=ctx.log_path,
            )
            return Path("/")
        prefix = staging / "debroot"
        for deb in debs:
            proc.run(["dpkg", "-x", deb, prefix], env=ctx.env, log_path=ctx.log_path)
        if not self.static_libs:
            debian_layout.prune_static(prefix)
        return prefix

    def _finish(
        self,
        cuda: str,
        prefix: Path,
        staging: Path,
        entry: Path,
        *,
        debs: list[Path],
        ctx: ProvideContext,
    ) -> ToolkitRecord:
        debian_layout.make_root(prefix, staging / "root")
        layout.check_root(staging / "root")
        _release, full = layout.nvcc_full_version(staging / "root/bin/nvcc", ctx.env)
        root = entry / "root"
        return ToolkitRecord(
            provider=self.name,
            cuda=cuda,
            version=full,
            root=str(root),
            nvcc=str(root / "bin" / "nvcc"),
            origin=f"Debian {SUITES[cuda]} non-free ({MIRROR})"
            + ("" if self.static_libs else "; static CUDA libraries left out"),
            packages=[deb_record(d, ctx) for d in debs],
        )


def deb_record(path: Path, ctx: ProvideContext) -> PackageRecord:
    done = proc.capture(["dpkg-deb", "-f", path, "Package", "Version"], env=ctx.env)
    fields = dict(line.split(": ", 1) for line in done.stdout.splitlines() if ": " in line)
    return PackageRecord(
        name=fields.get("Package", path.name.split("_")[0]),
        version=fields.get("Version", "unknown"),
        sha256=sha256_file(path),
        filename=path.name,
    )
