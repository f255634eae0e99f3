"""The host compiler: one that both the CUDA version (the newest GCC/Clang its
``crt/host_config.h`` accepts: KB ``cuda.gcc_max``/``clang_max``) and the torch release (KB
``release.gcc_min``) accept, picked from the host probe's compilers.

Selection is pure: ``select_host_compiler(cuda, release, host, wanted)`` → :class:`CompilerChoice`
with a reason, or a :class:`PlanError` naming the compiler that would work and the package that
provides it. The thin install layer (:func:`install_compiler`) runs the package manager only
when asked to (``--install-deps``) and only as root."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from torchsmith import proc
from torchsmith.errors import HostError, PlanError, Problem, UsageError
from torchsmith.host.model import Compiler, Family, HostFacts
from torchsmith.host.selection import select_compiler
from torchsmith.kb.models import CudaRelease, Release

_WANTED = re.compile(r"^(gcc|clang)-?(\d+)$")
_RPM_IDS = frozenset({"rhel", "centos", "rocky", "almalinux", "ol", "fedora", "amzn"})


@dataclass(frozen=True)
class Bounds:
    """The accepted major versions of one compiler family, and why."""

    family: Family
    min_major: int | None
    max_major: int | None
    why: str

    def accepts(self, major: int) -> bool:
        low = self.min_major is None or major >= self.min_major
        return low and (self.max_major is None or major <= self.max_major)


@dataclass(frozen=True)
class InstallHint:
    """The packages that provide a compiler, per package manager."""

    label: str
    apt: tuple[str, ...]
    dnf: tuple[str, ...]

    def command(self, os_id: str = "") -> str:
        """The install command for this host's family of distributions (both when unknown)."""
        apt = f"apt-get install {' '.join(self.apt)} (Debian/Ubuntu)"
        dnf = f"dnf install {' '.join(self.dnf)} (RHEL/Rocky/Alma; then scl enable)"
        if os_id in _RPM_IDS:
            return dnf
        return apt if os_id in {"debian", "ubuntu"} else f"{apt} or {dnf}"


@dataclass(frozen=True)
class CompilerChoice:
    """The chosen compiler (``compiler`` is None when it must be installed first)."""

    label: str
    compiler: Compiler | None
    reason: str
    install: InstallHint | None = None

    def env(self) -> dict[str, str]:
        """CC, CXX and CUDAHOSTCXX (the host compiler nvcc uses; CMake ≥ 3.10 reads it)."""
        if self.compiler is None or self.compiler.cxx is None:
            return {}
        cxx = self.compiler.cxx
        return {"CC": self.compiler.cc, "CXX": cxx, "CUDAHOSTCXX": cxx}

    def nvcc_flags(self) -> list[str]:
        """``-ccbin`` for direct nvcc calls (TORCH_NVCC_FLAGS, extensions)."""
        env = self.env()
        return ["-ccbin", env["CUDAHOSTCXX"]] if env else []


def install_hint(family: Family, major: int) -> InstallHint:
    if family == "gcc":
        return InstallHint(
            f"gcc-{major}", (f"gcc-{major}", f"g++-{major}"), (f"gcc-toolset-{major}",)
        )
    return InstallHint(f"clang-{major}", (f"clang-{major}",), (f"llvm-toolset-{major}",))


def bounds(family: Family, cuda: CudaRelease | None, release: Release | None) -> Bounds:
    """What CUDA (newest accepted) and torch (oldest accepted, GCC only) allow."""
    limit = None if cuda is None else (cuda.gcc_max if family == "gcc" else cuda.clang_max)
    floor = None
    if family == "gcc" and release is not None and release.gcc_min:
        floor = int(release.gcc_min.split(".", maxsplit=1)[0])
    parts = []
    if cuda is not None:
        parts.append(f"CUDA {cuda.version} accepts {family} ≤ {limit if limit else '?'}")
    if floor is not None and release is not None:
        parts.append(f"torch {release.torch} needs gcc ≥ {release.gcc_min}")
    return Bounds(family, floor, limit, "; ".join(parts) or "no version limits")


