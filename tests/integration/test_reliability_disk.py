"""Reliability trial 2 (issue 16), disk full: the cache root (workspace, build tree, compiler
cache) on a tmpfs this test mounts. Preflight refuses a cache root with less free space than
the plan's estimate (11 GiB for this plan), so the tmpfs is mounted with room for it (a tmpfs
takes memory only for what is written) and shrunk to what is used plus a few MiB the moment
compile starts, as if another job filled the disk. The error must say "disk full", the path and
the space the plan needs. Remounted larger, the same command resumes (finished objects kept)
and publishes. Needs root (mount); under ``CI=true`` not being root fails."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.resources import require_root, require_tool

from .small_tree import ATTESTED, MANIFEST, WHEEL, args, cli_env, make_tree, run_cli, start_cli

pytestmark = [pytest.mark.slow, pytest.mark.network]

MIB = 1 << 20
# 8 MiB of .data each (gcc emits the zeros: the object is as big), compiled in a blink
BIG = {f"big{i}": f"char fake_big{i}[8 << 20] = {{1}};\n" for i in range(4)}
HEADROOM_MIB = 10
EDGES = 3 + len(BIG) + 1
ROOMY_MIB = 12 * 1024


def mount_tmpfs(where: Path, mib: int) -> None:
    where.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={mib}m,mode=0755", "tmpfs", str(where)], check=True
    )


def resize(where: Path, mib: int) -> None:
    subprocess.run(["mount", "-o", f"remount,size={mib}m", str(where)], check=True)


def shrink_when_compile_starts(argv: list[str], fs: Path) -> tuple[int, str]:
    """Run the build; as compile starts, shrink ``fs`` to its use plus the headroom. The MiB
    used then and the run's output."""
    used_mib = 0
    child = start_cli(argv, cli_env())
    assert child.stdout is not None
    with child:
        lines = []
        for line in child.stdout:
            lines.append(line)
            if line.startswith("==> compile:"):
                used_mib = shutil.disk_usage(fs).used // MIB
                resize(fs, used_mib + HEADROOM_MIB)
        child.wait()
    return used_mib, "".join(lines)


def test_disk_full_during_compile_is_named_and_resumes(tmp_path: Path) -> None:
    require_root("mount a tmpfs for the cache root")
    require_tool("mount", "util-linux")
    fs, dist = tmp_path / "fs", tmp_path / "dist"
    argv = args(make_tree(tmp_path / "tree", extra=BIG), fs / "cache", dist)
    mount_tmpfs(fs, ROOMY_MIB)
    try:
        used_mib, out = shrink_when_compile_starts(argv, fs)
        print(f"\ndisk-full trial: {used_mib} MiB used as compile started, tmpfs shrunk to "
              f"{used_mib + HEADROOM_MIB} MiB\n{out}")  # fmt: skip
        assert used_mib, "compile never started"
        said = out.lower()
        assert "stage 'compile' failed: disk full" in said
        assert str(fs / "cache") in out  # the path
        assert "needs about 11 gb" in said  # the space the plan needs
        assert not dist.exists() or not list(dist.iterdir())
        resize(fs, ROOMY_MIB)
        again = run_cli(argv, cli_env())
        assert again.returncode == 0, again.stdout + again.stderr
        assert sorted(p.name for p in dist.iterdir()) == sorted([WHEEL, MANIFEST, *ATTESTED])
        ninja = json.loads((dist / MANIFEST).read_text())["ninja"]
        print(f"resumed: {ninja['edges_run']} of {EDGES} edges run")
        assert 0 < ninja["edges_run"] < EDGES  # the objects finished before the disk filled stay
    finally:
        subprocess.run(["umount", "-l", str(fs)], check=False)
