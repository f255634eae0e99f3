"""Installing the plan's host compiler when asked (``--install-deps``, root only): the packages
that provide a compiler per package manager, and the install itself. *Which* compiler a build
uses is the planner's decision (:mod:`torchsmith.planner.toolchain`), nowhere else."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from torchsmith import proc
from torchsmith.errors import HostError
from torchsmith.host.model import Family, HostFacts

_RPM_IDS = frozenset({"rhel", "centos", "rocky", "almalinux", "ol", "fedora", "amzn"})


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


def install_hint(family: Family, major: int) -> InstallHint:
    if family == "gcc":
        return InstallHint(
            f"gcc-{major}", (f"gcc-{major}", f"g++-{major}"), (f"gcc-toolset-{major}",)
        )
    return InstallHint(f"clang-{major}", (f"clang-{major}",), (f"llvm-toolset-{major}",))


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
