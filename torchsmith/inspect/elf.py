"""Facts about one shared library, read with pyelftools from a file on disk: dynamic section,
symbol-version needs, compiler notes, C++ ABI markers, component symbols and GPU code."""

from __future__ import annotations

import os
import re
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from torchsmith.errors import InspectError
from torchsmith.inspect.abi import AbiMarks, marks_of_strtab
from torchsmith.inspect.fatbin import FatbinEntry, FatbinFormatError, read_fatbin

# Symbols whose *definition* inside a library means the component is linked into it statically.
COMPONENT_SYMBOLS: dict[str, tuple[str, ...]] = {
    "cudart": ("cudaMalloc", "cudaGetDeviceCount", "__cudaRegisterFatBinary"),
    "cudnn": ("cudnnCreate", "cudnnGetVersion"),
    "nccl": ("ncclCommInitRank", "ncclGetVersion"),
    "cublas": ("cublasCreate_v2", "cublasLtCreate"),
}
# Strings only a statically linked copy carries (the shared library keeps them to itself); all of
# a component's markers must be present. Chosen from the real libraries (libcudart_static of
# CUDA 13.0, libnccl.so.2 2.30.7, libcublas.so.13 13.1) and checked absent from torch 2.13/2.14's
# own libraries.
COMPONENT_MARKERS: dict[str, tuple[bytes, ...]] = {
    "cudart": (b"/cudart.shm.",),
    "nccl": (b"NCCL_COMM_ID", b"ncclTopoSort"),
    "cublas": (b"cublasDrotmg", b"cublasZsyr2k"),
}
_WANTED = {name.encode() for names in COMPONENT_SYMBOLS.values() for name in names}
_ARCH_FLAGS = re.compile(rb"\x00((?:sm|compute)_\d+[af]?(?: (?:sm|compute)_\d+[af]?)*)\x00")
_SYM = struct.Struct("<IBBHQQ")
_DYN = struct.Struct("<qQ")
_VERNEED = struct.Struct("<HHIII")
_VERNAUX = struct.Struct("<IHHII")
_DT_NEEDED, _DT_RPATH, _DT_RUNPATH = 1, 15, 29
_MAX_STR = 4096  # PATH_MAX: no library name or search path is longer
_LONGEST = max(len(name) for name in _WANTED)
_PIECE = 24 << 15  # 768 KiB, a multiple of the 24-byte symbol entry (small: see inflate._OUT)
# What a malformed or hostile ELF makes pyelftools or our own reads raise (security review L4).
_MALFORMED = (ELFError, struct.error, ValueError, OverflowError, KeyError, IndexError, EOFError)


@dataclass(frozen=True)
class ElfFacts:
    """What one ELF shared object says about itself."""

    needed: tuple[str, ...]
    rpath: tuple[str, ...]
    runpath: tuple[str, ...]
    version_needs: tuple[str, ...]
    compilers: tuple[str, ...]
    abi: AbiMarks
    defined: frozenset[str]
    undefined: frozenset[str]
    arch_flags: str | None
    markers: frozenset[str] = frozenset()
    fatbin: tuple[FatbinEntry, ...] = field(default=())
    relocatable_fatbin_bytes: int = 0


def _cstr(table: bytes, offset: int) -> str:
    """The NUL-terminated string at ``offset``, looked for within ``_MAX_STR`` bytes only (a
    hostile table without NULs must not make each lookup scan the rest of it)."""
    end = table.find(b"\0", offset, offset + _MAX_STR)
    return table[offset:end].decode(errors="replace") if end >= 0 else ""


