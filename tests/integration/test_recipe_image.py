"""Issue 30, real: a CUDA 12.4 base made by the base-image recipe route — no NVIDIA registry, no
nvidia/cuda image — from Debian trixie's packages, with buildah (overlay, chroot isolation):
`torchsmith image --cuda 12.4 --base-recipe debian --base-image <debootstrapped trixie> --wheels
DIR` writes the Dockerfile (its ``cuda`` stage: contrib/non-free added, the toolkit's packages, the
CUDA measured inside) and builds a training image from a wheel on top of it. Checked inside that
image: nvcc says release 12.4; a small kernel compiled for one arch (8.6) holds exactly sm_86 SASS
and no PTX (cuobjdump, in the image); the wheel's module loads the image's libcudart.so.12 and reads
runtime version 12040 (no GPU needed); the context's manifest records the recipe and a CUDA 12.4
plan.

The trixie root filesystem is test_build_in_container's (debootstrapped once per test cache).
Cost (2 cores, under load, 2026-11-27): `image` 177 s, the checks ~30 s; apt downloads the
toolkit's packages inside the build (~1.5 GB: the apt toolkit provider's cache keeps only the
unpacked toolkit, not the .debs); the store peaked at 14 GB with vfs (docs/testing.md)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from tests.integration.test_build_in_container import trixie_tarball  # noqa: F401 (fixture)
from tests.resources import require_root, require_tool
from torchsmith.container.build import storage_under

pytestmark = [pytest.mark.slow, pytest.mark.network]
BASE = "localhost/torchsmith-test/trixie:latest"
KERNEL = r"""#include <cstdio>
__global__ void add_one(float* x) { x[threadIdx.x] += 1.0f; }
int main() { int v = 0; cudaRuntimeGetVersion(&v); std::printf("%d\n", v); return 0; }
"""
PROBE = """import ctypes


def version() -> int:
    found = ctypes.c_int(0)
    ctypes.CDLL("libcudart.so.12").cudaRuntimeGetVersion(ctypes.byref(found))
    return found.value
"""


def _run(*argv: str | Path, timeout: float = 2400) -> str:
    done = subprocess.run(
        [str(a) for a in argv], capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"{argv}: rc {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _flags(store: Path) -> list[str | Path]:
    return [*storage_under(store).flags()]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, trixie_tarball: Path) -> Path:  # noqa: F811
    """A private store (overlay here) holding the plain debootstrapped trixie (no CUDA, no CA
    bundle)."""
    require_root("buildah with chroot isolation")
    require_tool("buildah")
    root = tmp_path_factory.mktemp("containers")
    container = _run("buildah", *_flags(root), "from", "scratch").strip()
    _run("buildah", *_flags(root), "add", container, trixie_tarball, "/")
    _run("buildah", *_flags(root), "commit", "-q", "--rm", container, BASE)
    return root


def _probe_wheel(folder: Path) -> Path:
    folder.mkdir(parents=True)
    wheel = folder / "cudaprobe-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("cudaprobe/__init__.py", PROBE)
        info = "cudaprobe-1.0.dist-info"
        zf.writestr(f"{info}/METADATA", "Metadata-Version: 2.1\nName: cudaprobe\nVersion: 1.0\n")
        zf.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                    "Tag: py3-none-any\n")  # fmt: skip
        zf.writestr(f"{info}/RECORD", "")
    return folder


@pytest.fixture(scope="module")
def built(store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("recipe")
    argv: list[str | Path] = [sys.executable, "-m", "torchsmith", "image", "--torch", "2.6.0"]
    argv += ["--cuda", "12.4", "--python", "3.13", "--gpu", "8.6", "--output", "docker-image"]
    argv += ["--base-recipe", "debian", "--base-image", BASE, "--wheels", _probe_wheel(tmp / "w")]
    argv += ["--engine", "buildah", "--storage-root", store, "--pull", "never", "-o", tmp / "ctx"]
    start = time.monotonic()
    _run(*argv, timeout=3000)
    print(
        f"torchsmith image (recipe cuda stage + training image): {time.monotonic() - start:.0f} s"
    )
    return tmp


def _inside(store: Path, command: str, kernel: str | None = None) -> str:
    container = _run("buildah", *_flags(store), "from", "--pull-never", "localhost/torch").strip()
    try:
        if kernel is not None:
            source = Path(kernel)
            _run("buildah", *_flags(store), "copy", container, source, "/tmp/k.cu")
        run = ["buildah", *_flags(store), "run", "--isolation", "chroot", container, "--"]
        return _run(*run, "bash", "-o", "pipefail", "-c", command)
    finally:
        _run("buildah", *_flags(store), "rm", container)


def test_the_recipe_image_compiles_a_kernel_and_loads_its_cuda_runtime(
    store: Path, built: Path
) -> None:
    kernel = built / "k.cu"
    kernel.write_text(KERNEL, encoding="utf-8")
    probe = "nvcc --version | grep release; cd /tmp"
    probe += " && nvcc -c -gencode arch=compute_86,code=sm_86 -o k.o k.cu && nvcc -o k k.o && ./k"
    probe += (
        " && echo ELF && cuobjdump --list-elf k.o && echo PTX && { cuobjdump --list-ptx k.o || :; }"
    )
    probe += " && echo PY && /opt/venv/bin/python -c 'import cudaprobe; print(cudaprobe.version())'"
    start = time.monotonic()
    out = _inside(store, probe, str(kernel)).splitlines()
    print(f"nvcc + checks inside the image: {time.monotonic() - start:.0f} s")
    assert "release 12.4," in out[0]
    assert out[1] == "12040"  # cudaRuntimeGetVersion of the statically linked runtime, no GPU
    elves = out[out.index("ELF") + 1 : out.index("PTX")]
    assert len(elves) == 1 and elves[0].endswith(".sm_86.cubin"), out  # the kernel's object
    assert not [line for line in out[out.index("PTX") + 1 : out.index("PY")] if ".ptx" in line]
    assert out[out.index("PY") + 1 :] == ["12040"], out  # the wheel's module: the image's 12.4


def test_the_manifest_records_the_recipe_and_a_cuda_plan(built: Path) -> None:
    manifest = json.loads((built / "ctx" / "torchsmith" / "manifest.json").read_text())
    assert manifest["plan"]["cuda"]["value"] == "12.4" and manifest["base_image"] == BASE
    recipe = manifest["base_recipe"]
    assert recipe["kind"] == "debian" and "nvidia-cuda-toolkit" in recipe["packages"]
    assert "asked (--base-recipe debian)" in recipe["reason"]
    dockerfile = (built / "ctx" / "Dockerfile").read_text()
    assert "FROM ${BASE_IMAGE} AS cuda" in dockerfile and "FROM cuda AS train-torch" in dockerfile
    assert "developer.download.nvidia.com" not in dockerfile and "nvidia/cuda" not in dockerfile
