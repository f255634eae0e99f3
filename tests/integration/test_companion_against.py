"""Issue 11, for real: torchvision 0.21.0 from Debian trixie's orig tarball (the mirror serves no
.dsc for it; the orig is checked against the signed Sources index) built `--against
python:PATH` — the torch 2.6.0 an existing environment already has (PyPI's cp311 wheel, a CUDA
12.4 build, with its nvidia-* requirements, installed by the test into a venv of Debian's Python
3.11: tests/integration/torch260_env.py, one venv per test cache, shared with
test_companion_git.py) — CPU ops (`--cpu`), by `torchsmith build`:

1. a build whose compiler fails names the companion, its step (torchvision-compile) and log;
2. the same command resumes at that step (the build env is not made again, the tree is not
   fetched again: the plan's steps and their markers); the wheel pins torch==2.6.0, its modules
   link that environment's libc10/libtorch_cpu with its C++ ABI, and the smoke test passes in a
   fresh venv that sees that environment's torch read-only (nms, roi_align, a JPEG and a PNG the
   test writes, decoded by torchvision.io); the environment itself is never written to; the
   wheel is repaired (a manylinux tag, libjpeg and libpng grafted, no build-machine RPATH), its
   conda package is in the channel (``--output conda``), and ``torchsmith verify`` passes it
   against the published manifest;
3. the companion rebuilt from scratch in another workspace path (another cache root, the first
   one's compiler cache) minutes later hits the compiler cache for >= 90 % of compilations and
   gives a wheel with the same sha256 (issue 29; the differing members are named if not);
4. the same release from the user's own checkout (``--companion-source torchvision=path:DIR``):
   a checkout of another release is refused naming both, the corrected one builds in another
   workspace from the same compiler cache, and the checkout is never written to.

The wheel route (`--against FILE.whl`) with CUDA ops is tests/integration/test_companion_cuda.py.

The compiler cache is ``ccache-torchvision-0.21.0`` in the test cache: this module's first build
is the run's one cold torchvision build; test_companion_git.py's build hits it.

Time on the 2-core development machine: the user's venv ~80 s once per test cache, failing run
~20 s, cold torchvision build ~280 s (43 compilations), smoke venv ~30 s, rebuild ~11 s with
43/43 ccache hits (in another cache root since issue 29: its fetch and build env too; the whole
module took 290 s on 2026-11-27: setup 49 s, the test 237 s). A cold CI machine adds the
downloads (767 MB torch wheel, about 2.5 GB of nvidia-* wheels: 1-2 min measured here).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration import torch260_env
from tests.resources import require_tool
from torchsmith.companions.wheelcheck import libraries
from torchsmith.hashing import sha256_file
from torchsmith.packaging.wheel_normal import stamp_differences

pytestmark = [pytest.mark.slow, pytest.mark.network]
# One unit of work with test_companion_git.py (MODULE_GROUPS in tests/integration/conftest.py:
# one worker, this module first): its cold build fills the compiler cache the git-route build
# of test_companion_git.py hits (tests/integration/torch260_env.py).


def torchsmith(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "torchsmith", *args]
    return subprocess.run(argv, env=env, capture_output=True, text=True, check=False)


def build(python: Path, root: Path, dist: Path) -> list[str]:
    args = ["build", "--with", "torchvision", "--against", f"python:{python}"]
    return [
        *args,
        "--output",
        "wheel",
        "--output",
        "conda",
        "--source",
        "debian",
        "--cpu",
        "--cache-root",
        str(root),
        "--cache-dir",
        str(torch260_env.torchvision_ccache()),
        "--output-dir",
        str(dist),
    ]


@pytest.fixture(scope="module")
def user_env() -> Path:
    """An environment that already has torch 2.6.0 (and what it needs to import): the one
    tests/integration/torch260_env.py keeps in the test cache for this module and
    test_companion_git.py (5 GB with the nvidia-* wheels; made once per test cache)."""
    return torch260_env.user_python()


FAKE_COMPILER = """#!/bin/sh
case "$1" in --version|-v|-dumpversion|-dumpfullversion|-print-*) exec {real} "$@";; esac
echo 'injected compiler failure' >&2
exit 1
"""
"""A compiler that answers questions about itself (preflight, torch's ABI check) like the real
one and fails every compilation."""


def failing_compiler(where: Path) -> Path:
    """A directory whose c++ fails, put on PATH after the compiler cache's own links."""
    where.mkdir(parents=True, exist_ok=True)
    for name in ("c++",):  # what torch.utils.cpp_extension compiles with; the probe looks for gcc
        path = where / name
        path.write_text(FAKE_COMPILER.format(real=shutil.which(name)))
        path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return where


def manifest_of(done: subprocess.CompletedProcess[str], dist: Path) -> dict[str, Any]:
    """The build's manifest, as published in ``dist`` (the build must have succeeded)."""
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [path] = sorted(dist.glob("companions-*.manifest.json"))
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def requires_dist(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as zf:
        [meta] = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        text = zf.read(meta).decode()
    return [
        line.split(":", 1)[1].strip()
        for line in text.splitlines()
        if line.startswith("Requires-Dist:")
    ]


@pytest.fixture
def work(tmp_path: Path) -> Iterator[Path]:
    """tmp_path, emptied afterwards (the build env and smoke venv of each workspace)."""
    yield tmp_path
    for child in tmp_path.iterdir():
        shutil.rmtree(child, ignore_errors=True)


def test_torchvision_against_an_interpreters_torch_260(user_env: Path, work: Path) -> None:
    tmp_path = work
    require_tool("apt-get", "a Debian/Ubuntu host")
    require_tool("ccache")
    root, dist = tmp_path / "root", tmp_path / "dist"
    env = {**os.environ, "PATH": f"{failing_compiler(tmp_path / 'bad')}:{os.environ['PATH']}"}
    failed = torchsmith(build(user_env, root, dist), env)
    assert failed.returncode == 10, failed.stdout[-2000:] + failed.stderr[-2000:]
    said = failed.stderr + failed.stdout
    assert "companion torchvision 0.21.0 failed in step torchvision-compile" in said
    assert "torchvision-compile.log" in said and "resumes at torchvision-compile" in said

    first = manifest_of(torchsmith(build(user_env, root, dist), dict(os.environ)), dist)
    assert "companion-env" not in first["stages"]  # the env of the failed run is reused
    assert "torchvision-fetch" not in first["stages"]  # resumed at the step that failed
    assert "torchvision-compile" in first["stages"]
    kinds = ["environment", "fetch", "compile", "repair", "verify", "publish"]  # conda: after
    assert first["executed_steps"] == [f"torchvision-{k}" for k in kinds]
    assert first["torch"]["kind"] == "python" and first["torch"]["location"] == str(user_env)
    [vision] = first["companions"]
    assert vision["verify"]["requires_torch"] == "torch==2.6.0"
    assert vision["verify"]["smoke"]["nms"] == [0, 2]
    assert vision["verify"]["smoke"]["torch"] == "2.6.0+cu124"
    assert vision["verify"]["binaries"]["links"] == ["libc10.so", "libtorch_cpu.so"]
    assert vision["verify"]["binaries"]["cxx11_abi"] is False  # the torch's own ABI
    assert vision["source"]["sha256:pytorch-vision_0.21.0.orig.tar.gz"] == (
        "0a4a967bbb7f9810f792cd0289a07fb98c8fb5d1303fae8b63e3a6b05d720058"
    )
    assert "unavailable:pytorch-vision_0.21.0-3.dsc" in vision["source"]
    [built] = sorted(dist.glob("torchvision-0.21.0-*.whl"))
    assert "torch==2.6.0" in requires_dist(built)
    assert_repaired(built, vision)
    assert (dist / "conda-channel" / "linux-64" / "torchvision-0.21.0-py3.11_cpu_0.conda").is_file()
    [manifest] = sorted(dist.glob("companions-*.manifest.json"))
    checked = torchsmith(["verify", str(built), "--plan", str(manifest)], dict(os.environ))
    assert checked.returncode == 0, checked.stdout[-2000:] + checked.stderr[-2000:]
    assert [a["name"] for a in first["artifacts"]] == [built.name]  # no torch wheel to publish
    torch260_env.assert_untouched(user_env)  # the interpreter's environment is never written to
    torch260_env.record_filled("test_companion_against")

    ws = Path(first["workspace"])
    # 3. The same plan in another workspace path (another cache root, the first one's compiler
    # cache), at another time: a hit for >= 90 % of the compilations, and the same bytes (issue
    # 29: SOURCE_DATE_EPOCH from the plan, the wheel's normal form, ccache's base_dir).
    root2, dist2 = tmp_path / "elsewhere" / "root", tmp_path / "dist2"
    rebuilt = torchsmith([*build(user_env, root2, dist2), "--no-verify"], dict(os.environ))
    again = manifest_of(rebuilt, dist2)
    assert again["plan_hash"] == first["plan_hash"]
    assert Path(again["workspace"]) != ws and str(root2) in again["workspace"]
    [built2] = sorted(dist2.glob("torchvision-0.21.0-*.whl"))
    assert same_bytes(built, built2) == []
    assert again["companions"][0]["verify"]["requires_torch"] == "torch==2.6.0"
    assert again["companions"][0]["verify"]["smoke"] == "smoke test skipped (--no-verify)"
    cache = again["companions"][0]["compiler_cache"]
    assert cache["hits"] + cache["misses"] > 20, cache
    assert cache["hit_rate"] >= 0.9, cache

    # 4. The same release from the user's own checkout (--companion-source torchvision=path:DIR;
    # no --source: the companion needs no Debian package then). A checkout of another release is
    # refused at fetch naming both; corrected, the same command resumes; the user's tree is never
    # written to; the compiler cache serves the build made in another workspace.
    checkout = tmp_path / "user-vision"
    shutil.copytree(vision["source"]["root"], checkout, symlinks=True)
    (checkout / "version.txt").write_text("0.20.1a0\n")
    own = [
        "build",
        "--with",
        "torchvision",
        "--against",
        f"python:{user_env}",
        "--cpu",
        "--companion-source",
        f"torchvision=path:{checkout}",
        "--cache-root",
        str(root),
        "--cache-dir",
        str(torch260_env.torchvision_ccache()),
        "--output-dir",
        str(tmp_path / "dist3"),
        "--no-verify",
    ]
    wrong = torchsmith(own, dict(os.environ))
    assert wrong.returncode != 0
    said = wrong.stderr + wrong.stdout
    assert "is torchvision 0.20.1; the plan builds torchvision 0.21.0" in said, said[-2000:]
    (checkout / "version.txt").write_text("0.21.0a0\n")
    listing = tree_listing(checkout)
    third = manifest_of(torchsmith(own, dict(os.environ)), tmp_path / "dist3")
    [comp] = third["companions"]
    assert comp["source"]["kind"] == "path" and comp["source"]["copy_of"] == str(checkout)
    assert comp["verify"]["requires_torch"] == "torch==2.6.0"
    assert comp["compiler_cache"]["hit_rate"] >= 0.9, comp["compiler_cache"]
    assert Path(third["workspace"]) != ws
    assert tree_listing(checkout) == listing  # nothing written into the user's checkout
    torch260_env.assert_untouched(user_env)


def assert_repaired(wheel: Path, record: dict[str, Any]) -> None:
    """What the repair step made of pip's linux_x86_64 wheel: a manylinux tag, the system's
    libjpeg/libpng grafted into torchvision.libs/, no RPATH entry of the build machine."""
    assert "-manylinux" in wheel.name, wheel.name
    assert record["repair"]["tag"] in wheel.name
    bundled = " ".join(record["verify"]["repaired"]["bundled"])
    assert "torchvision.libs/libjpeg" in bundled and "torchvision.libs/libpng" in bundled, bundled
    assert all(not lib.foreign_rpath for lib in libraries(wheel))
    assert "libc10.so" in record["repair"]["excluded"]  # torch's own libraries stay external


def same_bytes(a: Path, b: Path) -> list[str]:
    """[] when the two wheels are byte for byte the same; else what differs: each member whose
    content (CRC), time or mode differs or that only one holds, or the archives' sha256 alone."""
    if sha256_file(a) == sha256_file(b):
        return []
    differ = stamp_differences(a, b)
    return differ or [f"{a.name}: the same members, another sha256 (order or zip headers)"]


def tree_listing(root: Path) -> list[tuple[str, int, int]]:
    """(path, size, mtime_ns) of everything under ``root``."""
    return sorted(
        (str(p.relative_to(root)), p.lstat().st_size, p.lstat().st_mtime_ns)
        for p in root.rglob("*")
    )
