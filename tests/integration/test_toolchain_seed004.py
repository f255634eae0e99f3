"""CI, real — the seed-004 situation: torch 1.13.1 from Debian's source (bookworm), CUDA 11.8
from the ``apt`` provider (Debian bookworm non-free nvidia-cuda-toolkit, fetched without root),
gcc-11, GPU targets 8.6;9.0. torch 1.13 did not support CUDA 11.8 (official: 11.6, 11.7): the
plan applies the knowledge-base fixes, CMake configures with USE_CUDA=1 against the provisioned
toolkit, and ``--target`` builds c10_cuda and one real ATen CUDA kernel object (FillKernel.cu);
its fat binary holds exactly sm_86 and sm_90 SASS and no PTX (the plan asked for no +PTX).

The plan picks provider ``apt`` (no CUDA 11.8 on the machine) and the pipeline's ``toolchain``
step provisions it into ``<cache-root>/toolchains``; the manifest records the toolkit.

Cost on the 2-core dev machine: toolkit ~2.5 min the first time (1.4 GB download, 35 s of it),
configure 36 s, c10 + c10_cuda + codegen + FillKernel.cu for two archs ~10 min cold.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import test_cache as cache_dir
from tests.resources import require_root, require_tool
from torchsmith.cli import main
from torchsmith.host.cuda import DEBIAN_ROOT
from torchsmith.inspect.elf import read_elf
from torchsmith.toolchains.cuda import ToolkitRecord

pytestmark = [pytest.mark.slow, pytest.mark.network]
KERNEL_OBJECT = "caffe2/CMakeFiles/torch_cuda_cu.dir/__/aten/src/ATen/native/cuda/FillKernel.cu.o"
CUDA118_FIXES = {
    "cpp-extension-cuda118-compiler-bounds",
    "cpp-extension-sm89-sm90",
    "split-cuda-library",
}


INSTALLED_BEFORE: list[bool] = []


@pytest.fixture(scope="module")
def manifest(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    require_tool("apt-get", "a Debian host (the Debian build dependencies are installed)")
    require_root("--install-deps installs the Debian build dependencies")
    require_tool("g++-11", "apt-get install g++-11 (scripts/setup-system-deps)")
    dist = tmp_path_factory.mktemp("dist")
    # A machine where Debian's toolkit is already installed (an earlier run's apt route as root
    # installs it) gets the system provider over it; a fresh one, the apt provider.
    INSTALLED_BEFORE.append((DEBIAN_ROOT / "bin" / "nvcc").exists())
    args = [
        "build",
        "--source",
        "debian",
        "--torch",
        "1.13.1",
        "--cuda",
        "11.8",
        "--compiler",
        "gcc-11",
        "--gpu",
        "8.6",
        "--gpu",
        "9.0",
        "--install-deps",
        "--target",
        "c10_cuda",
        f"--target={KERNEL_OBJECT}",
        "--cache-root",
        str(cache_dir()),  # toolkit cache shared with test_toolchain_apt_cuda118 (one download)
        "--output-dir",
        str(dist),
    ]
    assert main(args) == 0
    (found,) = dist.glob("*.manifest.json")
    data: dict[str, Any] = json.loads(found.read_text())
    return data


def test_plan_applies_the_cuda118_fixes_with_the_apt_toolkit(manifest: dict[str, Any]) -> None:
    plan = manifest["plan"]
    assert {f["id"] for f in plan["fixes"]} >= CUDA118_FIXES
    provider = "system" if INSTALLED_BEFORE[0] else "apt"
    assert plan["toolkit"]["value"] == provider
    toolkit = manifest["toolkit"]
    assert toolkit["provider"] == provider and toolkit["cuda"] == "11.8"
    assert toolkit["version"].startswith("11.8.")
    if provider == "apt":
        assert any(p["name"] == "nvidia-cuda-toolkit" for p in toolkit["packages"])
    assert plan["compiler"]["value"] == "gcc-11"
    assert plan["arch_list"] == "8.6;9.0"
    tree = Path(manifest["workspace"]) / "src"
    ext = (tree / "torch" / "utils" / "cpp_extension.py").read_text()
    assert "'11.8'" in ext or '"11.8"' in ext  # CUDA_GCC_VERSIONS got 11.8


def test_cmake_configured_cuda_from_the_provisioned_root(manifest: dict[str, Any]) -> None:
    toolkit = ToolkitRecord.model_validate(manifest["toolkit"])
    cache = (Path(manifest["workspace"]) / "src" / "build" / "CMakeCache.txt").read_text()
    assert f"CUDA_TOOLKIT_ROOT_DIR:PATH={toolkit.root}" in cache
    assert f"CUDA_NVCC_EXECUTABLE:FILEPATH={toolkit.nvcc}" in cache
    assert "CUDA_HOST_COMPILER:FILEPATH=/usr/bin/g++-11" in cache


def test_fat_binaries_hold_exactly_sm86_and_sm90(manifest: dict[str, Any]) -> None:
    build = Path(manifest["workspace"]) / "src" / "build"
    assert (build / "lib" / "libc10_cuda.so").is_file()
    assert "libcudart.so.11.0" in read_elf(build / "lib" / "libc10_cuda.so").needed
    entries = read_elf(build / KERNEL_OBJECT).fatbin
    assert {e.arch for e in entries if e.kind == "sass"} == {"sm_86", "sm_90"}
    assert [e.arch for e in entries if e.kind == "ptx"] == []
