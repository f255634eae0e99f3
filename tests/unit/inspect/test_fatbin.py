"""The fat binary and ELF readers on a real library built with nvcc 13.0 (fixture README)."""

from __future__ import annotations

import gzip
import io
import struct
from pathlib import Path

import pytest

from torchsmith.inspect.crosscheck import compare_listing, parse_listing
from torchsmith.inspect.elf import read_elf
from torchsmith.inspect.fatbin import FatbinFormatError, read_fatbin
from torchsmith.inspect.gpucode import arch_sort_key, summarise


def test_real_library_targets(fixtures: Path) -> None:
    facts = read_elf(fixtures / "inspect" / "libk_dyn.so")
    gpu = summarise(facts.fatbin)
    assert gpu is not None
    assert gpu.sass == ["sm_80", "sm_90"]
    assert gpu.ptx == ["compute_90"]
    assert gpu.containers == 2
    ptx = next(a for a in gpu.archs if a.kind == "ptx")
    assert ptx.code_versions == ["9.0"]  # PTX ISA 9.0 of CUDA 13.0
    assert ptx.uncompressed_bytes > ptx.stored_bytes  # PTX is stored compressed


def test_real_library_linkage_facts(fixtures: Path) -> None:
    facts = read_elf(fixtures / "inspect" / "libk_dyn.so")
    assert "libcudart.so.13" in facts.needed
    assert "__cudaRegisterFatBinary" in facts.undefined
    assert not facts.defined
    assert facts.markers == frozenset()


def test_reader_agrees_with_cuobjdump(fixtures: Path) -> None:
    facts = read_elf(fixtures / "inspect" / "libk_dyn.so")
    listing = parse_listing((fixtures / "inspect" / "cuobjdump-libk_dyn.txt").read_text())
    assert listing == {"sm_80": 2, "sm_90": 2, "compute_90": 1}
    assert compare_listing("libk_dyn.so", summarise(facts.fatbin), listing) == []


def test_cross_check_reports_differences(fixtures: Path) -> None:
    facts = read_elf(fixtures / "inspect" / "libk_dyn.so")
    listing = parse_listing((fixtures / "inspect" / "cuobjdump-libk_dyn.txt").read_text())
    listing["sm_75"] = 1
    diffs = compare_listing("libk_dyn.so", summarise(facts.fatbin), listing)
    assert diffs == ["libk_dyn.so sm_75: we read 0 entries, cuobjdump lists 1"]


def test_cuobjdump_listing_of_torch_2_11(fixtures: Path) -> None:
    raw = gzip.decompress(
        (fixtures / "inspect" / "cuobjdump-libtorch_cuda-2.11.0-cu130.txt.gz").read_bytes()
    )
    counts = parse_listing(raw.decode())
    main = {a for a, n in counts.items() if n > 100}
    assert main == {"sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"}


def _container(entries: bytes) -> bytes:
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(entries)) + entries


def test_container_slices_of_the_real_section(fixtures: Path) -> None:
    """Reading from an offset inside a bigger file, with padding between containers."""
    path = fixtures / "inspect" / "libk_dyn.so"
    from elftools.elf.elffile import ELFFile

    with path.open("rb") as fh:
        section = ELFFile(fh).get_section_by_name(".nv_fatbin")
        fh.seek(section["sh_offset"])
        blob = fh.read(section["sh_size"])
    padded = b"\0" * 24 + blob + b"\0" * 16
    entries = list(read_fatbin(io.BytesIO(padded), 0, len(padded)))
    assert sorted({e.arch for e in entries}, key=arch_sort_key) == ["sm_80", "sm_90", "compute_90"]


def test_bad_entry_header_is_an_error() -> None:
    bad = _container(struct.pack("<HHIQ", 2, 0x101, 0, 0) + b"\0" * 48)
    with pytest.raises(FatbinFormatError):
        list(read_fatbin(io.BytesIO(bad), 0, len(bad)))


def test_no_container_means_no_entries() -> None:
    assert list(read_fatbin(io.BytesIO(b"\0" * 64), 0, 64)) == []


def test_arch_order() -> None:
    archs = ["sm_120", "sm_90a", "sm_100", "sm_90", "sm_75"]
    assert sorted(archs, key=arch_sort_key) == ["sm_75", "sm_90", "sm_90a", "sm_100", "sm_120"]


def test_family_and_arch_specific_targets_keep_their_suffix(fixtures: Path) -> None:
    # nvcc 13.0: sm_100f (+PTX), sm_103a (+PTX), sm_90 (fixture README)
    facts = read_elf(fixtures / "inspect" / "libk_fam.so")
    gpu = summarise(facts.fatbin)
    assert gpu is not None
    assert gpu.sass == ["sm_90", "sm_100f", "sm_103a"]
    assert gpu.ptx == ["compute_100f", "compute_103a"]


def test_family_targets_agree_with_cuobjdump(fixtures: Path) -> None:
    # cuobjdump --list-elf calls the sm_100f cubin "sm_100"; --list-ptx says "sm_100f"
    facts = read_elf(fixtures / "inspect" / "libk_fam.so")
    listing = parse_listing((fixtures / "inspect" / "cuobjdump-libk_fam.txt").read_text())
    assert listing["sm_100"] == 2 and listing["compute_100f"] == 1
    assert compare_listing("libk_fam.so", summarise(facts.fatbin), listing) == []
