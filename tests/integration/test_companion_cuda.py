"""Issue 11, for real, CUDA: torchvision 0.21.0 and torchaudio 2.6.0 from Debian trixie's origs
built `--against` PyPI's torch 2.6.0+cu124 (cp311) with their CUDA ops, by `torchsmith build
--cuda 12.4 --gpu 8.6`: torchsmith provisions CUDA 12.4 itself (Debian trixie's
nvidia-cuda-toolkit, `dpkg -x` into its cache, no root), its nvcc compiles torchvision's CUDA
ops (ninja through `$PYTORCH_NVCC` = ccache + nvcc) and torchaudio's CUDA kernels (CMake; the
CUDA torch's Caffe2Config.cmake needs that toolkit even to configure). Checked:

- each wheel requires exactly torch==2.6.0; each extension module links torch's own libraries
  with the torch's C++ ABI (old, `_GLIBCXX_USE_CXX11_ABI=0`), and its fat binaries hold exactly
  the plan's sm_86 SASS and no PTX (read by `torchsmith inspect`, which the test also runs);
- the smoke tests (nms/roi_align/JPEG/PNG, WAV load + resample) pass in fresh venvs.

Proven once elsewhere, at a smaller size (docs/testing.md): the SASS of *several* archs, exactly
the list, on a real .cu (test_toolchain_apt_cuda118: sm_86 + sm_90), and a companion rebuilt from
scratch hitting the compiler cache (test_companion_against, step 3) — here one arch and one
build (this module was 967 s with two archs and a second build of both companions).

Ops on CUDA tensors need a GPU with CUDA 12 libraries: the GPU machine lent here has torch 2.11
for CUDA 13 and no network, and this torch with its nvidia-* wheels (~3 GB) cannot be carried
there — the GPU run is not part of this test (docs/companions.md).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import downloaded_wheel
from tests.resources import require, require_tool

pytestmark = [pytest.mark.slow, pytest.mark.network]


def torchsmith(args: list[str]) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "torchsmith", *args]
    return subprocess.run(argv, env=dict(os.environ), capture_output=True, text=True, check=False)


def manifest(done: subprocess.CompletedProcess[str], dist: Path) -> dict[str, Any]:
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [path] = sorted(dist.glob("companions-*.manifest.json"))
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def build(wheel: Path, root: Path, dist: Path, *extra: str) -> list[str]:
    args = ["build", "--with", "torchvision,torchaudio", "--against", str(wheel)]
    args += ["--source", "debian", "--cuda", "12.4", "--gpu", "8.6"]
    return [*args, "--cache-root", str(root), "--output-dir", str(dist), *extra]


@pytest.fixture
def work(tmp_path: Path) -> Iterator[Path]:
    """tmp_path, emptied afterwards: the build env and smoke venv hold torch and its nvidia-*
    wheels (11 GB), which would stay on the CI machine's disk until the whole run ends."""
    yield tmp_path
    for child in tmp_path.iterdir():
        shutil.rmtree(child, ignore_errors=True)


def test_cuda_ops_of_torchvision_and_torchaudio_for_exactly_the_plans_archs(work: Path) -> None:
    tmp_path = work
    require(Path("/usr/bin/python3.11").exists(), "Python 3.11 (cp311)", "Debian 12's python3")
    require_tool("apt-get", "a Debian/Ubuntu host")
    require_tool("ccache")
    wheel = downloaded_wheel("torch==2.6.0", "torch-2.6.0-cp311-*.whl")
    root, dist = tmp_path / "root", tmp_path / "dist"
    data = manifest(torchsmith(build(wheel, root, dist)), dist)
    assert data["plan"]["toolkit"]["value"] == "apt"
    vision, audio = data["companions"]
    for comp in (vision, audio):
        verify = comp["verify"]
        assert verify["requires_torch"] == "torch==2.6.0"
        assert verify["binaries"]["gpu"] == {"sass": ["sm_86"], "ptx": []}
        assert verify["binaries"]["cxx11_abi"] is False
        assert verify["smoke"]["torch"] == "2.6.0+cu124"
        assert comp["env"]["TORCH_CUDA_ARCH_LIST"] == "8.6"
    assert vision["verify"]["smoke"]["nms"] == [0, 2]
    assert audio["verify"]["smoke"]["resampled"] == [1, 800]
    [vwheel] = sorted(dist.glob("torchvision-0.21.0-*.whl"))
    shown = torchsmith(["inspect", str(vwheel), "--json"])
    assert shown.returncode == 0, shown.stderr[-2000:]
    insp = json.loads(shown.stdout)
    [c_so] = [m for m in insp["modules"] if m["path"] == "torchvision/_C.so"]
    assert c_so["gpu"]["sass"] == ["sm_86"] and c_so["gpu"]["ptx"] == []
    assert "libtorch_cuda.so" in c_so["torch_libs"] and "libcudart.so.12" in c_so["needed"]

