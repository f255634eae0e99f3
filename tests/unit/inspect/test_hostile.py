"""Hostile ELF files and wheels (security review L4): clean InspectErrors, bounded work.
Each file is the real nvcc-built fixture library with section headers rewritten."""

from __future__ import annotations

import struct
import time
import zipfile
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from torchsmith.errors import InspectError
from torchsmith.inspect import inspect_wheel
from torchsmith.inspect import wheel as wheel_mod
from torchsmith.inspect.elf import read_elf

LIB = Path(__file__).resolve().parents[2] / "fixtures" / "inspect" / "libk_dyn.so"
_SH_OFFSET, _SH_SIZE = 24, 32  # in an Elf64_Shdr


def _headers(data: bytes) -> dict[str, int]:
    """Section name -> file offset of its Elf64_Shdr."""
    with LIB.open("rb") as fh:
        elf = ELFFile(fh)
        base, size = elf["e_shoff"], elf["e_shentsize"]
        return {s.name: base + i * size for i, s in enumerate(elf.iter_sections())}


def _patched(tmp_path: Path, **fields: tuple[int, int]) -> Path:
    """A copy of LIB with (sh_offset, sh_size) of the named sections replaced."""
    data = bytearray(LIB.read_bytes())
    where = _headers(bytes(data))
    for name, (offset, size) in fields.items():
        struct.pack_into("<QQ", data, where["." + name] + _SH_OFFSET, offset, size)
    path = tmp_path / "libhostile.so"
    path.write_bytes(bytes(data))
    return path


def _wheel(tmp_path: Path, lib: Path, version_py: str = "__version__ = '9.9.0'\n") -> Path:
    path = tmp_path / "torch-9.9.0-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("torch/version.py", version_py)
        zf.write(lib, "torch/lib/libtorch_cpu.so")
    return path


@pytest.mark.parametrize("size", [2**63, 2**40, 2**64 - 1])
def test_huge_section_size_is_clamped_not_a_crash(tmp_path: Path, size: int) -> None:
    offset = _headers(LIB.read_bytes())  # keep the real offset of .dynstr
    with LIB.open("rb") as fh:
        real = ELFFile(fh).get_section_by_name(".dynstr")["sh_offset"]
    assert offset
    facts = read_elf(_patched(tmp_path, dynstr=(real, size)))
    assert "libcudart.so.13" in facts.needed  # what could be read still is


def test_section_beyond_the_file_is_empty(tmp_path: Path) -> None:
    facts = read_elf(_patched(tmp_path, comment=(2**62, 100)))
    assert facts.compilers == ()


def test_malformed_elf_through_inspect_is_an_inspect_error(tmp_path: Path) -> None:
    data = bytearray(LIB.read_bytes())
    data[0x3C:0x3E] = struct.pack("<H", 0xFFFF)  # e_shnum: far more headers than the file holds
    lib = tmp_path / "libbad.so"
    lib.write_bytes(bytes(data))
    with pytest.raises(InspectError, match="not a readable ELF"):
        inspect_wheel(_wheel(tmp_path, lib))


def _many_symbols(tmp_path: Path, count: int, strtab_mib: int) -> Path:
    """A .dynsym of ``count`` symbols whose names run into a strtab with no NUL after them."""
    names = b"\0cudaMalloc\0" + b"A" * (strtab_mib << 20)
    syms = struct.pack("<IBBHQQ", 1, 0x12, 0, 12, 0, 0)  # cudaMalloc, defined in .text
    syms += b"".join(struct.pack("<IBBHQQ", 12 + i, 0x12, 0, 12, 0, 0) for i in range(count))
    base = LIB.stat().st_size
    pad = (-base) % 8
    path = _patched(
        tmp_path, dynsym=(base + pad, len(syms)), dynstr=(base + pad + len(syms), len(names))
    )
    with path.open("ab") as fh:
        fh.write(b"\0" * pad + syms + names)
    return path


