"""Provider ``apt``: Debian's non-free ``nvidia-cuda-toolkit`` (11.8 in bookworm, 12.4 in trixie).

Always: a private sources list (signed by Debian's archive key only) and state directory and
``apt-get download`` of the packages. Then ``dpkg -x`` into torchsmith's cache — no root needed,
nothing on the system changes. Only as root with ``--install-deps`` on a Debian host whose own
suite (``VERSION_CODENAME``) is the packages' suite are they installed (``--no-remove``): a
foreign suite is never installed into a host (:func:`route`). Either way the result
is laid out as a standard toolkit root (:mod:`.layout`), since Debian spreads CUDA over
``/usr/bin``, ``/usr/include``, ``/usr/lib/x86_64-linux-gnu`` and
``/usr/lib/nvidia-cuda-toolkit``."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from torchsmith.hashing import sha256_file
from torchsmith.host.model import HostFacts
from torchsmith.planner.toolkit_offers import SUITES, Offer, ProviderName, apt_offer
from torchsmith.sources.apt import DEBIAN_KEYRING, require_keyring, signed_by
from torchsmith.toolchains.cuda import cache, debian_layout, layout
from torchsmith.toolchains.cuda.base import PackageRecord, ProvideContext, ToolkitRecord

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


def sources_list(suite: str, keyring: Path = DEBIAN_KEYRING) -> str:
    return f"deb {signed_by(keyring)} {MIRROR} {suite} main contrib non-free\n"


@dataclass(frozen=True)
class Route:
    """How downloaded packages become a toolkit: installed into the host, or unpacked."""

    kind: Literal["install", "unpack"]
    reason: str


def route(suite: str, host: HostFacts, ctx: ProvideContext) -> Route:
    """Install only as root with --install-deps into a Debian host of the packages' own suite
    (not inside torchsmith's build container); everything else is unpacked into the cache
    (``dpkg -x``, no root)."""
    if not (ctx.is_root and ctx.install_deps):
        return Route("unpack", "dpkg -x into torchsmith's cache (nothing on the system changes)")
    if ctx.env.get("TORCHSMITH_IN_CONTAINER"):
        return Route(
            "unpack",
            "inside a container whose cache root is the host's: dpkg -x into that cache, kept "
            "for the next run (an install would vanish with the container)",
        )
    here = f"{host.os_id or 'unknown OS'} {host.os_codename or '(no VERSION_CODENAME)'}"
    if host.os_id != "debian" or host.os_codename != suite:
        return Route(
            "unpack",
            f"Debian {suite}'s packages are never installed into this {here} host; "
            "dpkg -x into torchsmith's cache instead",
        )
    return Route("install", f"apt-get install into this Debian {suite} host (--install-deps)")


def install_argv(state: Path, debs: Sequence[Path]) -> list[str | Path]:
    """apt-get install of the downloaded packages, their dependencies from the same private
    lists (:func:`route` allows this only when that suite is the host's own: Debian's CUDA
    packages need non-free, which the host's sources may lack); the system's dpkg state; it
    aborts rather than remove any installed package."""
    opts = apt_options(state)[:3]  # SourceList, SourceParts, Lists
    return ["apt-get", *opts, "install", "-y", "--no-remove", "--no-install-recommends", *debs]


def unpack_argv(deb: Path, prefix: Path) -> list[str | Path]:
    return ["dpkg", "-x", deb, prefix]


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
        return cache.provide_cached(entry, lambda stage: self._make(cuda, host, ctx, stage, entry))

    def _make(
        self, cuda: str, host: HostFacts, ctx: ProvideContext, staging: Path, entry: Path
    ) -> ToolkitRecord:
        """Download, unpack and record the toolkit in ``staging`` (renamed to ``entry`` after)."""
        debs = self.download(cuda, staging, ctx)
        how = route(SUITES[cuda], host, ctx)
        prefix = self._unpack(debs, staging, ctx, how)
        shutil.rmtree(staging / "apt", ignore_errors=True)
        record = self._finish(cuda, prefix, staging, entry, debs=debs, ctx=ctx, how=how)
        shutil.rmtree(staging / "debs")  # 1.4 GB for 11.8; the record keeps their sha256
        return record

    def download(self, cuda: str, staging: Path, ctx: ProvideContext) -> list[Path]:
        require_keyring(DEBIAN_KEYRING)
        state = staging / "apt"
        (state / "lists" / "partial").mkdir(parents=True)
        (state / "cache" / "archives" / "partial").mkdir(parents=True)
        (state / "sources.list").write_text(sources_list(SUITES[cuda]), encoding="utf-8")
        opts = apt_options(state)
        ctx.runner.run(["apt-get", *opts, "-q", "update"], env=ctx.env, log_path=ctx.log_path)
        debs = staging / "debs"
        debs.mkdir()
        ctx.runner.run(
            ["apt-get", *opts, "-q", "download", *PACKAGES[cuda]],
            env=ctx.env,
            cwd=debs,
            log_path=ctx.log_path,
        )
        return sorted(debs.glob("*.deb"))

    def _unpack(self, debs: list[Path], staging: Path, ctx: ProvideContext, how: Route) -> Path:
        if how.kind == "install":
            env = {**ctx.env, "DEBIAN_FRONTEND": "noninteractive"}
            ctx.runner.run(install_argv(staging / "apt", debs), env=env, log_path=ctx.log_path)
            return Path("/")
        prefix = staging / "debroot"
        for deb in debs:
            ctx.runner.run(unpack_argv(deb, prefix), env=ctx.env, log_path=ctx.log_path)
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
        how: Route,
    ) -> ToolkitRecord:
        debian_layout.make_root(prefix, staging / "root")
        layout.check_root(staging / "root")
        _release, full = layout.nvcc_full_version(staging / "root/bin/nvcc", ctx.env, ctx.runner)
        root = entry / "root"
        return ToolkitRecord(
            provider=self.name,
            cuda=cuda,
            version=full,
            root=str(root),
            nvcc=str(root / "bin" / "nvcc"),
            origin=f"Debian {SUITES[cuda]} non-free ({MIRROR}); {how.reason}"
            + ("" if self.static_libs else "; static CUDA libraries left out"),
            packages=[deb_record(d, ctx) for d in debs],
        )


def deb_record(path: Path, ctx: ProvideContext) -> PackageRecord:
    done = ctx.runner.capture(["dpkg-deb", "-f", path, "Package", "Version"], env=ctx.env)
    fields = dict(line.split(": ", 1) for line in done.stdout.splitlines() if ": " in line)
    return PackageRecord(
        name=fields.get("Package", path.name.split("_")[0]),
        version=fields.get("Version", "unknown"),
        sha256=sha256_file(path),
        filename=path.name,
    )
