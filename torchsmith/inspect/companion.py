"""Inspect a companion wheel (torchvision, torchaudio, torchtext) without installing it: the
torch it requires, and for each extension module the torch libraries it links, the C++ ABI its
undefined torch symbols are mangled with, and its GPU code (SASS/PTX) — what must agree with the
torch it will load (issue 11)."""

from __future__ import annotations

import re
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from pydantic import BaseModel, ConfigDict, Field

from torchsmith.errors import InspectError
from torchsmith.inspect.abi import describe, marks_of_names, symbols_verdict
from torchsmith.inspect.elf import read_elf
from torchsmith.inspect.gpucode import arch_sort_key, summarise
from torchsmith.inspect.meta import torch_requirements
from torchsmith.inspect.model import GpuCode
from torchsmith.inspect.wheel import _open, _text, shared_objects
from torchsmith.inspect.wheel_checks import check_members, check_platform

COMPANIONS = ("torchvision", "torchaudio", "torchtext")
TORCH_LIBS = re.compile(
    r"^lib(torch(_cpu|_cuda(_cpp|_cu|_linalg)?|_python|_global_deps|_hip)?|c10(_cuda|_hip)?|shm)"
    r"\.so$"
)
"""Sonames of torch's own libraries (torch/lib/) — not a companion's own libtorchaudio.so."""


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ExtensionModule(_Frozen):
    """One shared object of the companion wheel."""

    path: str
    size: int
    torch_libs: list[str] = Field(description="torch's libraries among its NEEDED entries")
    needed: list[str]
    cxx11_abi: bool | None = Field(description="None: no std::string in its torch symbols")
    abi_evidence: str
    gpu: GpuCode | None


class CompanionInspection(_Frozen):
    """What a companion wheel holds."""

    kind: Literal["companion"] = "companion"
    location: str
    name: str
    version: str
    requires_torch: list[str]
    modules: list[ExtensionModule]
    cxx11_abi: bool | None
    sass: list[str]
    ptx: list[str]


def is_companion(path: Path) -> bool:
    """The wheel's file name names a companion distribution."""
    try:
        name = parse_wheel_filename(path.name)[0]
    except InvalidWheelFilename:
        return False
    return str(name) in COMPANIONS


def abi_of(undefined: frozenset[str]) -> tuple[bool | None, str]:
    """The C++ ABI the module's torch symbols use (see :mod:`torchsmith.inspect.abi`)."""
    marks = marks_of_names(sorted(undefined))
    return symbols_verdict(marks), describe(marks, "undefined torch symbols")


def undefined_symbols(path: Path) -> frozenset[str]:
    """Every undefined dynamic symbol of the shared object at ``path`` (a companion's modules
    are small: read whole)."""
    try:
        with path.open("rb") as fh:
            table = ELFFile(fh).get_section_by_name(".dynsym")
            if not isinstance(table, SymbolTableSection):
                return frozenset()
            return frozenset(
                s.name for s in table.iter_symbols() if s["st_shndx"] == "SHN_UNDEF" and s.name
            )
    except ELFError as exc:
        raise InspectError(f"{path.name}: not a readable ELF file ({exc})") from exc


def module(member: str, size: int, path: Path) -> ExtensionModule:
    facts = read_elf(path)
    abi, evidence = abi_of(undefined_symbols(path))
    return ExtensionModule(
        path=member,
        size=size,
        torch_libs=[n for n in facts.needed if TORCH_LIBS.match(n)],
        needed=list(facts.needed),
        cxx11_abi=abi,
        abi_evidence=evidence,
        gpu=summarise(facts.fatbin, facts.relocatable_fatbin_bytes),
    )


def _modules(zf: zipfile.ZipFile, tmp: Path) -> Iterator[ExtensionModule]:
    for info, target in shared_objects(zf, tmp):
        yield module(info.filename, info.file_size, target)


def _union(modules: list[ExtensionModule], kind: Literal["sass", "ptx"]) -> list[str]:
    found = {a for m in modules if m.gpu for a in getattr(m.gpu, kind)}
    return sorted(found, key=arch_sort_key)


def _abi(modules: list[ExtensionModule]) -> bool | None:
    seen = {m.cxx11_abi for m in modules if m.cxx11_abi is not None}
    if len(seen) > 1:
        raise InspectError(
            "the wheel's extension modules were compiled with different C++ ABIs",
            "rebuild the companion: every module must use its torch's _GLIBCXX_USE_CXX11_ABI",
        )
    return seen.pop() if seen else None


def requires_torch(metadata_text: str) -> list[str]:
    return [str(r) for r in torch_requirements(metadata_text)]


def inspect_companion_wheel(path: Path) -> CompanionInspection:
    """Read a companion wheel: its torch requirement and its extension modules."""
    name, version, _build, _tags = parse_wheel_filename(path.name)
    with _open(path) as zf, tempfile.TemporaryDirectory(prefix="torchsmith-inspect-") as tmp:
        metadata = _text(zf, ".dist-info/METADATA")
        check_platform(path)
        check_members(zf, path)
        modules = list(_modules(zf, Path(tmp)))
    return CompanionInspection(
        location=str(path),
        name=str(name),
        version=str(version),
        requires_torch=requires_torch(metadata),
        modules=modules,
        cxx11_abi=_abi(modules),
        sass=_union(modules, "sass"),
        ptx=_union(modules, "ptx"),
    )
