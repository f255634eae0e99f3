"""Summarise a library's fat binary entries into per-target code and the build's arch list."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from torchsmith.inspect.fatbin import FatbinEntry
from torchsmith.inspect.model import ArchCode, GpuCode

MAIN_SHARE = 0.5  # a target in at least this share of containers belongs to the arch list


def arch_sort_key(arch: str) -> tuple[int, str, bool, str]:
    """Order 'sm_90' < 'sm_90a' < 'compute_90a' < 'sm_100' (number, suffix, SASS before PTX)."""
    prefix, _, tail = arch.partition("_")
    digits = "".join(ch for ch in tail if ch.isdigit())
    return (int(digits or 0), tail[len(digits) :], prefix != "sm", arch)


def _arch_code(arch: str, entries: Sequence[FatbinEntry]) -> ArchCode:
    return ArchCode(
        arch=arch,
        kind=entries[0].kind,
        entries=len(entries),
        containers=len({e.container for e in entries}),
        stored_bytes=sum(e.stored_bytes for e in entries),
        uncompressed_bytes=sum(e.uncompressed_bytes for e in entries),
        code_versions=sorted({e.code_version for e in entries}),
    )


def summarise(entries: Iterable[FatbinEntry], relocatable_bytes: int = 0) -> GpuCode | None:
    """``None`` when there is no GPU code at all."""
    by_arch: dict[str, list[FatbinEntry]] = defaultdict(list)
    for entry in entries:
        by_arch[entry.arch].append(entry)
    if not by_arch and not relocatable_bytes:
        return None
    containers = len({e.container for group in by_arch.values() for e in group})
    archs = [_arch_code(a, by_arch[a]) for a in sorted(by_arch, key=arch_sort_key)]
    main = [a for a in archs if a.containers >= MAIN_SHARE * containers]
    return GpuCode(
        containers=containers,
        sass=[a.arch for a in main if a.kind == "sass"],
        ptx=[a.arch for a in main if a.kind == "ptx"],
        extra=[a.arch for a in archs if a not in main],
        archs=archs,
        fatbin_bytes=sum(a.stored_bytes for a in archs),
        relocatable_bytes=relocatable_bytes,
    )
