"""Issue 11, for real, CUDA: torchaudio 2.6.0 from Debian trixie's orig built `--against`
PyPI's torch 2.6.0+cu124 (cp311) with its CUDA kernels, by `torchsmith build --cuda 12.4 --gpu
8.6 --companion-without torchaudio=rnnt,rir`: torchsmith provisions CUDA 12.4 itself (Debian
trixie's nvidia-cuda-toolkit, `dpkg -x` into its cache, no root), makes the build env from the
wheel (torch --no-deps, then its nvidia-* requirements), and CMake compiles the kernels with that
toolkit's nvcc through the compiler cache (CMAKE_CUDA_COMPILER_LAUNCHER; the CUDA torch's
Caffe2Config.cmake needs the toolkit even to configure). The RNN-T loss and the RIR simulation
are left out (`companion_without.torchaudio`, issue 23: the product's slim-build switch, and 12
of the 20 objects, 3 of the 5 .cu files): forced alignment and the IIR filter remain, 2 .cu
files of 8 objects. Checked:

- the plan puts BUILD_RNNT=0 and BUILD_RIR=0 into torchaudio's build env, each with a reason
  naming companion_without.torchaudio and torchaudio's extension.py, and the manifest records
  them; the built libtorchaudio.so exports no RNN-T and no RIR symbol (`nm -D --defined-only`:
  a full build exports 99 names containing `rnnt` and torchaudio::rir's) but still forced
  alignment's;
- the wheel requires exactly torch==2.6.0; its extension modules link torch's own libraries
  with the torch's C++ ABI (old, `_GLIBCXX_USE_CXX11_ABI=0`), and its fat binaries hold exactly
  the plan's sm_86 SASS and no PTX (read by `torchsmith inspect`, which the test also runs);
- the smoke test (WAV load + resample, the compiled extension loaded) passes in a fresh venv
  that installs the published torch wheel and its requirements.

One companion, the smaller one, without two of its parts (CI budget, issue 23: this module was
967 s with two archs and a second build of both companions, then ~600 s with torchvision's CUDA
ops too — its 49 objects, 6 .cu, took 473 s of compile alone —, then 560 s in CI with all of
torchaudio; without RNN-T and RIR 253 s and 260 s alone vs 347 s with them, back to back on
the same warm test cache, 2026-11-27). Proven elsewhere, once
(docs/testing.md): torchvision's build route (setup.py + torch.utils.cpp_extension's ninja,
repair, smoke) on CPU by test_companion_against; a cpp_extension's nvcc route by
test_toolchain_pypi_cuda13; the SASS of *several* archs, exactly the list, on a real .cu by
test_toolchain_apt_cuda118 and torch's own CMake (8.6;9.0) by test_build_in_container; a
companion rebuilt from scratch hitting the compiler cache by test_companion_against.

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
import zipfile
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
    args = ["build", "--with", "torchaudio", "--against", str(wheel)]
    args += ["--source", "debian", "--cuda", "12.4", "--gpu", "8.6"]
    args += ["--companion-without", "torchaudio=rnnt,rir"]
    return [*args, "--cache-root", str(root), "--output-dir", str(dist), *extra]


@pytest.fixture
def work(tmp_path: Path) -> Iterator[Path]:
    """tmp_path, emptied afterwards: the build env and smoke venv hold torch and its nvidia-*
    wheels (11 GB), which would stay on the CI machine's disk until the whole run ends."""
    yield tmp_path
    for child in tmp_path.iterdir():
        shutil.rmtree(child, ignore_errors=True)


def test_cuda_kernels_of_torchaudio_for_exactly_the_plans_arch(work: Path) -> None:
    tmp_path = work
    require(Path("/usr/bin/python3.11").exists(), "Python 3.11 (cp311)", "Debian 12's python3")
    require_tool("apt-get", "a Debian/Ubuntu host")
    require_tool("ccache")
    require_tool("nm", "Debian's binutils")
    wheel = downloaded_wheel("torch==2.6.0", "torch-2.6.0-cp311-*.whl")
    root, dist = tmp_path / "root", tmp_path / "dist"
    data = manifest(torchsmith(build(wheel, root, dist)), dist)
    assert data["plan"]["toolkit"]["value"] == "apt"
    [audio] = data["companions"]
    verify = audio["verify"]
    assert verify["requires_torch"] == "torch==2.6.0"
    assert verify["binaries"]["gpu"] == {"sass": ["sm_86"], "ptx": []}
    assert verify["binaries"]["cxx11_abi"] is False
    assert verify["smoke"]["torch"] == "2.6.0+cu124"
    assert verify["smoke"]["resampled"] == [1, 800]
    assert audio["env"]["TORCH_CUDA_ARCH_LIST"] == "8.6"
    cache = audio["compiler_cache"]
    assert cache["hits"] + cache["misses"] >= 8, cache  # the .cu files went through it too
    assert (audio["env"]["BUILD_RNNT"], audio["env"]["BUILD_RIR"]) == ("0", "0")
    assert "BUILD_ALIGN" not in audio["env"]
    [planned] = data["plan"]["companion_build"]["builds"]
    reasons = {v["name"]: v["reason"] for v in planned["env"] if v["value"] == "0"}
    for switch, part in (("BUILD_RNNT", "rnnt"), ("BUILD_RIR", "rir")):
        assert f"companion_without.torchaudio = {part}" in reasons[switch], reasons
        assert "pytorch/audio@v2.6.0:tools/setup_helpers/extension.py" in reasons[switch]
    [awheel] = sorted(dist.glob("torchaudio-2.6.0-*.whl"))
    shown = torchsmith(["inspect", str(awheel), "--json"])
    assert shown.returncode == 0, shown.stderr[-2000:]
    insp = json.loads(shown.stdout)
    [lib] = [m for m in insp["modules"] if m["path"] == "torchaudio/lib/libtorchaudio.so"]
    assert lib["gpu"]["sass"] == ["sm_86"] and lib["gpu"]["ptx"] == []
    assert "libtorch_cuda.so" in lib["torch_libs"] and "libcudart.so.12" in lib["needed"]
    names = exported(awheel, "torchaudio/lib/libtorchaudio.so", tmp_path / "unpacked")
    assert not [n for n in names if "rnnt" in n.lower()], "RNN-T built although left out"
    assert not [n for n in names if "10torchaudio3rir" in n]  # namespace torchaudio::rir
    assert [n for n in names if "forced_align" in n]  # the part kept is there


def exported(wheel: Path, member: str, into: Path) -> list[str]:
    """The names ``member`` of ``wheel`` defines and exports (binutils' nm, mangled)."""
    with zipfile.ZipFile(wheel) as archive:
        path = Path(archive.extract(member, into))
    argv = ["nm", "-D", "--defined-only", str(path)]
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    return [line.split()[-1] for line in done.stdout.splitlines() if line.strip()]
