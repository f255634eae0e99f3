"""Linkage and GPU-code detection on libraries built here by CUDA 13.0's nvcc (NVIDIA's PyPI
wheels, provisioned once into the test cache; ≈ 10 s)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from torchsmith.inspect.assemble import LibFile, library
from torchsmith.inspect.deps import WheelResolver
from torchsmith.inspect.elf import read_elf
from torchsmith.inspect.linkage import component_link

SOURCE = Path(__file__).resolve().parents[1] / "fixtures" / "inspect" / "k.cu"


def _build(nvcc: Path, tmp_path: Path, name: str, *flags: str) -> Path:
    out = tmp_path / name
    argv = [nvcc, "-shared", "-Xcompiler", "-fPIC", *flags, str(SOURCE), "-o", str(out)]
    subprocess.run(argv, check=True, capture_output=True)
    subprocess.run(["strip", "--strip-unneeded", str(out)], check=True)
    return out


def _mode(path: Path) -> str:
    facts = read_elf(path)
    lib = library(
        LibFile(path=f"torch/lib/{path.name}", size=1, origin="/", facts=facts),
        WheelResolver(frozenset()),
    )
    return component_link("cudart", [lib]).mode


@pytest.mark.slow
@pytest.mark.network
def test_static_and_dynamic_cudart(tmp_path: Path, nvcc_13: Path) -> None:
    arch = ["-gencode", "arch=compute_80,code=sm_80"]
    static = _build(nvcc_13, tmp_path, "libk_static.so", "-cudart", "static", *arch)
    dynamic = _build(nvcc_13, tmp_path, "libk_dyn.so", "-cudart", "shared", *arch)
    assert _mode(static) == "static"  # stripped: found by cudart's private string
    assert _mode(dynamic) == "dynamic"


@pytest.mark.slow
@pytest.mark.network
def test_ptx_only_build(tmp_path: Path, nvcc_13: Path) -> None:
    lib = _build(nvcc_13, tmp_path, "libk_ptx.so", "-gencode", "arch=compute_90,code=compute_90")
    entries = read_elf(lib).fatbin
    assert {e.arch for e in entries} == {"compute_90"}
    assert all(e.kind == "ptx" for e in entries)
