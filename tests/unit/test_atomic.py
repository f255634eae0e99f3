"""torchsmith.atomic and the concurrency rules built on it (M4, L1): unique temporaries made
with O_EXCL, cleanup of dead runs' temporaries only, one lock holder per directory."""

from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path

import pytest

from torchsmith import atomic, lock
from torchsmith.errors import HostError
from torchsmith.sources import owned

DEAD = 2**22 + 4321  # above the default pid_max: never a running process


def test_write_json_and_text(tmp_path: Path) -> None:
    path = atomic.write_json(tmp_path / "a" / "x.json", {"b": 1, "a": [1]})
    assert path.read_text() == '{\n  "a": [\n    1\n  ],\n  "b": 1\n}\n'
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    atomic.write_text(path, "new", mode=0o600)
    assert path.read_text() == "new" and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(p.name for p in path.parent.iterdir()) == ["x.json"]


def test_copy_file_keeps_the_mode(tmp_path: Path) -> None:
    src = tmp_path / "run.sh"
    src.write_text("#!/bin/sh\n")
    src.chmod(0o755)
    dest = atomic.copy_file(src, tmp_path / "out" / "run.sh")
    assert dest.read_text() == "#!/bin/sh\n" and stat.S_IMODE(dest.stat().st_mode) == 0o755


def test_a_failed_write_leaves_no_temporary(tmp_path: Path) -> None:
    def boom(_: object) -> None:
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        atomic.write_with(tmp_path / "x.bin", boom)
    assert list(tmp_path.iterdir()) == []


def test_a_planted_symlink_is_never_written_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious")
    names = iter(["planted", "fresh"])
    monkeypatch.setattr(tempfile, "_get_candidate_names", lambda: names)
    (tmp_path / f".x.json.partial-{os.getpid()}-planted").symlink_to(victim)
    atomic.write_json(tmp_path / "x.json", {"a": 1})
    assert victim.read_text() == "precious"
    assert json.loads((tmp_path / "x.json").read_text()) == {"a": 1}


def test_stale_partials_are_dead_runs_of_that_name_only(tmp_path: Path) -> None:
    final = tmp_path / "tree"
    names = [
        f".tree.partial-{DEAD}",  # an older torchsmith's name, dead run: stale
        f".tree.partial-{DEAD}-k2j_x",  # dead run: stale
        f".tree.partial-{os.getppid()}-abc",  # a live run
        f".tree.partial-{os.getpid()}-abc",  # this run
        ".tree.partial-draft",  # a user's
        f".treehouse.partial-{DEAD}",  # another final's
    ]
    for name in names:
        (tmp_path / name).mkdir()
    assert [p.name for p in atomic.stale_partials(final)] == names[:2]


def test_a_live_runs_staging_dir_survives(tmp_path: Path) -> None:
    """M4 repro: B's staging_dir() removed A's live stage; now only dead runs' stages go."""
    live = tmp_path / f".tree.partial-{os.getppid()}"
    owned.claim(live, {"staging_for": "tree"})
    (live / "half-extracted").write_text("A is working")
    dead = owned.claim(tmp_path / f".tree.partial-{DEAD}-q1", {"staging_for": "tree"})
    unmarked = tmp_path / f".tree.partial-{DEAD}-q2"
    unmarked.mkdir()
    stage = owned.staging_dir(tmp_path, "tree")
    assert owned.is_owned(stage) and stage.name.startswith(f".tree.partial-{os.getpid()}-")
    assert (live / "half-extracted").read_text() == "A is working"
    assert not dead.exists()
    assert unmarked.is_dir()  # not ours: never deleted
    assert owned.staging_dir(tmp_path, "tree") != stage  # unique per call


def test_owned_marker_json_has_no_credentials(tmp_path: Path) -> None:
    entry = owned.claim(tmp_path / "e", {"location": "https://u:CANARY@h/t.tgz?token=CANARY"})
    assert "CANARY" not in (entry / owned.MARKER).read_text()
    owned.update_info(entry, url="https://CANARY@h/")
    assert "CANARY" not in (entry / owned.MARKER).read_text()


def test_a_held_lock_is_refused_with_the_holders_pid(tmp_path: Path) -> None:
    with (
        lock.acquire(tmp_path, "the thing"),
        pytest.raises(HostError, match=rf"the thing .* \(pid {os.getpid()}\)"),
    ):
        lock.acquire(tmp_path, "the thing", wait_s=0.1)
    with lock.acquire(tmp_path, "the thing", wait_s=0.1) as again:
        assert again.held
    assert not again.held


def test_the_lock_file_is_not_followed_through_a_link(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / lock.LOCK_NAME).symlink_to(victim)
    with pytest.raises(HostError, match="cannot open the lock file"):
        lock.acquire(tmp_path / "d", "d", wait_s=0.1)
    assert victim.read_text() == "precious"


def test_a_waiting_run_says_whom_it_waits_for(tmp_path: Path) -> None:
    said: list[str] = []
    with (
        lock.acquire(tmp_path, "the entry"),
        pytest.raises(HostError, match="in use by another torchsmith run"),
    ):
        lock.acquire(tmp_path, "the entry", wait_s=0.2, say=said.append)
    assert said == [f"waiting up to 0 s for the entry, in use by pid {os.getpid()}"]


def test_a_dropped_lock_is_released(tmp_path: Path) -> None:
    held = lock.acquire(tmp_path, "the entry")
    assert held.held
    del held
    assert lock.acquire(tmp_path, "the entry", wait_s=0).held
