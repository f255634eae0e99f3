"""CI, real: CUDA 11.8 from Debian bookworm's non-free nvidia-cuda-toolkit, fetched without root
(private apt lists, apt-get download, dpkg -x) into torchsmith's cache and laid out as a
standard toolkit root; its nvcc with the gcc-11 the selector picks builds a .cu for sm_86 and
sm_90, and the result holds exactly that SASS.

Cost (Debian 12 dev machine): 22 packages, 1.4 GB downloaded in ~35 s, ~2.5 min in all the first
time (dpkg -x of 4.8 GB), nothing the second time; the compile takes ~20 s.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.integration.conftest import test_cache as cache_dir
from tests.integration.planned import compiler_env, planned
from torchsmith.host.compilers import probe_compilers
from torchsmith.host.model import HostFacts, Tool
from torchsmith.inspect.elf import read_elf
from torchsmith.proc import HOST
from torchsmith.toolchains.cuda import ProvideContext, ToolkitRecord, layout
from torchsmith.toolchains.cuda.apt import AptProvider
from torchsmith.toolchains.cuda.system import debian_system_root

pytestmark = [pytest.mark.slow, pytest.mark.network]
KERNEL = """
#include <cuda_runtime.h>
#include <thrust/device_vector.h>
__global__ void add_one(float* x, int n) { int i = threadIdx.x; if (i < n) x[i] += 1.0f; }
int main() { float* d; cudaMalloc(&d, 4); add_one<<<1, 1>>>(d, 1); return 0; }
"""
TOOLS = {n: Tool(name=n, path=f"/usr/bin/{n}") for n in ("apt-get", "dpkg")}


@pytest.fixture(scope="module")
def toolkit() -> ToolkitRecord:
    root = cache_dir() / "toolchains"
    log = root / "apt-11.8.log"
    ctx = ProvideContext(runner=HOST, cache_root=root, env=dict(os.environ), log_path=log)
    return AptProvider().provide("11.8", HostFacts(tools=TOOLS), ctx)


def test_debian_toolkit_laid_out_as_a_standard_root(toolkit: ToolkitRecord) -> None:
    root = Path(toolkit.root)
    assert toolkit.version == "11.8.89"
    for part in (
        "bin/nvcc",
        "bin/nvcc.profile",
        "bin/ptxas",
        "include/cuda_runtime.h",
        "include/thrust/version.h",
        "nvvm/libdevice",
        "nvvm/bin/cicc",
        "lib64/libcudart.so",
        "lib64/libcublas.so",
        "lib64/stubs/libcuda.so",
    ):
        assert (root / part).exists(), part
    debs = {p.name: p.version for p in toolkit.packages}
    assert debs["nvidia-cuda-toolkit"] == "11.8.89~11.8.0-5~deb12u1"
    assert all(len(p.sha256) == 64 for p in toolkit.packages)
    again = AptProvider().provide(
        "11.8",
        HostFacts(tools=TOOLS),
        ProvideContext(runner=HOST, cache_root=cache_dir() / "toolchains", env={}),
    )
    assert again == toolkit  # env={}: no PATH, so any apt-get/dpkg call would have failed


def test_nvcc_118_with_gcc11_builds_sm86_and_sm90(toolkit: ToolkitRecord, tmp_path: Path) -> None:
    env = dict(os.environ)
    compilers, _ = probe_compilers(env, runner=HOST)
    host = HostFacts(compilers=compilers, tools=TOOLS)
    plan, compiler = planned(host, torch="1.13.1", accelerator="11.8", gpus=("8.6", "9.0"))
    assert plan.compiler.value == "gcc-11" and plan.toolkit.value == "apt"
    src = tmp_path / "k.cu"
    src.write_text(KERNEL)
    gencode = [f"-gencode=arch=compute_{a},code=sm_{a}" for a in ("86", "90")]
    subprocess.run(
        [
            toolkit.nvcc,
            "-ccbin",
            compiler_env(compiler)["CUDAHOSTCXX"],
            *gencode,
            src,
            "-o",
            tmp_path / "k",
        ],
        env=env,
        check=True,
    )
    entries = read_elf(tmp_path / "k").fatbin
    assert {e.arch for e in entries if e.kind == "sass"} == {"sm_86", "sm_90"}
    assert [e.arch for e in entries if e.kind == "ptx"] == []


def test_debians_toolkit_in_place_becomes_a_standard_root(
    toolkit: ToolkitRecord, tmp_path: Path
) -> None:
    """The system provider over Debian's nvidia-cuda-toolkit where it lies (installed under /
    by torchsmith's own apt route as root, or unpacked): a standard root in the cache, so the
    next build does not refuse it for lacking include/cuda_runtime.h and nvvm/libdevice."""
    entry = Path(toolkit.root).parent
    prefix = entry / "debroot" if (entry / "debroot").is_dir() else Path("/")
    root = debian_system_root("11.8", tmp_path, prefix)
    assert layout.missing_parts(root) == []
    done = subprocess.run(
        [root / "bin" / "nvcc", "--version"], capture_output=True, text=True, check=True
    )
    assert "release 11.8" in done.stdout
    assert debian_system_root("11.8", tmp_path, prefix) == root  # made once
