"""Take members out of a wheel fast: the fastest inflater installed (ISA-L through ``isal``,
else ``zlib-ng`` through ``zlib_ng``, else the standard ``zlib``), one member per thread (all
three release the GIL while they inflate), each into its own scratch file — in memory (a
``memfd``) when there is room, else on disk — read in bounded chunks, its CRC-32 checked."""

from __future__ import annotations

import contextlib
import importlib
import os
import struct
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, BinaryIO

from torchsmith.errors import InspectError
from torchsmith.inspect.holes import Hole, HoleWriter

_LOCAL = struct.Struct("<4s5H3I2H")
_LOCAL_MAGIC = b"PK\x03\x04"
_IN = 1 << 20  # compressed bytes read at a time
_OUT = 256 << 10  # most bytes one inflate call may produce (a zip bomb stays bounded); small
# buffers of one size are reused by malloc — 8 MiB ones raised glibc's mmap threshold and the
# peak RSS of a 2.14.1 wheel to 200 MiB (130 MiB at this size, measured)
_CODECS = ("isal.isal_zlib", "zlib_ng.zlib_ng")


def codec() -> ModuleType:
    """The fastest zlib-compatible module installed (``decompressobj``, ``crc32``)."""
    for name in _CODECS:
        with contextlib.suppress(ImportError):
            return importlib.import_module(name)
    return zlib


def codec_name() -> str:
    return codec().__name__.split(".")[0]


def _data_offset(fh: BinaryIO, info: zipfile.ZipInfo) -> int:
    fh.seek(info.header_offset)
    head = fh.read(_LOCAL.size)
    if len(head) != _LOCAL.size or head[:4] != _LOCAL_MAGIC:
        raise InspectError(
            f"{info.filename}: the wheel's local header is damaged",
            "re-download the wheel; it is corrupt",
        )
    name_len, extra_len = _LOCAL.unpack(head)[-2:]
    return int(info.header_offset) + _LOCAL.size + int(name_len) + int(extra_len)


def _chunks(fh: BinaryIO, start: int, size: int) -> Iterator[bytes]:
    fh.seek(start)
    left = size
    while left > 0:
        data = fh.read(min(_IN, left))
        if not data:
            raise InspectError("the wheel ends inside a member", "re-download the wheel")
        left -= len(data)
        yield data


def _inflate(chunks: Iterator[bytes], dest: BinaryIO, mod: ModuleType) -> tuple[int, int]:
    """(bytes written, CRC-32) of the raw deflate stream in ``chunks``."""
    inflater = mod.decompressobj(-15)
    written, crc = 0, 0
    for chunk in chunks:
        data = chunk
        while data:
            out = inflater.decompress(data, _OUT)
            data = inflater.unconsumed_tail
            dest.write(out)
            written, crc = written + len(out), mod.crc32(out, crc)
    out = inflater.flush()
    dest.write(out)
    return written + len(out), mod.crc32(out, crc)


def _copy(chunks: Iterator[bytes], dest: BinaryIO, mod: ModuleType) -> tuple[int, int]:
    written, crc = 0, 0
    for data in chunks:
        dest.write(data)
        written, crc = written + len(data), mod.crc32(data, crc)
    return written, crc


_ELF = b"\x7fELF"
_OTHER = {
    b"\xcf\xfa\xed\xfe": "a macOS (Mach-O) library: this is a macOS wheel",
    b"\xca\xfe\xba\xbe": "a macOS universal (Mach-O) library: this is a macOS wheel",
    b"MZ": "a Windows (PE) DLL: this is a Windows wheel",
}


class _ElfOnly:
    """A sink that refuses a member whose first bytes are not ELF's, before inflating the
    rest (a 3 GB member of zeros was read whole before being refused)."""

    def __init__(self, sink: Any, name: str) -> None:
        self.sink, self.name, self.seen = sink, name, False

    def write(self, data: bytes) -> None:
        if not self.seen and data:
            self.seen = True
            if not data.startswith(_ELF):
                raise InspectError(f"{self.name} is not an ELF shared object: {_what(data)}", _HINT)
        self.sink.write(data)


_HINT = "inspect a Linux torch wheel (its file name's tags say linux_x86_64, manylinux…, aarch64)"


def _what(head: bytes) -> str:
    for magic, what in _OTHER.items():
        if head.startswith(magic):
            return what
    return f"it starts with {head[:8].hex(' ')}, no library format torchsmith knows"


def extract(
    wheel: Path, info: zipfile.ZipInfo, dest: BinaryIO, *, holes: bool = False, elf: bool = False
) -> list[Hole]:
    """Member ``info`` of ``wheel`` into ``dest``, checked against its size and CRC-32; opens
    the wheel itself, so threads do not share a file position. ``holes``: leave CUDA fat binary
    payloads out (:mod:`torchsmith.inspect.holes`); the holes left.
    ``elf``: refuse a member that does not start as an ELF file, as soon as it starts."""
    if info.flag_bits & 0x1:
        raise InspectError(f"{info.filename} is encrypted", "this is not a wheel pip can install")
    mod = codec()
    writer = HoleWriter(dest) if holes else None
    sink: Any = writer if writer is not None else dest
    if elf:
        sink = _ElfOnly(sink, info.filename)
    with wheel.open("rb") as fh:
        chunks = _chunks(fh, _data_offset(fh, info), info.compress_size)
        if info.compress_type == zipfile.ZIP_DEFLATED:
            size, crc = _inflate(chunks, sink, mod)
        elif info.compress_type == zipfile.ZIP_STORED:
            size, crc = _copy(chunks, sink, mod)
        else:
            raise InspectError(
                f"{info.filename} uses zip method {info.compress_type}",
                "wheels are stored or deflated; re-download or rebuild the wheel",
            )
    if size != info.file_size or crc != info.CRC:
        raise InspectError(
            f"{info.filename} is corrupt: {size} bytes with CRC-32 {crc:08x}, the wheel's "
            f"index says {info.file_size} bytes, {info.CRC:08x}",
            "re-download the wheel",
        )
    if writer is not None:
        writer.close(size)
        return writer.holes
    dest.flush()
    return []


def _room_in_memory(size: int, workers: int) -> bool:
    """A member goes to a memfd when ``workers`` of its size use under a quarter of the free
    memory; else to a file on disk."""
    try:
        free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return False
    return hasattr(os, "memfd_create") and size * workers * 4 < free


@contextlib.contextmanager
def scratch(size: int, workers: int, tmp: Path) -> Iterator[tuple[BinaryIO, Path]]:
    """A scratch file for one member and a path other processes can open it by."""
    if _room_in_memory(size, workers):
        fd = os.memfd_create("torchsmith-inspect", os.MFD_CLOEXEC)
        with os.fdopen(fd, "w+b") as fh:
            yield fh, Path(f"/proc/{os.getpid()}/fd/{fd}")
        return
    with tempfile.NamedTemporaryFile(dir=tmp, prefix="lib-", suffix=".so") as fh:
        yield fh, Path(fh.name)  # type: ignore[misc]
