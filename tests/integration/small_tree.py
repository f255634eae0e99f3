"""A small real CMake + setuptools project laid out like a torch tree, and the ways the
integration tests drive ``torchsmith build`` on it (in process, or as a real ``python -m
torchsmith`` process that a test may kill). Built with the plan of torch 2.5.1 (frontend
``setup.py``: ``setup.py build --cmake-only``, ``cmake --build``, ``setup.py bdist_wheel``)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
from collections.abc import Mapping
from pathlib import Path

CMAKELISTS = """cmake_minimum_required(VERSION 3.13)
project(fake C)
file(GLOB FAKE_SOURCES ${CMAKE_SOURCE_DIR}/*.c)
add_library(fake SHARED ${FAKE_SOURCES})
set_target_properties(fake PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib)
"""
SETUP_PY = """import os, shutil, subprocess, sys, time
from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.join(HERE, "build")
if "--cmake-only" in sys.argv:
    HOLD = os.environ.get("FAKE_TORCH_HOLD_UNTIL")  # a test holds configure until this file exists
    DEADLINE = time.monotonic() + 300
    while HOLD and not os.path.exists(HOLD) and time.monotonic() < DEADLINE:
        time.sleep(0.05)
    subprocess.check_call(["cmake", "-G", "Ninja", "-S", HERE, "-B", BUILD])
    sys.exit(0)


class Build(build_py):
    def run(self):
        subprocess.check_call(["cmake", "--build", BUILD])
        super().run()
        shutil.copy(os.path.join(BUILD, "lib", "libfake.so"), os.path.join(self.build_lib, "fake"))


setup(
    name="fake-torch",
    version=os.environ["PYTORCH_BUILD_VERSION"],
    packages=["fake"],
    cmdclass={"build_py": Build},
)
"""
PYPROJECT = (
    '[build-system]\nrequires = ["setuptools", "wheel"]\nbuild-backend = "setuptools.build_meta"\n'
)
# The repair step's name: auditwheel 6.x measures glibc floor 2.5 for libfake.so (libc only)
WHEEL = "fake_torch-2.5.1+cpu-py3-none-manylinux1_x86_64.manylinux_2_5_x86_64.whl"
MANIFEST = WHEEL.removesuffix(".whl") + ".manifest.json"
ATTESTED = [WHEEL + ".cdx.json", WHEEL + ".provenance.json"]
"""What the attest step writes beside the wheel (SBOM, provenance; unsigned)."""


def big_source(name: str, elements: int) -> str:
    """A C file whose compile takes time, memory and output space in proportion to
    ``elements`` (an initialised int array: about 0.3 KB of cc1 memory, 3.5 us and 4 bytes of
    object per element with gcc 12 at -O0)."""
    values = ",".join(str(i % 9973) for i in range(elements))
    return f"int fake_{name}[] = {{{values}}};\n"


def make_tree(root: Path, broken: bool = False, extra: Mapping[str, str] | None = None) -> Path:
    """``a.c b.c c.c`` (four ninja edges with the link) plus ``extra`` C files by name."""
    (root / "fake").mkdir(parents=True)
    (root / "fake" / "__init__.py").write_text("")
    (root / "CMakeLists.txt").write_text(CMAKELISTS)
    (root / "setup.py").write_text(SETUP_PY)
    (root / "pyproject.toml").write_text(PYPROJECT)
    for name in "abc":
        body = "return x +" if broken and name == "b" else "return x + 1;"
        (root / f"{name}.c").write_text(f"int fake_{name}(int x) {{ {body} }}\n")
    for name, text in (extra or {}).items():
        (root / f"{name}.c").write_text(text)
    return root


def args(tree: Path | str, cache_root: Path, dist: Path, verify: bool = False) -> list[str]:
    """The fake tree is no torch, so verification (inspect + smoke tests) is off by default.
    ``tree``: a directory (``path:``) or a whole ``kind:location`` source."""
    source = tree if isinstance(tree, str) else f"path:{tree}"
    return [
        "build", "--source", source, "--cpu", "--torch", "2.5.1",
        "--cache-root", str(cache_root), "--output-dir", str(dist),
        *([] if verify else ["--no-verify"]),
    ]  # fmt: skip


def tarball_of(tree: Path, top: str = "pytorch-v2.5.1") -> bytes:
    """``tree`` as a release-style ``.tar.gz`` (one top directory)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(tree, arcname=top)
    return buf.getvalue()


def cli_env(
    extra: Mapping[str, str] | None = None, path_first: Path | None = None
) -> dict[str, str]:
    """This process's environment for a ``python -m torchsmith`` child (unbuffered output)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **(extra or {})}
    if path_first is not None:
        env["PATH"] = f"{path_first}{os.pathsep}{env.get('PATH', '')}"
    return env


def cli_argv(argv: list[str]) -> list[str]:
    return [sys.executable, "-m", "torchsmith", *argv]


def start_cli(argv: list[str], env: Mapping[str, str]) -> subprocess.Popen[str]:
    """``torchsmith`` as a real process in its own session (a killer takes its whole group,
    as a job scheduler would), stdout and stderr merged, line by line."""
    return subprocess.Popen(
        cli_argv(argv), env=dict(env), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, start_new_session=True, bufsize=1,
    )  # fmt: skip


def run_cli(
    argv: list[str], env: Mapping[str, str], timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cli_argv(argv), env=dict(env), capture_output=True, text=True, timeout=timeout,
        check=False,
    )  # fmt: skip