def parse_wanted(text: str) -> tuple[Family, int]:
    match = _WANTED.match(text.strip())
    if not match:
        raise UsageError(f"compiler {text!r} is not understood", "write it as gcc-11 or clang-14")
    family: Family = "gcc" if match.group(1) == "gcc" else "clang"
    return family, int(match.group(2))


def _best_major(b: Bounds, host: HostFacts) -> int:
    """The version to recommend installing: the newest the bounds allow (CUDA's limit)."""
    if b.max_major is not None:
        return b.max_major
    have = [c.major for c in host.compilers if c.family == b.family]
    return max([*have, b.min_major or 0, 11])


def refusal(b: Bounds, asked: str, host: HostFacts) -> Problem:
    hint = install_hint(b.family, _best_major(b, host))
    return Problem(
        f"{asked} cannot be used: {b.why}",
        f"use --compiler {hint.label}: {hint.command(host.os_id)}, or build with --install-deps",
        "compiler",
    )


def _exact(host: HostFacts, family: Family, major: int) -> Compiler | None:
    return select_compiler(host, family, max_major=major, min_major=major)


def _chosen_wanted(family: Family, major: int, b: Bounds, host: HostFacts) -> CompilerChoice:
    if not b.accepts(major):
        raise PlanError([refusal(b, f"{family}-{major}", host)])
    found = _exact(host, family, major)
    if found is not None:
        return CompilerChoice(found.label, found, f"asked for; {b.why}: {found.cxx}")
    hint = install_hint(family, major)
    return CompilerChoice(hint.label, None, "asked for; not installed here", hint)


def select_host_compiler(
    cuda: CudaRelease | None,
    release: Release | None,
    host: HostFacts,
    wanted: str | None = None,
) -> CompilerChoice:
    """The compiler for this build: ``wanted`` ('gcc-11') if the bounds accept it, else the
    newest GCC here that fits, else the newest fitting Clang, else the GCC to install."""
    if wanted is not None:
        family, major = parse_wanted(wanted)
        return _chosen_wanted(family, major, bounds(family, cuda, release), host)
    gcc = bounds("gcc", cuda, release)
    found = select_compiler(host, "gcc", gcc.max_major, gcc.min_major)
    if found is not None:
        return CompilerChoice(found.label, found, f"newest gcc here that fits ({gcc.why})")
    clang = bounds("clang", cuda, release)
    found = select_compiler(host, "clang", clang.max_major, None) if clang.max_major else None
    if found is not None:
        return CompilerChoice(
            found.label, found, f"no fitting gcc; newest fitting clang ({clang.why})"
        )
    hint = install_hint("gcc", _best_major(gcc, host))
    have = ", ".join(c.label for c in host.compilers) or "none"
    return CompilerChoice(hint.label, None, f"{gcc.why}; none here fits (found: {have})", hint)


def require_host_compiler(choice: CompilerChoice, host: HostFacts, install_deps: bool) -> None:
    """Refuse, before any work, a choice that is not installed (unless we may install it)."""
    if choice.compiler is None and choice.install is not None and not install_deps:
        raise PlanError(
            [
                Problem(
                    f"{choice.label} is needed ({choice.reason}) but not installed",
                    f"{choice.install.command(host.os_id)}, or build with --install-deps",
                    "compiler",
                )
            ]
        )


def install_compiler(
    hint: InstallHint,
    host: HostFacts,
    env: Mapping[str, str],
    *,
    is_root: bool,
    log_path: Path | None = None,
) -> None:
    """``--install-deps``: install the compiler with the host's package manager (root only)."""
    if not is_root:
        raise HostError(
            f"installing {hint.label} needs root",
            f"ask an administrator: {hint.command(host.os_id)}",
        )
    if host.os_id in _RPM_IDS:
        argv = ["dnf", "install", "-y", *hint.dnf]
    else:
        argv = ["apt-get", "install", "-y", "--no-install-recommends", *hint.apt]
    proc.run(argv, env={**env, "DEBIAN_FRONTEND": "noninteractive"}, log_path=log_path)
