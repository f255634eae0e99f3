"""Facts about one shared library, read with pyelftools from a file on disk: dynamic section,
symbol-version needs, compiler notes, C++ ABI markers, component symbols and GPU code."""

from __future__ import annotations

import re
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from elftools.common.exceptions import ELFError
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile
from elftools.elf.gnuversions import GNUVerNeedSection

from torchsmith.errors import InspectError
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


@dataclass(frozen=True)
class ElfFacts:
    """What one ELF shared object says about itself."""

    needed: tuple[str, ...]
    rpath: tuple[str, ...]
    runpath: tuple[str, ...]
    version_needs: tuple[str, ...]
    compilers: tuple[str, ...]
    cxx11_symbols: int
    defined: frozenset[str]
    undefined: frozenset[str]
    arch_flags: str | None
    markers: frozenset[str] = frozenset()
    fatbin: tuple[FatbinEntry, ...] = field(default=())
    relocatable_fatbin_bytes: int = 0


def _dynamic(elf: ELFFile) -> tuple[list[str], list[str], list[str]]:
    needed: list[str] = []
    rpath: list[str] = []
    runpath: list[str] = []
    dyn = elf.get_section_by_name(".dynamic")
    for tag in dyn.iter_tags() if isinstance(dyn, DynamicSection) else ():
        kind = tag.entry.d_tag
        if kind == "DT_NEEDED":
            needed.append(str(getattr(tag, "needed", "")))
        elif kind == "DT_RPATH":
            rpath += str(getattr(tag, "rpath", "")).split(":")
        elif kind == "DT_RUNPATH":
            runpath += str(getattr(tag, "runpath", "")).split(":")
    return needed, rpath, runpath


def _version_needs(elf: ELFFile) -> list[str]:
    section = elf.get_section_by_name(".gnu.version_r")
    if not isinstance(section, GNUVerNeedSection):
        return []
    return sorted({aux.name for _need, auxs in section.iter_versions() for aux in auxs})


def _section_bytes(fh: BinaryIO, elf: ELFFile, name: str) -> bytes:
    section = elf.get_section_by_name(name)
    if section is None or section["sh_type"] == "SHT_NOBITS":
        return b""
    fh.seek(section["sh_offset"])
    return fh.read(section["sh_size"])


def _compilers(fh: BinaryIO, elf: ELFFile) -> list[str]:
    notes = _section_bytes(fh, elf, ".comment").split(b"\0")
    return sorted({n.decode(errors="replace") for n in notes if n})


def _symbols(fh: BinaryIO, elf: ELFFile, table: str, strtab: str) -> tuple[set[str], set[str]]:
    """Defined and undefined component symbols, read raw (fast on 200k-symbol tables)."""
    raw = _section_bytes(fh, elf, table)
    names = _section_bytes(fh, elf, strtab)
    defined: set[str] = set()
    undefined: set[str] = set()
    if not raw or not any(w in names for w in _WANTED):
        return defined, undefined
    for st_name, _info, _other, shndx, _value, _size in _SYM.iter_unpack(
        raw[: len(raw) // 24 * 24]
    ):
        end = names.find(b"\0", st_name)
        name = names[st_name:end]
        if name in _WANTED:
            (defined if shndx != 0 else undefined).add(name.decode())
    return defined, undefined


def _arch_flags(rodata: bytes) -> str | None:
    """The ``CUDA_ARCH_FLAGS`` string torch compiles in (what ``get_arch_list()`` returns)."""
    found = _ARCH_FLAGS.search(rodata)
    return found.group(1).decode() if found else None


def _gpu_code(fh: BinaryIO, elf: ELFFile) -> tuple[tuple[FatbinEntry, ...], int]:
    section = elf.get_section_by_name(".nv_fatbin")
    rel = elf.get_section_by_name("__nv_relfatbin")
    rel_bytes = int(rel["sh_size"]) if rel is not None else 0
    if section is None:
        return (), rel_bytes
    try:
        return tuple(read_fatbin(fh, section["sh_offset"], section["sh_size"])), rel_bytes
    except FatbinFormatError as exc:
        raise InspectError(f"unreadable .nv_fatbin section: {exc}") from exc


def _union(pairs: Iterable[tuple[set[str], set[str]]]) -> tuple[frozenset[str], frozenset[str]]:
    defined: set[str] = set()
    undefined: set[str] = set()
    for d, u in pairs:
        defined |= d
        undefined |= u
    return frozenset(defined), frozenset(undefined - defined)


def read_elf(path: Path, *, arch_flags: bool = False) -> ElfFacts:
    """Read every fact from the shared object at ``path`` (it is never loaded or run);
    ``arch_flags``: also look for the compiled-in arch list (torch's Python extension)."""
    try:
        with path.open("rb") as fh:
            elf = ELFFile(fh)
            needed, rpath, runpath = _dynamic(elf)
            dynstr = _section_bytes(fh, elf, ".dynstr")
            defined, undefined = _union(
                [_symbols(fh, elf, ".dynsym", ".dynstr"), _symbols(fh, elf, ".symtab", ".strtab")]
            )
            fatbin, rel_bytes = _gpu_code(fh, elf)
            rodata = _section_bytes(fh, elf, ".rodata")
            return ElfFacts(
                needed=tuple(needed),
                rpath=tuple(rpath),
                runpath=tuple(runpath),
                version_needs=tuple(_version_needs(elf)),
                compilers=tuple(_compilers(fh, elf)),
                cxx11_symbols=dynstr.count(b"__cxx11"),
                defined=defined,
                undefined=undefined,
                arch_flags=_arch_flags(rodata) if arch_flags else None,
                markers=frozenset(
                    c for c, marks in COMPONENT_MARKERS.items() if all(m in rodata for m in marks)
                ),
                fatbin=fatbin,
                relocatable_fatbin_bytes=rel_bytes,
            )
    except (ELFError, struct.error) as exc:
        raise InspectError(f"{path.name} is not a readable ELF shared object: {exc}") from exc
