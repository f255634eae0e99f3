"""Parsers of recorded real text: torch.__config__.show(), version.py, WHEEL/METADATA, tags."""

from __future__ import annotations

from pathlib import Path

from torchsmith.inspect.assemble import wheel_info
from torchsmith.inspect.config import parse_settings, parse_show
from torchsmith.inspect.meta import parse_version_py, parse_wheel_meta
from torchsmith.inspect.versions import floor, manylinux_glibc


def test_show_of_2_11_cu130(fixtures: Path) -> None:
    cfg = parse_show((fixtures / "device-h100" / "torch-config.txt").read_text())
    assert cfg.cuda_runtime == "13.0"
    assert cfg.cudnn is not None and cfg.cudnn.startswith("9.")
    assert cfg.use["USE_CUDA"] is True
    assert cfg.use["USE_CUDNN"] is True
    assert cfg.use["USE_NCCL"] is True
    assert cfg.compiler is not None and cfg.compiler.startswith("GCC")
    assert cfg.cxx_flags is not None and "-fvisibility-inlines-hidden" in cfg.cxx_flags
    assert cfg.nvcc_arch_flags is not None and "sm_90" in cfg.nvcc_arch_flags


def test_show_of_2_13_cpu(fixtures: Path) -> None:
    cfg = parse_show((fixtures / "inspect" / "show-2.13.0-cpu.txt").read_text())
    assert cfg.cuda_runtime is None
    assert cfg.use["USE_CUDA"] is False
    assert cfg.use["USE_MKLDNN"] is True
    assert cfg.cxx_standard == "202002"
    assert cfg.mkldnn == "v3.12.0"
    assert cfg.cpu_capability == "AVX2"
    assert cfg.lapack is True
    assert cfg.settings["TORCH_VERSION"] == "2.13.0"


def test_settings_values_may_hold_commas() -> None:
    text = "A=1, CXX_FLAGS= -Wl,--as-needed -O2, USE_X=ON, "
    assert parse_settings(text) == {"A": "1", "CXX_FLAGS": "-Wl,--as-needed -O2", "USE_X": "ON"}


def test_version_py_is_parsed_not_run() -> None:
    text = (
        "from typing import Optional\n__version__ = '2.14.1+cu130'\ndebug = False\n"
        "cuda: Optional[str] = '13.0'\ngit_version = '5c48869'\nimport os; os.exit(1)\n"
    )
    got = parse_version_py(text)
    assert (got.version, got.cuda, got.git_version, got.debug) == (
        "2.14.1+cu130",
        "13.0",
        "5c48869",
        False,
    )
    assert parse_version_py("this is not python(").version is None


def test_wheel_meta() -> None:
    meta = parse_wheel_meta(
        "Wheel-Version: 1.0\nGenerator: scikit-build-core 1.1.0\n"
        "Tag: cp311-cp311-manylinux_2_28_x86_64\n",
        "Name: torch\nVersion: 2.14.1\nRequires-Dist: filelock\n"
        "Requires-Dist: nvidia-nccl-cu13==2.30.7\n",
    )
    assert meta.tags == ("cp311-cp311-manylinux_2_28_x86_64",)
    assert meta.requires_dist == ("filelock", "nvidia-nccl-cu13==2.30.7")


def test_symbol_version_floor() -> None:
    needs = ["GLIBC_2.2.5", "GLIBC_2.28", "GLIBC_2.17", "GLIBCXX_3.4.22", "GLIBC_PRIVATE"]
    assert floor(needs, "GLIBC") == "2.28"
    assert floor(needs, "GLIBCXX") == "3.4.22"
    assert floor(needs, "CXXABI") is None


def test_manylinux_tags() -> None:
    assert manylinux_glibc(["cp311-cp311-manylinux_2_28_x86_64"]) == "2.28"
    assert manylinux_glibc(["cp311-cp311-manylinux2014_x86_64.manylinux_2_17_x86_64"]) == "2.17"
    assert manylinux_glibc(["cp311-cp311-linux_x86_64"]) is None


def test_every_manylinux_tag_is_a_claim() -> None:
    # pip installs a manylinux_2_17.manylinux_2_28 wheel on glibc 2.17: the oldest tag binds
    tag = "cp311-cp311-manylinux_2_17_x86_64.manylinux_2_28_x86_64"
    assert manylinux_glibc([tag]) == "2.17"
    meta = parse_wheel_meta(f"Wheel-Version: 1.0\nTag: {tag}\n", "Name: torch\n")
    info = wheel_info("torch-9.9.0-" + tag + ".whl", meta, "2.28")
    assert info.honest is False and info.glibc_allowed == "2.17"
    assert info.problems == ["needs GLIBC_2.28 but the tag promises glibc 2.17"]
    assert wheel_info("w.whl", meta, "2.17").honest is True
