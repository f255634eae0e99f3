"""Step "configure": CMake configure, once per workspace.

Releases with a ``setup.py`` configure through it (``setup.py build --cmake-only``: it turns the
``BUILD_*``/``USE_*``/``CMAKE_*`` variables into ``-D`` options, the same switches as the plan's
``cmake_args``, and runs the dry-run codegen CMake needs); a tree without one is configured
with ``cmake -G Ninja`` and the plan's ``cmake_args``. A finished configure (``build.ninja``
present) is not redone: ninja re-runs CMake by itself when a CMake file changes.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

from torchsmith.steps.context import BuildContext
from torchsmith.steps.state import BuildEnv, BuildState, build_dir

STAGE = "configure"
CONFIGURED_WITH = ".torchsmith-toolkit"
"""In the build directory: the toolkit the configure was made with (:func:`toolkit_key`)."""

# CMakeCache.txt entries worth recording: the switches and the toolchain they resolved to.
CACHE_PREFIXES = ("USE_", "BUILD_", "BLAS", "TORCH_", "CAFFE2_", "CUDA_", "PYTHON_EXECUTABLE")
CACHE_KEYS = frozenset(
    {
        "CMAKE_BUILD_TYPE",
        "CMAKE_C_COMPILER",
        "CMAKE_CXX_COMPILER",
        "CMAKE_CUDA_COMPILER",
        "CMAKE_CXX_FLAGS",
        "CMAKE_C_COMPILER_LAUNCHER",
        "CMAKE_CXX_COMPILER_LAUNCHER",
        "CMAKE_CUDA_COMPILER_LAUNCHER",
        "CMAKE_GENERATOR",
        "CMAKE_INSTALL_PREFIX",
    }
)


def configure_command(tree: Path, benv: BuildEnv, cmake_args: list[str]) -> list[str]:
    if (tree / "setup.py").is_file():
        return [str(benv.python), "setup.py", "build", "--cmake-only"]
    return ["cmake", "-S", str(tree), "-B", str(build_dir(tree)), "-G", "Ninja", *cmake_args]


def toolkit_key(toolkit: dict[str, Any] | None) -> str:
    """What the configure depends on beyond the plan: the CUDA toolkit it found — its record
    (root, version, packages) and its nvcc and include/ as they are on disk (where they resolve
    to, when they were made): a toolkit entry re-provisioned by another route (e.g. once inside
    a container, include/ linked into that container's /usr) leaves the cached paths stale."""
    if toolkit is None:
        return "none"
    root = Path(str(toolkit.get("root", "")))
    files = [root / "bin" / "nvcc", root / "include"]
    seen = [(str(f.resolve()), f.stat().st_mtime_ns) if f.exists() else str(f) for f in files]
    text = json.dumps([toolkit, seen], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _stale(ctx: BuildContext, bdir: Path, key: str) -> bool:
    """A finished configure made with another toolkit: its CMakeCache goes (ninja then
    rebuilds what changed; the compiler cache answers the rest)."""
    marker = bdir / CONFIGURED_WITH
    if not marker.is_file() or marker.read_text().strip() == key:
        return False
    ctx.reporter.message(
        "the CUDA toolkit changed since this workspace was configured: configuring again"
    )
    (bdir / "CMakeCache.txt").unlink(missing_ok=True)
    shutil.rmtree(bdir / "CMakeFiles", ignore_errors=True)
    return True


def configure(
    ctx: BuildContext, tree: Path, benv: BuildEnv, toolkit: dict[str, Any] | None = None
) -> None:
    bdir = build_dir(tree)
    key = toolkit_key(toolkit)
    done = (bdir / "build.ninja").is_file() and (bdir / "CMakeCache.txt").is_file()
    if done and not _stale(ctx, bdir, key):
        return
    log = ctx.log(STAGE)
    with ctx.stage(STAGE, "CMake configure"):
        argv = configure_command(tree, benv, ctx.plan.cmake_args)
        ctx.executor.run(argv, env=benv.env, cwd=tree, log_path=log)
    bdir.mkdir(parents=True, exist_ok=True)
    (bdir / CONFIGURED_WITH).write_text(key + "\n")


def parse_cmake_cache(text: str) -> dict[str, str]:
    """Every ``NAME:TYPE=VALUE`` entry of a CMakeCache.txt (INTERNAL/STATIC ones left out)."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        if not line or line.startswith(("#", "//")):
            continue
        key, sep, value = line.partition("=")
        name, _, kind = key.partition(":")
        if sep and kind not in ("INTERNAL", "STATIC"):
            values[name] = value
    return values


def cache_values_that_matter(values: dict[str, str]) -> dict[str, str]:
    return {
        k: v for k, v in sorted(values.items()) if k in CACHE_KEYS or k.startswith(CACHE_PREFIXES)
    }


def read_cmake_cache(tree: Path) -> dict[str, str]:
    path = build_dir(tree) / "CMakeCache.txt"
    if not path.is_file():
        return {}
    return cache_values_that_matter(parse_cmake_cache(path.read_text(errors="replace")))


def run(ctx: BuildContext, state: BuildState) -> None:
    """Step ``configure``."""
    toolkit = state.toolkit.record if state.toolkit else None
    configure(ctx, state.need_tree(), state.need_benv(), toolkit)
