"""Installing the plan's host compiler when asked (``--install-deps``, root only): the packages
that provide a compiler per package manager, and the install itself. *Which* compiler a build
uses is the planner's decision (:mod:`torchsmith.planner.toolchain`), nowhere else."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from torchsmith.errors import HostError
from torchsmith.host.model import Family, HostFacts
from torchsmith.runner import Runner

_RPM_IDS = frozenset({"rhel", "centos", "rocky", "almalinux", "ol", "fedora", "amzn"})


@dataclass(frozen=True)
class InstallHint:
    """The packages that provide a compiler, per package manager. ``dnf_note`` says what the
    RPM route really gives (RHEL has versioned gcc-toolset-N packages, but one clang only)."""

    label: str
    apt: tuple[str, ...]
    dnf: tuple[str, ...]
    dnf_note: str = ""

    def command(self, os_id: str = "") -> str:
        """The install command for this host's family of distributions (both when unknown)."""
        apt = f"apt-get install {' '.join(dict.fromkeys(self.apt))} (Debian/Ubuntu)"
        dnf = f"dnf install {' '.join(dict.fromkeys(self.dnf))} ({self.dnf_note})"
        if os_id in _RPM_IDS:
            return dnf
        return apt if os_id in {"debian", "ubuntu"} else f"{apt} or {dnf}"


def install_hint(family: Family, major: int) -> InstallHint:
    # RHEL 8/9 package GCC Toolset N as gcc-toolset-N, and clang only as the unversioned
    # "clang" of their LLVM Toolset (https://access.redhat.com/support/policy/updates/
    # rhel-app-streams-life-cycle): there is no clang-N or llvm-toolset-N package to name.
    if family == "gcc":
        return InstallHint(
            f"gcc-{major}",
            (f"gcc-{major}", f"g++-{major}"),
            (f"gcc-toolset-{major}",),
            f"RHEL/Rocky/Alma 8+; then scl enable gcc-toolset-{major} bash",
        )
    return InstallHint(
        f"clang-{major}",
        (f"clang-{major}",),
        ("clang",),
        f"RHEL/Rocky/Alma: one clang version per release, which may not be {major}",
    )


def install_compiler(
    hint: InstallHint,
    host: HostFacts,
    env: Mapping[str, str],
    *,
    runner: Runner,
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
    runner.run(argv, env={**env, "DEBIAN_FRONTEND": "noninteractive"}, log_path=log_path)