def _dynamic(dynamic: bytes, dynstr: bytes) -> tuple[list[str], list[str], list[str]]:
    """DT_NEEDED, DT_RPATH and DT_RUNPATH, read raw from the .dynamic section."""
    found: dict[int, list[str]] = {_DT_NEEDED: [], _DT_RPATH: [], _DT_RUNPATH: []}
    for tag, value in _DYN.iter_unpack(dynamic[: len(dynamic) // 16 * 16]):
        if tag == 0:  # DT_NULL ends the table
            break
        if tag in found:
            found[tag].append(_cstr(dynstr, value))
    split = [part for path in found[_DT_RPATH] for part in path.split(":")]
    runsplit = [part for path in found[_DT_RUNPATH] for part in path.split(":")]
    return found[_DT_NEEDED], split, runsplit


def _version_needs(verneed: bytes, dynstr: bytes) -> list[str]:
    """Names of the symbol versions a library needs (Elf64_Verneed / Elf64_Vernaux chains),
    every step bounded by the section's size."""
    names: set[str] = set()
    pos, steps = 0, len(verneed) // 16
    while steps > 0 and 0 <= pos <= len(verneed) - 16:
        _ver, count, _file, aux, nxt = _VERNEED.unpack_from(verneed, pos)
        at = pos + aux
        for _ in range(min(count, steps)):
            if not 0 <= at <= len(verneed) - 16:
                break
            _hash, _flags, _other, name, aux_next = _VERNAUX.unpack_from(verneed, at)
            names.add(_cstr(dynstr, name))
            at, steps = at + aux_next, steps - 1
        if nxt == 0:
            break
        pos, steps = pos + nxt, steps - 1
    return sorted(names - {""})


def _section_bytes(fh: BinaryIO, elf: ELFFile, name: str) -> bytes:
    section = elf.get_section_by_name(name)
    if section is None or section["sh_type"] == "SHT_NOBITS":
        return b""
    offset, size = _clamped(fh, int(section["sh_offset"]), int(section["sh_size"]))
    fh.seek(offset)
    return fh.read(size)


def _clamped(fh: BinaryIO, offset: int, size: int) -> tuple[int, int]:
    """(offset, size) cut to what the file holds: a header may claim 2**63 bytes."""
    end = os.fstat(fh.fileno()).st_size
    offset = min(max(offset, 0), end)
    return offset, min(max(size, 0), end - offset)


_COMMENT_CAP = 64 * 1024  # a real .comment holds a few compiler lines (libtorch_cuda: < 200 bytes)


def _compilers(fh: BinaryIO, elf: ELFFile) -> list[str]:
    """The compilers named in ``.comment``, read up to 64 KiB: a 128 MiB section of NULs made a
    list of 134 million empty slots (1.2 GiB, security review f1b4bec N9)."""
    offset, size = _section_range(fh, elf, ".comment")
    fh.seek(offset)
    notes = fh.read(min(size, _COMMENT_CAP))
    return sorted({n.decode(errors="replace") for n in re.findall(rb"[^\0]+", notes)})


def _section_range(fh: BinaryIO, elf: ELFFile, name: str) -> tuple[int, int]:
    """(offset, size) of a section's bytes in the file, (0, 0) when it has none."""
    section = elf.get_section_by_name(name)
    if section is None or section["sh_type"] == "SHT_NOBITS":
        return 0, 0
    return _clamped(fh, int(section["sh_offset"]), int(section["sh_size"]))


def _chunks(fh: BinaryIO, offset: int, size: int, overlap: int = 0) -> Iterator[tuple[int, bytes]]:
    """(position in the section, bytes) in pieces of ``_PIECE``, each repeating the last
    ``overlap`` bytes of the one before: a 78 MB ``.strtab`` is never held whole."""
    pos = 0
    while pos < size:
        fh.seek(offset + pos)
        data = fh.read(min(_PIECE + overlap, size - pos))
        if not data:
            return
        yield pos, data
        pos += _PIECE


def _wanted_offsets(fh: BinaryIO, elf: ELFFile, strtab: str) -> dict[int, str]:
    """Where in the string table each wanted name (NUL-terminated) starts — also as the tail
    of a longer string, which a linker may share."""
    offset, size = _section_range(fh, elf, strtab)
    found: dict[int, str] = {}
    for pos, data in _chunks(fh, offset, size, overlap=_LONGEST + 1):
        found |= _names_in(pos, data)
    return found


def _names_in(pos: int, data: bytes) -> dict[int, str]:
    found: dict[int, str] = {}
    for name in _WANTED:
        at = data.find(name + b"\0")
        while at >= 0:
            found[pos + at] = name.decode()
            at = data.find(name + b"\0", at + 1)
    return found


def _symbols(fh: BinaryIO, elf: ELFFile, table: str, strtab: str) -> tuple[set[str], set[str]]:
    """Defined and undefined component symbols, read raw and in pieces (fast on 500k-symbol
    tables, memory bounded on 78 MB string tables)."""
    defined: set[str] = set()
    undefined: set[str] = set()
    wanted = _wanted_offsets(fh, elf, strtab)
    if not wanted:
        return defined, undefined
    offset, size = _section_range(fh, elf, table)
    for _pos, data in _chunks(fh, offset, size - size % _SYM.size):
        for st_name, _info, _other, shndx, _value, _size in _SYM.iter_unpack(data):
            name = wanted.get(st_name)
            if name is not None:
                (defined if shndx != 0 else undefined).add(name)
    return defined, undefined


def _arch_flags(rodata: bytes) -> str | None:
    """The ``CUDA_ARCH_FLAGS`` string torch compiles in (what ``get_arch_list()`` returns)."""
    found = _ARCH_FLAGS.search(rodata)
    return found.group(1).decode() if found else None


_RODATA_OVERLAP = 4096  # longer than any marker or arch list: a match across two pieces is seen


def _rodata_facts(fh: BinaryIO, elf: ELFFile, arch_flags: bool) -> tuple[str | None, set[str]]:
    """(the compiled-in arch list when asked, the components whose markers are all there), from
    ``.rodata`` read in pieces: a 128 MiB section was held whole (security review f1b4bec N9)."""
    flags, seen = None, set()
    offset, size = _section_range(fh, elf, ".rodata")
    for _pos, piece in _chunks(fh, offset, size, overlap=_RODATA_OVERLAP):
        if arch_flags and flags is None:
            flags = _arch_flags(piece)
        seen |= {m for marks in COMPONENT_MARKERS.values() for m in marks if m in piece}
    markers = {c for c, marks in COMPONENT_MARKERS.items() if seen.issuperset(marks)}
    return flags, markers


def _gpu_code(fh: BinaryIO, elf: ELFFile) -> tuple[tuple[FatbinEntry, ...], int]:
    section = elf.get_section_by_name(".nv_fatbin")
    rel = elf.get_section_by_name("__nv_relfatbin")
    rel_bytes = int(rel["sh_size"]) if rel is not None else 0
    if section is None:
        return (), rel_bytes
    try:
        offset, size = _clamped(fh, int(section["sh_offset"]), int(section["sh_size"]))
        return tuple(read_fatbin(fh, offset, size)), rel_bytes
    except FatbinFormatError as exc:
        raise InspectError(f"unreadable .nv_fatbin section: {exc}") from exc


def _union(pairs: Iterable[tuple[set[str], set[str]]]) -> tuple[frozenset[str], frozenset[str]]:
    defined: set[str] = set()
    undefined: set[str] = set()
    for d, u in pairs:
        defined |= d
        undefined |= u
    return frozenset(defined), frozenset(undefined - defined)


def holes_inside_fatbin(path: Path, holes: list[tuple[int, int, int]]) -> bool:
    """Every hole left in the file at ``path`` — and the container it was found in — lies
    inside its ``.nv_fatbin``, so the section's reader walks the same containers (False for a
    file that is not ELF: it is read again whole, and refused then)."""
    if not holes:
        return True
    try:
        with path.open("rb") as fh:
            section = ELFFile(fh).get_section_by_name(".nv_fatbin")
            if section is None:
                return False
            lo, hi = int(section["sh_offset"]), int(section["sh_offset"] + section["sh_size"])
    except _MALFORMED:
        return False
    return all(lo <= box <= start and end <= hi for box, start, end in holes)


def read_elf(path: Path, *, arch_flags: bool = False) -> ElfFacts:
    """Read every fact from the shared object at ``path`` (it is never loaded or run);
    ``arch_flags``: also look for the compiled-in arch list (torch's Python extension)."""
    try:
        with path.open("rb") as fh:
            elf = ELFFile(fh)
            dynstr = _section_bytes(fh, elf, ".dynstr")
            needed, rpath, runpath = _dynamic(_section_bytes(fh, elf, ".dynamic"), dynstr)
            defined, undefined = _union(
                [_symbols(fh, elf, ".dynsym", ".dynstr"), _symbols(fh, elf, ".symtab", ".strtab")]
            )
            fatbin, rel_bytes = _gpu_code(fh, elf)
            flags, markers = _rodata_facts(fh, elf, arch_flags)
            return ElfFacts(
                needed=tuple(needed),
                rpath=tuple(rpath),
                runpath=tuple(runpath),
                version_needs=tuple(
                    _version_needs(_section_bytes(fh, elf, ".gnu.version_r"), dynstr)
                ),
                compilers=tuple(_compilers(fh, elf)),
                abi=marks_of_strtab(dynstr),
                defined=defined,
                undefined=undefined,
                arch_flags=flags,
                markers=frozenset(markers),
                fatbin=fatbin,
                relocatable_fatbin_bytes=rel_bytes,
            )
    except _MALFORMED as exc:
        raise InspectError(f"{path.name} is not a readable ELF shared object: {exc}") from exc
    except MemoryError:  # a section built to amplify (security review f1b4bec N9)
        raise InspectError(
            f"{path.name}: reading its sections needs more memory than this machine gives",
            "inspect it on a machine with more memory, or distrust the file: a real torch "
            "library is read in well under 200 MiB",
        ) from None
