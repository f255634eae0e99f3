"""Read the headers of CUDA fat binaries (the ``.nv_fatbin`` ELF section) without a GPU,
without ``cuobjdump`` and without decompressing anything.

NVIDIA does not document the container format; the layout used here is the one other open
readers use (e.g. vosen/ZLUDA's ``zluda_dump``) and was checked against ``cuobjdump --list-elf``
on torch's own libraries (see ``tests/fixtures/inspect/README.md``):

* a section holds one or more *containers*, each 8-byte aligned, zero padding between them;
* container header (16 bytes): ``u32 magic 0xBA55ED50, u16 version, u16 header_size,
  u64 payload_size`` — the entries follow ``header_size`` bytes after its start;
* entry header (64 bytes, 112 since CUDA 12.8 for some entries): ``u16 kind`` (1 PTX, 2 ELF/SASS),
  ``u16 version, u32 header_size, u64 padded_size, u32 stored_size, u32 _, u16 minor, u16 major,
  u32 arch, ..., u64 flags @40, ..., u64 uncompressed_size @56``. ``flags`` bit 0x100000 marks an
  arch-specific target (``sm_90a``), bit 0x200000 a family-specific one (``sm_100f``, CUDA 12.9+;
  seen on ``tests/fixtures/inspect/libk_fam.so``, built by nvcc 13.0 for ``sm_100f``/``sm_103a``);
  ``major.minor`` is the code version (the PTX ISA for PTX).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO, Literal

FATBIN_MAGIC = 0xBA55ED50
_CONTAINER = struct.Struct("<IHHQ")
_ENTRY = struct.Struct(
    "<HHIQIIHHI"
)  # kind, version, header_size, padded, stored, _, mnr, mjr, arch
_FLAGS_AT = 40
_UNCOMPRESSED_AT = 56
_ARCH_SPECIFIC = 0x100000
_FAMILY_SPECIFIC = 0x200000
_COMPRESSED = 0x2000 | 0x8000
_MAX_SCAN = 1 << 16  # bytes of padding tolerated between containers

EntryKind = Literal["sass", "ptx"]


class FatbinFormatError(ValueError):
    """The bytes are not a fat binary of the layout this reader knows."""


@dataclass(frozen=True)
class FatbinEntry:
    """One code object inside a container: its target and sizes, never its contents."""

    container: int
    kind: EntryKind
    arch: str
    code_version: str
    stored_bytes: int
    uncompressed_bytes: int
    flags: int


def arch_name(kind: EntryKind, number: int, flags: int) -> str:
    """``sm_90``/``sm_90a``/``sm_100f`` for SASS, ``compute_90`` for PTX (nvcc's names)."""
    suffix = "a" if flags & _ARCH_SPECIFIC else "f" if flags & _FAMILY_SPECIFIC else ""
    prefix = "sm" if kind == "sass" else "compute"
    return f"{prefix}_{number}{suffix}"


def _entry(container: int, head: bytes) -> FatbinEntry | None:
    kind_no, _v, _h, padded, stored, _u, minor, major, arch = _ENTRY.unpack_from(head, 0)
    if kind_no not in (1, 2):
        return None
    flags = struct.unpack_from("<Q", head, _FLAGS_AT)[0]
    uncompressed = struct.unpack_from("<Q", head, _UNCOMPRESSED_AT)[0]
    kind: EntryKind = "ptx" if kind_no == 1 else "sass"
    return FatbinEntry(
        container=container,
        kind=kind,
        arch=arch_name(kind, arch, flags),
        code_version=f"{major}.{minor}",
        stored_bytes=stored or padded,
        uncompressed_bytes=uncompressed
        if flags & _COMPRESSED and uncompressed
        else stored or padded,
        flags=flags,
    )


def _read(fh: BinaryIO, at: int, size: int) -> bytes:
    fh.seek(at)
    data = fh.read(size)
    if len(data) != size:
        raise FatbinFormatError(f"truncated fat binary at offset {at}")
    return data


def _entries_of(fh: BinaryIO, index: int, start: int, end: int) -> Iterator[FatbinEntry]:
    pos = start
    while pos + _ENTRY.size <= end:
        head = _read(fh, pos, min(64, end - pos))
        header_size, padded = struct.unpack_from("<IQ", head, 4)
        if header_size < _ENTRY.size or header_size + padded == 0:
            raise FatbinFormatError(f"bad fat binary entry header at offset {pos}")
        entry = _entry(index, head.ljust(64, b"\0"))
        if entry is not None:
            yield entry
        pos += header_size + padded


def _next_container(fh: BinaryIO, pos: int, end: int) -> int | None:
    """The offset of the next container magic at or after ``pos`` (8-byte steps)."""
    limit = min(end, pos + _MAX_SCAN)
    while pos + _CONTAINER.size <= limit:
        if struct.unpack("<I", _read(fh, pos, 4))[0] == FATBIN_MAGIC:
            return pos
        pos += 8
    return None


def read_fatbin(fh: BinaryIO, offset: int, size: int) -> Iterator[FatbinEntry]:
    """Every entry of every container in ``fh[offset : offset + size]``."""
    end = offset + size
    pos, index = offset, 0
    while True:
        found = _next_container(fh, pos, end)
        if found is None:
            return
        magic, _version, header_size, payload = _CONTAINER.unpack(_read(fh, found, 16))
        if magic != FATBIN_MAGIC or header_size < _CONTAINER.size:
            raise FatbinFormatError(f"bad fat binary container at offset {found}")
        stop = min(end, found + header_size + payload)
        yield from _entries_of(fh, index, found + header_size, stop)
        index += 1
        pos = (stop + 7) & ~7
