"""One user environment with PyPI's torch 2.6.0 and one compiler cache for the torchvision
0.21.0 builds of test_companion_against.py and test_companion_git.py (issue 23).

Both modules build torchvision ``--against python:<this venv>`` with ``--cache-dir <this
cache>``: the compiler sees torch's headers at the same absolute path (outside torchsmith's
cache root, so ccache's base_dir does not make them relative), and the second build of a run
hits what the first compiled (measured: one cold build per run instead of two).

The venv (PyPI's cp311 wheel, a CUDA 12.4 build, with its nvidia-* requirements: ~5 GB) is made
once per test cache: in a directory beside its final path, renamed into place when complete (an
interrupted run leaves no half venv under the final name; a stale partial one is removed under
the lock), under the test cache's file lock (conftest.cache_lock: two pytest workers never
make it twice). ``user-venv-torch260.fingerprint.json`` beside it records every file's path,
size and mtime at creation: a build that wrote into the "user's" environment, in this run or an
earlier one, fails :func:`assert_untouched`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from tests.integration import conftest

NAME = "user-venv-torch260"
TORCHVISION_CCACHE = "ccache-torchvision-0.21.0"


def _listing(root: Path) -> list[list[str | int]]:
    """[path, size, mtime_ns] of everything under ``root`` (symlinks not followed)."""
    entries = ((p, p.lstat()) for p in root.rglob("*"))
    return sorted([str(p.relative_to(root)), st.st_size, st.st_mtime_ns] for p, st in entries)


def _fingerprint(venv: Path) -> Path:
    return venv.with_name(f"{venv.name}.fingerprint.json")


def _make(venv: Path) -> None:
    wheel = conftest.downloaded_wheel("torch==2.6.0", "torch-2.6.0-cp311-*.whl")
    partial = venv.with_name(f"{venv.name}.partial")
    shutil.rmtree(partial, ignore_errors=True)  # an interrupted earlier run's (we hold the lock)
    subprocess.run(["/usr/bin/python3.11", "-m", "venv", str(partial)], check=True)
    pip = [str(partial / "bin" / "python"), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, "--disable-pip-version-check", str(wheel)], check=True)
    partial.rename(venv)  # console scripts in bin/ name the partial path: every use is bin/python
    _fingerprint(venv).write_text(json.dumps(_listing(venv)))


def user_python() -> Path:
    """The venv's interpreter (made on first use), to pass as ``--against python:PATH``."""
    venv = conftest.test_cache() / NAME
    with conftest.cache_lock(NAME):
        if not _fingerprint(venv).is_file():
            shutil.rmtree(venv, ignore_errors=True)  # renamed but not fingerprinted: remake
            _make(venv)
    return venv / "bin" / "python"


def assert_untouched(python: Path) -> None:
    """Nothing under the venv was added, removed or rewritten since it was made."""
    venv = python.parent.parent
    made = json.loads(_fingerprint(venv).read_text())
    now = _listing(venv)
    changed = sorted({tuple(e) for e in now}.symmetric_difference(tuple(e) for e in made))
    assert not changed, f"the user's environment {venv} was written to: {changed[:20]}"


def torchvision_ccache() -> Path:
    """The compiler cache both torchvision builds use, kept in the test cache (0700: ccache
    makes it group-writable and torchsmith refuses a group-writable cache to root)."""
    cache = conftest.test_cache() / TORCHVISION_CCACHE
    cache.mkdir(parents=True, exist_ok=True)
    cache.chmod(0o700)
    return cache


def _filled_mark() -> Path:
    return conftest.test_cache() / f"{TORCHVISION_CCACHE}.filled"


def ccache_filled() -> bool:
    """Whether a torchvision build against this venv has completed with this cache before."""
    return _filled_mark().is_file()


def record_filled(by: str) -> None:
    """Say that a build (``by``: which test) completed with this cache."""
    _filled_mark().write_text(f"{by}\n")
