"""Put the pieces together: ELF facts of each library + metadata -> :class:`Inspection`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from torchsmith.inspect.abi import AbiMarks, decide
from torchsmith.inspect.elf import COMPONENT_SYMBOLS, ElfFacts
from torchsmith.inspect.gpucode import arch_sort_key, summarise
from torchsmith.inspect.linkage import linkage
from torchsmith.inspect.meta import VersionPy, WheelMeta
from torchsmith.inspect.model import (
    BuildConfig,
    Component,
    Dependency,
    Inspection,
    Library,
    Sizes,
    WheelInfo,
)
from torchsmith.inspect.versions import as_tuple, floor, manylinux_glibc, newest


class Resolver(Protocol):
    def resolve(self, soname: str, search: Sequence[str], origin: str) -> Dependency: ...


@dataclass(frozen=True)
class LibFile:
    """One shared library of the artifact: where it is and what it says."""

    path: str  # relative to site-packages
    size: int
    origin: str  # the directory $ORIGIN stands for
    facts: ElfFacts


@dataclass(frozen=True)
class Probe:
    """What importing torch told us (installed torch only)."""

    show: str | None
    arch_flags: str | None
    cxx11_abi: bool | None
    nccl: str | None


def _static(facts: ElfFacts) -> list[Component]:
    found: list[Component] = []
    for component, symbols in COMPONENT_SYMBOLS.items():
        if component in facts.markers or any(s in facts.defined for s in symbols):
            found.append(component)  # type: ignore[arg-type]
    return found


def library(item: LibFile, resolver: Resolver) -> Library:
    facts = item.facts
    search = list(facts.rpath or facts.runpath)
    if facts.rpath and facts.runpath:
        search = list(facts.runpath)  # the loader ignores RPATH when RUNPATH is present
    return Library(
        path=item.path,
        size=item.size,
        needed=[resolver.resolve(n, search, item.origin) for n in facts.needed],
        rpath=list(facts.rpath),
        runpath=list(facts.runpath),
        glibc=floor(facts.version_needs, "GLIBC"),
        glibcxx=floor(facts.version_needs, "GLIBCXX"),
        cxxabi=floor(facts.version_needs, "CXXABI"),
        compilers=list(facts.compilers),
        cxx11_symbols=facts.abi.new,
        old_abi_symbols=facts.abi.old,
        static_components=_static(facts),
        gpu=summarise(facts.fatbin, facts.relocatable_fatbin_bytes),
    )


_ABI_LIBS = ("libc10.so", "libtorch_cpu.so")


def _abi(parts: Parts) -> tuple[bool | None, str]:
    """From torch._C when torch was imported; else from libc10/libtorch_cpu's exported names,
    cross-checked with TorchConfig.cmake (see :mod:`torchsmith.inspect.abi`)."""
    own = [f for f in parts.libs if f.path.rsplit("/", 1)[-1] in _ABI_LIBS]
    marks = sum((f.facts.abi for f in own), AbiMarks())
    where = " + ".join(sorted(f.path.rsplit("/", 1)[-1] for f in own)) or "no libc10/libtorch_cpu"
    cxx11, evidence = decide(marks, where, parts.cmake_abi)
    if parts.probe is None or parts.probe.cxx11_abi is None:
        return cxx11, evidence
    said = parts.probe.cxx11_abi
    note = "agrees with" if cxx11 in (None, said) else "but the files say otherwise:"
    return said, f"torch._C._GLIBCXX_USE_CXX11_ABI ({note} {evidence})"


def _union(libs: Sequence[Library], field: Literal["sass", "ptx", "extra"]) -> list[str]:
    found = {a for lib in libs if lib.gpu for a in getattr(lib.gpu, field)}
    return sorted(found, key=arch_sort_key)


def _sizes(libs: Sequence[Library], total: int) -> Sizes:
    by_arch: Counter[str] = Counter()
    for lib in libs:
        for code in lib.gpu.archs if lib.gpu else ():
            by_arch[code.arch] += code.stored_bytes
    ordered = sorted(by_arch, key=arch_sort_key)
    return Sizes(
        total=total,
        by_library={lib.path: lib.size for lib in libs},
        by_arch={a: by_arch[a] for a in ordered},
    )


def wheel_info(filename: str, meta: WheelMeta, glibc: str | None) -> WheelInfo:
    allowed = manylinux_glibc(meta.tags)
    honest = None if allowed is None else glibc is None or as_tuple(glibc) <= as_tuple(allowed)
    problems = []
    if honest is False:
        problems.append(f"needs GLIBC_{glibc} but the tag promises glibc {allowed}")
    return WheelInfo(
        filename=filename,
        tags=list(meta.tags),
        generator=meta.generator,
        requires_dist=list(meta.requires_dist),
        glibc_allowed=allowed,
        honest=honest,
        problems=problems,
    )


@dataclass(frozen=True)
class Parts:
    source: Literal["wheel", "installed"]
    location: str
    total_size: int
    libs: Sequence[LibFile]
    version: VersionPy
    config: BuildConfig
    probe: Probe | None = None
    wheel: tuple[str, WheelMeta] | None = None
    cmake_abi: bool | None = None


def _arch_list(parts: Parts) -> list[str]:
    if parts.probe is not None and parts.probe.arch_flags is not None:
        return parts.probe.arch_flags.split()
    flags = [f.facts.arch_flags for f in parts.libs if f.facts.arch_flags]
    return flags[0].split() if flags else []


def assemble(parts: Parts, resolver: Resolver) -> Inspection:
    libs = sorted((library(f, resolver) for f in parts.libs), key=lambda lib: lib.path)
    cxx11, evidence = _abi(parts)
    links = linkage(libs)
    glibc = newest(lib.glibc for lib in libs)
    return Inspection(
        source=parts.source,
        location=parts.location,
        torch_version=parts.version.version,
        git_version=parts.version.git_version,
        cuda=parts.version.cuda,
        debug=parts.version.debug,
        arch_list=_arch_list(parts),
        sass=_union(libs, "sass"),
        ptx=_union(libs, "ptx"),
        extra_archs=_union(libs, "extra"),
        config=parts.config,
        cxx11_abi=cxx11,
        cxx11_abi_evidence=evidence,
        glibc=glibc,
        glibcxx=newest(lib.glibcxx for lib in libs),
        cxxabi=newest(lib.cxxabi for lib in libs),
        linkage=links,
        missing=sorted({d.soname for lib in libs for d in lib.needed if d.provider == "missing"}),
        libraries=libs,
        sizes=_sizes(libs, parts.total_size),
        wheel=wheel_info(parts.wheel[0], parts.wheel[1], glibc) if parts.wheel else None,
    )
