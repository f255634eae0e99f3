"""Reliability trial 3 (issue 16), out of memory: the compiler runs in a memory cgroup this test
makes (cgroup v1 ``memory.limit_in_bytes``, or v2 ``memory.max``), through a ``gcc-12`` wrapper
first on PATH that moves itself into the group. Two C files whose cc1 each peaks at about
160 MiB compile in parallel under a 240 MiB limit: the kernel's OOM killer takes one cc1. The
build must say it ran out of memory, with MAX_JOBS and the jobs that would fit; the rerun with
that ``--max-jobs`` succeeds. Needs root and a memory cgroup; under ``CI=true`` missing them
fails."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.resources import require, require_root

from .small_tree import ATTESTED, MANIFEST, WHEEL, args, big_source, cli_env, make_tree, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.network]

V1 = Path("/sys/fs/cgroup/memory")
V2 = Path("/sys/fs/cgroup")
LIMIT = 240 << 20
BIG = {f"big{i}": big_source(f"big{i}", 1_000_000) for i in range(2)}  # ~160 MiB of cc1 each
WRAPPER = """#!/bin/sh
echo $$ > {procs}
exec {real} "$@"
"""


def make_cgroup(name: str) -> Path:
    """A memory cgroup limited to :data:`LIMIT` (v1 memory controller, or v2)."""
    if V1.is_dir():
        group = V1 / name
        group.mkdir(exist_ok=True)
        (group / "memory.limit_in_bytes").write_text(str(LIMIT))
        return group
    group = V2 / name
    group.mkdir(exist_ok=True)
    if not (group / "memory.max").is_file():
        group.rmdir()
        require(False, "the cgroup v2 memory controller", "enable +memory in subtree_control")
    (group / "memory.max").write_text(str(LIMIT))
    if (group / "memory.swap.max").is_file():
        (group / "memory.swap.max").write_text("0")
    return group


def wrapper_dir(root: Path, group: Path) -> Path:
    real = shutil.which("gcc-12")
    require(real is not None, "gcc-12 on PATH", "apt-get install gcc-12")
    bindir = root / "bin"
    bindir.mkdir()
    script = bindir / "gcc-12"
    script.write_text(WRAPPER.format(procs=group / "cgroup.procs", real=real))
    script.chmod(0o755)
    return bindir


def test_a_compiler_killed_for_memory_is_named_with_the_jobs_that_fit(tmp_path: Path) -> None:
    require_root("make a memory cgroup")
    require(V1.is_dir() or (V2 / "cgroup.controllers").is_file(), "a memory cgroup", "cgroupfs")
    group = make_cgroup(f"torchsmith-oom-{tmp_path.name}")
    try:
        env = cli_env(path_first=wrapper_dir(tmp_path, group))
        tree = make_tree(tmp_path / "tree", extra=BIG)
        argv = args(tree, tmp_path / "cache", tmp_path / "dist")
        failed = run_cli([*argv, "--max-jobs", "2"], env)
        print(f"\nOOM trial, 2 jobs under {LIMIT >> 20} MiB: exit {failed.returncode}\n"
              f"{failed.stderr}")  # fmt: skip
        assert failed.returncode == 10, failed.stdout + failed.stderr
        assert "ran out of memory" in failed.stderr
        assert "with 2 parallel jobs (MAX_JOBS); 1 would fit" in failed.stderr
        fit = re.search(r"--max-jobs (\d+)", failed.stderr)
        assert fit is not None and fit[1] == "1"
        again = run_cli([*argv, "--max-jobs", fit[1]], env)
        assert again.returncode == 0, again.stdout + again.stderr
        dist = tmp_path / "dist"
        assert sorted(p.name for p in dist.iterdir()) == sorted([WHEEL, MANIFEST, *ATTESTED])
        manifest = json.loads((dist / MANIFEST).read_text())
        assert manifest["plan"]["max_jobs"]["value"] == 1
        print(f"rerun with --max-jobs 1: ninja {manifest['ninja']}, "
              f"cache {manifest.get('compiler_cache')}")  # fmt: skip
    finally:
        group.rmdir()
