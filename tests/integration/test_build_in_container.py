"""CI, real: `torchsmith build --backend docker` on this Debian 12 host — torch 2.6.0 from Debian
trixie's source package (pytorch 2.6.0+dfsg-7, its signed .dsc checked), configured and three
of its ``c10`` objects compiled **inside a trixie container**: buildah (overlay storage, chroot
isolation, a private store) from a base made by ``debootstrap --variant=minbase trixie`` (cached
as a tarball per test cache) and imported with ``buildah from scratch`` + ``add`` + ``commit``.

Checked: `torchsmith plan --backend docker --json` shows the steps the build inside ran; the
manifest records the image and its facts (trixie, GCC 14.2, Python 3.13, glibc
2.41) and the toolchain the pipeline found inside; each object on the host (the cache root is
mounted) carries GCC 14.2's ``.comment`` — bookworm has GCC 12, so it was compiled in the
container; no working container is left; the same command again resumes (nothing recompiled).

CUDA in a container, the seed-004 situation: torch 1.13.1 from bookworm's source (torch 1.13
did not support CUDA 11.8; the plan applies the knowledge-base fixes) with CUDA 11.8 from
bookworm's ``nvidia-cuda-toolkit`` (the apt provider, run inside the container, into the shared
test cache), gcc-11 installed in the container, CMake configured against the provisioned root,
``c10_cuda`` plus one real ATen kernel (FillKernel.cu) for 8.6;9.0 through torch's own
TORCH_CUDA_ARCH_LIST: the kernel's fat binary holds exactly sm_86 and sm_90 SASS and no PTX.
(This was also built on the host by a test_toolchain_seed004 module, ~110 s more in CI, the same
pipeline on the same toolkit; the host's apt provisioning is test_toolchain_apt_cuda118's.)

Cost (Debian 12 dev machine, 2 cores, 2026-11-24): debootstrap 23-43 s once, import 5 s, first
build 1 min 52 s (container setup ~25 s: apt inside, torchsmith's venv; fetch 17 s, configure
14 s, c10 51 s), the rerun about 60 s; with three c10 objects instead of c10 (2026-11-27, load
~1): 84 s + 55 s, the test 139 s (was 103 + 62 s, 166 s, back to back); the CUDA build
1 min 39 s with the toolkit cached (configure 14 s, 106 edges in 43 s), plus ~2.5 min when the
toolkit is not yet cached.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from elftools.elf.elffile import ELFFile

from tests.integration.conftest import test_cache as cache_dir
from tests.integration.test_readme_fresh_debian import (  # noqa: F401 (fixture)
    cached_rootfs,
    rootfs_tarball,
)
from tests.resources import require_root, require_tool
from torchsmith.container.build import storage_under
from torchsmith.inspect.elf import read_elf
from torchsmith.toolchains.cuda import ToolkitRecord

pytestmark = pytest.mark.slow
SUITE = "trixie"
BASE = "localhost/torchsmith-test/trixie:latest"
BOOKWORM = "localhost/torchsmith-test/bookworm:latest"
KERNEL_OBJECT = "caffe2/CMakeFiles/torch_cuda_cu.dir/__/aten/src/ATen/native/cuda/FillKernel.cu.o"
CUDA118_FIXES = {
    "cpp-extension-cuda118-compiler-bounds",
    "cpp-extension-sm89-sm90",
    "split-cuda-library",
}


def _run(argv: list[str | Path], timeout: float = 1800) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in argv], capture_output=True, text=True, timeout=timeout, check=False
    )


def _ok(argv: list[str | Path], timeout: float = 1800) -> str:
    done = _run(argv, timeout)
    assert done.returncode == 0, f"{argv}: rc {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def trixie_tarball() -> Path:
    """A Debian 13 minbase root filesystem, made once per test cache and kept as a tarball."""
    require_root("debootstrap and buildah with chroot isolation")
    require_tool("debootstrap")
    return cached_rootfs(SUITE, "", _debootstrap)


def _debootstrap(work: Path, mirror: str) -> None:
    _ok(["debootstrap", "--variant=minbase", SUITE, work, mirror])


def _flags(store: Path) -> list[str | Path]:
    return [*storage_under(store).flags()]


def _import(flags: list[str | Path], tarball: Path, name: str) -> None:
    container = _ok(["buildah", *flags, "from", "scratch"]).strip()
    _ok(["buildah", *flags, "add", container, tarball, "/"])
    _ok(["buildah", *flags, "commit", "-q", "--rm", container, name])


@pytest.fixture(scope="module")
def store(
    tmp_path_factory: pytest.TempPathFactory,
    trixie_tarball: Path,
    rootfs_tarball: Path,  # noqa: F811
) -> Path:
    """The plain debootstrapped trixie (no CA certificates, no Python) and the bookworm root of
    test_readme_fresh_debian: the host's network trust and every build tool come from
    `torchsmith build` itself."""
    require_tool("buildah")
    root = tmp_path_factory.mktemp("containers")
    _import(_flags(root), trixie_tarball, BASE)
    _import(_flags(root), rootfs_tarball, BOOKWORM)
    return root


# Three real c10 objects (not the library: `.comment` of an object proves GCC 14 as well, and
# the configure, the container and the resume are the same; all of c10 took ~27 s more).
C10_OBJECTS = [f"c10/CMakeFiles/c10.dir/{name}.cpp.o" for name in
               ("util/Exception", "util/Logging", "core/Device")]  # fmt: skip
TRIXIE_C10 = ["--torch", "2.6.0", "--cpu", "--source", "debian"]
TRIXIE_C10 += [arg for obj in C10_OBJECTS for arg in ("--target", obj)]


def _build(
    store: Path, cache: Path, dist: Path, what: list[str] = TRIXIE_C10, base: str = BASE
) -> tuple[dict[str, Any], str]:
    argv: list[str | Path] = [sys.executable, "-m", "torchsmith", "build", *what]
    argv += ["--backend", "docker", "--engine", "buildah", "--base-image", base]
    argv += ["--storage-root", store, "--pull", "never", "--cache-root", cache]
    argv += ["--output-dir", dist]
    start = time.monotonic()
    out = _ok(argv)
    print(f"torchsmith build --backend docker ({what[-1]}): {time.monotonic() - start:.0f} s")
    manifests = sorted(dist.glob("*.manifest.json"))
    assert len(manifests) == 1, manifests
    return json.loads(manifests[0].read_text()), out


def _planned(what: list[str], base: str = BASE) -> list[str]:
    """The steps `torchsmith plan --backend docker --json` shows for the same request."""
    argv: list[str | Path] = [sys.executable, "-m", "torchsmith", "plan", *what, "--json"]
    argv += ["--backend", "docker", "--engine", "buildah", "--base-image", base]
    return [s["name"] for s in json.loads(_ok(argv))["steps"]]


def _comment(path: Path) -> str:
    with path.open("rb") as fh:
        section = ELFFile(fh).get_section_by_name(".comment")
        assert section is not None, f"{path} has no .comment section"
        return bytes(section.data()).decode(errors="replace")


def test_c10_of_debian_260_compiles_inside_a_trixie_container(store: Path, tmp_path: Path) -> None:
    cache, dist = tmp_path / "cache", tmp_path / "dist"
    manifest, out = _build(store, cache, dist)
    assert "==> build inside the container" in out
    ran = [s["name"] for s in manifest["plan"]["steps"]]  # the plan the torchsmith inside ran
    assert _planned(TRIXIE_C10) == ran  # one container plan: what `plan` shows is what runs
    record = manifest["container"]
    assert record["base_image"] == BASE and record["os_release"]["VERSION_CODENAME"] == "trixie"
    assert record["os_release"]["ID"] == "debian"  # measured in the container
    assert record["planned_for"] == {
        "os": "trixie", "gcc": "14.2.0", "python": "3.13.5", "glibc": "2.41",
    }  # fmt: skip
    assert record["engine"].startswith("buildah ")
    assert "14.2.0" in manifest["toolchain"]["cxx"]
    assert manifest["plan"]["python"]["value"] == "3.13"
    assert manifest["source"]["details"]["debian_version"] == "2.6.0+dfsg-7"
    assert [a["name"] for a in manifest["artifacts"]] == C10_OBJECTS
    for name in C10_OBJECTS:
        obj = Path(manifest["source"]["built_in"]) / "build" / name
        assert "GCC: (Debian 14.2.0" in _comment(obj)  # bookworm's own GCC is 12.2
    assert manifest["ninja"]["edges_run"] >= len(C10_OBJECTS)
    assert _ok(["buildah", *_flags(store), "containers", "--quiet"]).strip() == ""

    again, _ = _build(store, cache, dist)  # the same command: it resumes, nothing recompiled
    assert again["ninja"]["edges_run"] == 0 and again["plan_hash"] == manifest["plan_hash"]
    assert again["artifacts"] == manifest["artifacts"]


def test_cuda_118_partial_build_inside_a_bookworm_container(store: Path, tmp_path: Path) -> None:
    """Seed 004 in a container: Debian bookworm's CUDA 11.8 toolkit (the apt provider run inside,
    into the shared test cache: one download with test_toolchain_apt_cuda118), gcc-11 installed
    in the container, c10_cuda and one ATen kernel for 8.6;9.0."""
    what = ["--torch", "1.13.1", "--cuda", "11.8", "--gpu", "8.6", "--gpu", "9.0"]
    what += ["--source", "debian", "--toolkit", "apt", "--compiler", "gcc-11"]
    what += ["--build-version", "1.13.1+container"]  # its own workspace
    what += ["--target", "c10_cuda", "--target", KERNEL_OBJECT]
    manifest, _ = _build(store, cache_dir(), tmp_path / "dist", what, BOOKWORM)
    assert manifest["container"]["os_release"]["VERSION_CODENAME"] == "bookworm"
    plan = manifest["plan"]
    assert {f["id"] for f in plan["fixes"]} >= CUDA118_FIXES
    assert plan["toolkit"]["value"] == "apt" and plan["compiler"]["value"] == "gcc-11"
    assert plan["arch_list"] == "8.6;9.0"
    toolkit = manifest["toolkit"]
    assert (toolkit["provider"], toolkit["cuda"]) == ("apt", "11.8")
    assert toolkit["version"].startswith("11.8.")
    assert any(p["name"] == "nvidia-cuda-toolkit" for p in toolkit["packages"])
    assert "g++-11" in manifest["toolchain"]["cxx"]
    tree = Path(manifest["source"]["built_in"])
    ext = (tree / "torch" / "utils" / "cpp_extension.py").read_text()
    assert "'11.8'" in ext or '"11.8"' in ext  # CUDA_GCC_VERSIONS got 11.8
    build = tree / "build"
    record = ToolkitRecord.model_validate(toolkit)
    cmake_cache = (build / "CMakeCache.txt").read_text()  # configured inside, same paths
    assert f"CUDA_TOOLKIT_ROOT_DIR:PATH={record.root}" in cmake_cache
    assert f"CUDA_NVCC_EXECUTABLE:FILEPATH={record.nvcc}" in cmake_cache
    assert "CUDA_HOST_COMPILER:FILEPATH=/usr/bin/g++-11" in cmake_cache
    assert "libcudart.so.11.0" in read_elf(build / "lib" / "libc10_cuda.so").needed
    entries = read_elf(build / KERNEL_OBJECT).fatbin
    assert {e.arch for e in entries if e.kind == "sass"} == {"sm_86", "sm_90"}
    assert [e.arch for e in entries if e.kind == "ptx"] == []
