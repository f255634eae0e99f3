"""OS, C library, CPU cores, memory and free disk space."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from torchsmith.host import parse
from torchsmith.host._run import ProbeError, query
from torchsmith.runner import Runner


class SystemFacts(NamedTuple):  # a NamedTuple: no generated code at import (start-up)
    os_id: str = ""
    os_version: str = ""
    os_codename: str = ""
    machine: str = ""
    glibc: str | None = None
    cores: int = 1
    ram_gib: float = 0.0
    disk_free_gib: float = 0.0
    warnings: tuple[str, ...] = ()


def _read(path: Path) -> str | None:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return None


def os_release_values(root: Path = Path("/")) -> dict[str, str] | None:
    """Every variable of ``/etc/os-release`` (or ``/usr/lib/os-release``)."""
    for rel in ("etc/os-release", "usr/lib/os-release"):
        text = _read(root / rel)
        if text is not None:
            return parse.parse_os_release(text)
    return None


def os_release(root: Path = Path("/")) -> tuple[str, str] | None:
    """(ID, VERSION_ID) from ``/etc/os-release`` (or ``/usr/lib/os-release``)."""
    values = os_release_values(root)
    return None if values is None else (values.get("ID", ""), values.get("VERSION_ID", ""))


def glibc_version(env: Mapping[str, str], runner: Runner) -> str | None:
    """The C library version: ``os.confstr`` first, ``ldd --version`` second."""
    try:
        found = parse.parse_glibc_confstr(os.confstr("CS_GNU_LIBC_VERSION") or "")
    except (ValueError, OSError):
        found = None
    return found or parse.parse_ldd_version(query(["ldd", "--version"], env, runner))


def cores() -> int:
    """CPUs this process may run on (affinity, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def ram_gib(root: Path = Path("/")) -> float | None:
    text = _read(root / "proc/meminfo")
    kib = parse.parse_meminfo_kib(text) if text else None
    return round(kib / 2**20, 1) if kib else None


def disk_free_gib(path: Path) -> float:
    """Free space where ``path`` is (or would be: the nearest existing parent)."""
    here = path.absolute()
    while not here.exists() and here != here.parent:
        here = here.parent
    return round(shutil.disk_usage(here).free / 2**30, 1)


def _glibc_or_warning(env: Mapping[str, str], runner: Runner, warnings: list[str]) -> str | None:
    try:
        return glibc_version(env, runner)
    except ProbeError as exc:
        warnings.append(f"glibc version unknown: {exc.message}")
        return None


def _disk_or_warning(disk_path: Path, warnings: list[str]) -> float:
    try:
        return disk_free_gib(disk_path)
    except OSError as exc:
        warnings.append(f"free disk at {disk_path} unknown: {exc}")
        return 0.0


def probe_system(
    env: Mapping[str, str], disk_path: Path, runner: Runner, root: Path = Path("/")
) -> SystemFacts:
    warnings: list[str] = []
    release = os_release_values(root)
    if release is None:
        warnings.append("no /etc/os-release: OS unknown")
    ram = ram_gib(root)
    if ram is None:
        warnings.append("RAM unknown: /proc/meminfo unreadable")
    values = release or {}
    return SystemFacts(
        os_id=values.get("ID", ""),
        os_version=values.get("VERSION_ID", ""),
        os_codename=values.get("VERSION_CODENAME", ""),
        machine=os.uname().machine,
        glibc=_glibc_or_warning(env, runner, warnings),
        cores=cores(),
        ram_gib=ram or 0.0,
        disk_free_gib=_disk_or_warning(disk_path, warnings),
        warnings=tuple(warnings),
    )
