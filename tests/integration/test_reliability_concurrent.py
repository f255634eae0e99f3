"""Reliability trial 5 (issue 16), two builds of one plan at once, as real ``torchsmith build``
processes of the same command: while the first is held in its configure step (the small tree's
``setup.py --cmake-only`` waits for a file, so the trial does not race a fast machine), the
second waits (``lock.WAIT_S``) and is refused naming the first one's pid, having run no step;
the first is then SIGKILLed with its process group, and the second run of the same command
recognises the dead holder's lock, resumes the first one's workspace and publishes. The lock
itself is torchsmith/lock.py (tests/integration/test_concurrent_builds.py tests it with holder
processes)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from .small_tree import ATTESTED, MANIFEST, WHEEL, args, cli_env, make_tree, run_cli, start_cli

pytestmark = [pytest.mark.slow, pytest.mark.network]


def test_a_second_build_of_the_plan_is_refused_then_takes_over_after_a_kill(
    tmp_path: Path,
) -> None:
    dist = tmp_path / "dist"
    argv = args(make_tree(tmp_path / "tree"), tmp_path / "cache", dist)
    release = tmp_path / "release-configure"
    env = cli_env({"FAKE_TORCH_HOLD_UNTIL": str(release)})
    first = start_cli(argv, env)
    assert first.stdout is not None
    with first:
        seen = []
        for line in first.stdout:
            seen.append(line)
            if line.startswith("==> configure"):
                break
        assert first.poll() is None, "".join(seen)
        second = run_cli(argv, env)
        print(f"\nconcurrent trial: first pid {first.pid}; second: exit {second.returncode}: "
              f"{second.stderr.strip()}")  # fmt: skip
        assert second.returncode == 7, second.stdout + second.stderr  # HostError
        assert f"in use by another torchsmith run (pid {first.pid})" in second.stderr
        assert "==> " not in second.stdout  # it ran no step: one writer
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    release.touch()
    third = run_cli(argv, env)
    assert third.returncode == 0, third.stdout + third.stderr
    assert "resuming in" in third.stdout
    assert sorted(p.name for p in dist.iterdir()) == sorted([WHEEL, MANIFEST, *ATTESTED])
