"""CI, real: a CUDA 13.0 toolkit provisioned from NVIDIA's PyPI wheels into torchsmith's cache
compiles a torch.utils.cpp_extension CUDA extension against the torch 2.14.1 CUDA wheel (pip
download, once, into the test cache), for sm_90; the built library's fat binary holds exactly
sm_90 SASS. A second use of the provider downloads nothing.

Cost (Debian 12 dev machine, 2 shared cores): toolkit 100 MB of wheels, ~20 s the first time,
0.0003 s from the cache; the throwaway torch venv (2.7 GB of wheels, from local disk here) ~5.5
min once, cached under the test cache; the extension build ~1-2 min.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integration.conftest import test_cache as cache_dir
from tests.integration.planned import compiler_env, planned
from tests.resources import require_tool
from torchsmith.host.compilers import probe_compilers
from torchsmith.host.model import HostFacts
from torchsmith.inspect.elf import read_elf
from torchsmith.proc import HOST
from torchsmith.toolchains.cuda import ProvideContext, ToolkitRecord
from torchsmith.toolchains.cuda.cache import INFO_FILE, entry_dir
from torchsmith.toolchains.cuda.pypi import PypiProvider

EXTENSION = Path(__file__).resolve().parents[1] / "fixtures" / "toolchains" / "add_one"

pytestmark = [pytest.mark.slow, pytest.mark.network]


def _cache_root() -> Path:
    return cache_dir() / "toolchains"


@pytest.fixture(scope="module")
def toolkit() -> ToolkitRecord:
    ctx = ProvideContext(
        runner=HOST,
        cache_root=_cache_root(),
        env=dict(os.environ),
        log_path=_cache_root() / "pypi-13.0.log",
    )
    start = time.monotonic()
    record = PypiProvider(sys.executable).provide("13.0", HostFacts(), ctx)
    print(f"pypi toolkit 13.0: {time.monotonic() - start:.1f} s")
    return record


@pytest.fixture(scope="module")
def torch_python(cuda_torch_wheel: Path) -> Path:
    """A throwaway venv with the torch 2.14.1 CUDA wheel (never the shared .venv)."""
    python311 = require_tool("python3.11", "Debian 12's python3 is 3.11: apt-get install python3")
    venv = _cache_root() / "torch-2.14.1-venv"
    python = venv / "bin" / "python"
    if not (venv / "torch-installed").is_file():
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([python311, "-m", "venv", venv], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", cuda_torch_wheel], check=True)
        (venv / "torch-installed").write_text(cuda_torch_wheel.name)
    return python


def test_toolkit_root_is_complete_and_recorded(toolkit: ToolkitRecord) -> None:
    root = Path(toolkit.root)
    assert toolkit.provider == "pypi"
    assert toolkit.version.startswith("13.0.")
    for part in ("bin/nvcc", "include/cuda_runtime.h", "nvvm/libdevice", "lib64/libcudart.so"):
        assert (root / part).exists(), part
    names = {p.name for p in toolkit.packages}
    assert {
        "nvidia-cuda-nvcc",
        "nvidia-nvvm",
        "nvidia-cuda-crt",
        "nvidia-cuda-runtime",
        "nvidia-cuda-cccl",
        "cuda-toolkit",
    } <= names
    assert all(len(p.sha256) == 64 for p in toolkit.packages)
    size = sum(
        f.stat().st_size
        for f in (entry_dir(_cache_root(), "pypi", "13.0") / "wheels").glob("*.whl")
    )
    print(f"pypi toolkit 13.0 download: {size / 1e6:.0f} MB")
    assert size < 200e6


def test_second_use_downloads_nothing(toolkit: ToolkitRecord) -> None:
    info = entry_dir(_cache_root(), "pypi", "13.0") / INFO_FILE
    before = info.stat().st_mtime_ns
    # A python that does not exist: any pip call would fail.
    ctx = ProvideContext(runner=HOST, cache_root=_cache_root(), env={})
    again = PypiProvider("/nonexistent/python").provide("13.0", HostFacts(), ctx)
    assert again == toolkit
    assert info.stat().st_mtime_ns == before


def test_extension_for_sm90_built_with_pypi_nvcc(
    toolkit: ToolkitRecord, torch_python: Path, tmp_path: Path
) -> None:
    env = dict(os.environ)
    compilers, _warnings = probe_compilers(env, runner=HOST)
    plan, compiler = planned(
        HostFacts(compilers=compilers), torch="2.14.1", accelerator="13.0", gpus=("9.0",)
    )
    assert plan.toolkit.value == "pypi"
    src = tmp_path / "add_one"
    shutil.copytree(EXTENSION, src)
    env.update(toolkit.env())
    env.update(compiler_env(compiler))
    env.update({"TORCH_CUDA_ARCH_LIST": "9.0", "MAX_JOBS": "2"})
    start = time.monotonic()
    subprocess.run(
        [torch_python, "setup.py", "-q", "build_ext", "--inplace"], cwd=src, env=env, check=True
    )
    print(f"extension build: {time.monotonic() - start:.1f} s with {compiler.label}")
    built = next(src.glob("ts_add_one*.so"))
    entries = read_elf(built).fatbin
    assert {e.arch for e in entries if e.kind == "sass"} == {"sm_90"}
    assert [e for e in entries if e.kind == "ptx"] == []
    # It loads against the wheel's libraries (no GPU here, so it is not run: see the gpu test).
    subprocess.run(
        [torch_python, "-c", "import torch, ts_add_one; print(ts_add_one.add_one)"],
        cwd=src,
        env=env,
        check=True,
    )
