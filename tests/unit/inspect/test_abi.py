"""The C++11 ABI read from torch's own exported names and TorchConfig.cmake, on names recorded
from the official 2.6.0 (old ABI) and 2.14.1 (new ABI) wheels (round-3 trial N09, V08, B17)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from torchsmith.inspect import inspect_wheel
from torchsmith.inspect.abi import (
    AbiMarks,
    cmake_abi,
    decide,
    marks_of_names,
    marks_of_strtab,
    symbols_verdict,
)
from torchsmith.inspect.elf import read_elf

ABI = Path(__file__).resolve().parents[2] / "fixtures" / "inspect" / "abi"
VERSION_PY = "__version__ = '{v}'\ncuda = '12.4'\ngit_version = 'abc'\ndebug = False\n"
TRUTH = {"torch-2.6.0-cu124": False, "torch-2.14.1-cu130": True}


def _cmake(tag: str) -> str:
    return "\n".join(json.loads((ABI / f"{tag}.json").read_text())["torch_config_abi_lines"])


@pytest.mark.parametrize("tag", sorted(TRUTH))
@pytest.mark.parametrize("lib", ["libc10.so", "libtorch_cpu.so"])
def test_each_real_library_alone_gives_its_abi(tag: str, lib: str) -> None:
    facts = read_elf(ABI / f"{tag}-{lib}")
    assert symbols_verdict(facts.abi) is TRUTH[tag]
    assert (facts.abi.old == 0) is TRUTH[tag] and (facts.abi.new == 0) is not TRUTH[tag]


def test_libstdcxx_own_cxx11_names_do_not_count() -> None:
    # what fooled round 3: libtorch_cpu.so of 2.6.0 exports libstdc++'s std::__cxx11 names
    strtab = (ABI / "torch-2.6.0-cu124-libtorch_cpu.so").read_bytes()
    assert strtab.count(b"__cxx11") > 0
    assert read_elf(ABI / "torch-2.6.0-cu124-libtorch_cpu.so").abi.new == 0
    assert marks_of_names(["_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE4swapERS4_"]) == (
        AbiMarks()
    )


def test_string_table_scan_finds_names_at_the_start_only() -> None:
    table = b"\0_ZN3c104WarnC1ERKSs\0x_ZN3c10ERKSs\0_ZN2at3fooERKNSt7__cxx1112basic_stringE\0"
    marks = marks_of_strtab(table)
    assert (marks.new, marks.old) == (1, 1)


def test_a_name_at_offset_zero_counts_and_neighbours_are_not_merged() -> None:
    """A table whose first byte is not the ELF's leading NUL still has a first name; two torch
    names in a row are two names."""
    marks = marks_of_strtab(b"_ZN3c103fooERKSs\0_ZN3c103barERKSs\0_ZN5torch1xERKSs")
    assert (marks.new, marks.old) == (0, 3)


def test_the_cmake_flag_of_each_release() -> None:
    assert cmake_abi(_cmake("torch-2.6.0-cu124")) is False
    assert cmake_abi(_cmake("torch-2.14.1-cu130")) is None  # no line: the symbols decide
    assert cmake_abi("-D_GLIBCXX_USE_CXX11_ABI=0 -D_GLIBCXX_USE_CXX11_ABI=1") is None


def test_decide_cross_checks_and_names_a_disagreement() -> None:
    old = AbiMarks(old=30, old_example="_ZN3c1011LogAPIUsageERKSs")
    assert decide(old, "libc10.so", False)[0] is False
    assert "agrees" in decide(old, "libc10.so", False)[1]
    value, why = decide(old, "libc10.so", True)
    assert value is None and "disagree" in why
    assert decide(AbiMarks(), "libc10.so", True)[0] is True  # cmake alone
    assert decide(AbiMarks(new=5, old=5), "x", None)[0] is None  # mixed


def _wheel(tmp_path: Path, tag: str) -> Path:
    version = tag.split("-")[1]
    path = tmp_path / f"torch-{version}-cp311-cp311-manylinux1_x86_64.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("torch/version.py", VERSION_PY.format(v=version))
        for lib in ("libc10.so", "libtorch_cpu.so"):
            zf.write(ABI / f"{tag}-{lib}", f"torch/lib/{lib}")
        zf.writestr("torch/share/cmake/Torch/TorchConfig.cmake", _cmake(tag))
        wheel = "Wheel-Version: 1.0\nTag: cp311-cp311-linux_x86_64\n"
        zf.writestr(f"torch-{version}.dist-info/WHEEL", wheel)
        zf.writestr(f"torch-{version}.dist-info/METADATA", f"Name: torch\nVersion: {version}\n")
    return path


@pytest.mark.parametrize("tag", sorted(TRUTH))
def test_inspect_of_the_recorded_wheels(tmp_path: Path, tag: str) -> None:
    insp = inspect_wheel(_wheel(tmp_path, tag))
    assert insp.cxx11_abi is TRUTH[tag], insp.cxx11_abi_evidence
    assert "libc10.so + libtorch_cpu.so" in insp.cxx11_abi_evidence
    if tag == "torch-2.6.0-cu124":
        assert "USE_CXX11_ABI=0 (agrees)" in insp.cxx11_abi_evidence