def test_symbol_scan_is_linear_on_unterminated_names(tmp_path: Path) -> None:
    """Before: each symbol searched the rest of the 16 MiB strtab for a NUL (minutes)."""
    lib = _many_symbols(tmp_path, 4000, 16)
    start = time.perf_counter()
    facts = read_elf(lib)
    assert facts.defined == frozenset({"cudaMalloc"})
    assert time.perf_counter() - start < 5  # generous: about 0.1 s; bench/bench_elf_hostile.py


def test_oversized_version_py_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wheel_mod, "MAX_TEXT_BYTES", 64)
    wheel = _wheel(tmp_path, LIB, "__version__ = '9.9.0'\n" + "#" * 100)
    with pytest.raises(InspectError, match=r"torch/version.py declares .* larger than"):
        inspect_wheel(wheel)


def test_oversized_library_is_refused_before_extraction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(wheel_mod, "MAX_LIBRARY_BYTES", 1024)
    with pytest.raises(InspectError, match=r"libtorch_cpu.so declares .* bytes"):
        inspect_wheel(_wheel(tmp_path, LIB))


@pytest.mark.parametrize(
    ("cap", "value"), [("MAX_WHEEL_LIBRARY_BYTES", 50_000), ("MAX_LIBRARIES", 2)]
)
def test_a_wheel_of_too_many_library_bytes_is_refused_before_extraction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cap: str, value: int
) -> None:
    """N9: each library was capped (16 GiB), the whole wheel was not."""
    monkeypatch.setattr(wheel_mod, cap, value)
    wheel = _wheel(tmp_path, LIB)  # LIB: 22 912 bytes; three copies are 68 736
    with zipfile.ZipFile(wheel, "a") as zf:
        zf.write(LIB, "torch/lib/libc10.so")
        zf.write(LIB, "torch/lib/libtorch.so")
    with pytest.raises(InspectError, match=r"3 shared libraries declare \d+ bytes together"):
        inspect_wheel(wheel)


def test_a_huge_comment_section_is_read_only_up_to_64_kib(tmp_path: Path) -> None:
    """Security review f1b4bec N9: a 128 MiB .comment of NULs cost 1.2 GiB and 10 s."""
    data = LIB.read_bytes()
    tail = b"GCC: (real) 12\0" + b"\0" * (32 << 20) + b"GCC: (past the cap) 1\0"
    path = _patched(tmp_path, comment=(len(data), len(tail)))  # .comment = the tail
    path.write_bytes(path.read_bytes() + tail)
    started = time.monotonic()
    facts = read_elf(path)
    assert time.monotonic() - started < 2
    assert facts.compilers == ("GCC: (real) 12",)


def test_running_out_of_memory_is_an_inspect_error_not_exit_70(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """N9: a 2 GiB .comment under `ulimit -v` ended in 'internal error: MemoryError' (rc 70)."""
    from torchsmith.inspect import elf

    def exhausted(*_args: object) -> bytes:
        raise MemoryError

    monkeypatch.setattr(elf, "_section_bytes", exhausted)
    with pytest.raises(InspectError, match="more memory than this machine gives"):
        read_elf(LIB)


def test_rodata_is_read_in_pieces_with_matches_across_their_edges(tmp_path: Path) -> None:
    """N9: .rodata was read whole (128 MiB: 161 MiB RSS). In pieces, a marker and the arch
    list that straddle a piece's edge are still found, and the first arch list wins."""
    from torchsmith.inspect.elf import _PIECE

    data = LIB.read_bytes()
    flags = b"\0sm_80 sm_90 compute_90\0"
    tail = bytearray(3 * _PIECE)
    tail[_PIECE - 10 : _PIECE - 10 + len(flags)] = flags
    tail[2 * _PIECE - 6 : 2 * _PIECE + 6] = b"NCCL_COMM_ID"
    tail[100:112] = b"ncclTopoSort"
    tail[-40:-27] = b"\0sm_50 sm_60\0"  # a later list is not the one compiled in
    path = _patched(tmp_path, rodata=(len(data), len(tail)))
    path.write_bytes(path.read_bytes() + bytes(tail))
    facts = read_elf(path, arch_flags=True)
    assert facts.arch_flags == "sm_80 sm_90 compute_90"
    assert facts.markers == frozenset({"nccl"})
