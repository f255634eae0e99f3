"""Atomic publishing: the output dir holds no file or the complete one, never a partial file."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from torchsmith.errors import HostError
from torchsmith.steps.publish import publish_file, publish_manifest, remove_stale_temporaries


def test_publish_copies_completely(tmp_path: Path) -> None:
    src = tmp_path / "work" / "torch-1.13.1-cp311-cp311-linux_x86_64.whl"
    src.parent.mkdir()
    src.write_bytes(b"PK" + bytes(range(256)) * 5000)
    out = tmp_path / "dist"
    final = publish_file(src, out)
    assert final == out / src.name
    assert final.read_bytes() == src.read_bytes()
    assert sorted(p.name for p in out.iterdir()) == [src.name]


def test_a_failed_copy_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = tmp_path / "a.whl"
    src.write_bytes(b"x" * 4096)
    out = tmp_path / "dist"

    def half_copy(reader: Any, writer: Any, length: int = 0) -> None:
        writer.write(reader.read(100))
        raise OSError("disk full")

    monkeypatch.setattr(shutil, "copyfileobj", half_copy)
    with pytest.raises(OSError, match="disk full"):
        publish_file(src, out)
    assert list(out.iterdir()) == []


def test_an_existing_wheel_is_replaced_whole(tmp_path: Path) -> None:
    out = tmp_path / "dist"
    out.mkdir()
    (out / "a.whl").write_bytes(b"old")
    src = tmp_path / "a.whl"
    src.write_bytes(b"new contents")
    publish_file(src, out)
    assert (out / "a.whl").read_bytes() == b"new contents"


def test_stale_temporaries_of_killed_publishes_are_removed(tmp_path: Path) -> None:
    (tmp_path / ".a.whl.partial-1234").write_bytes(b"half")
    (tmp_path / "a.whl").write_bytes(b"whole")
    (tmp_path / ".hidden-user-file").write_text("keep")
    removed = remove_stale_temporaries(tmp_path)
    assert [p.name for p in removed] == [".a.whl.partial-1234"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".hidden-user-file", "a.whl"]


def test_manifest_goes_to_every_directory(tmp_path: Path) -> None:
    dirs = [tmp_path / "dist", tmp_path / "ws"]
    paths = publish_manifest({"kind": "partial", "artifacts": []}, dirs, "m.manifest.json")
    assert paths == [d / "m.manifest.json" for d in dirs]
    for path in paths:
        assert json.loads(path.read_text()) == {"artifacts": [], "kind": "partial"}
        assert [p.name for p in path.parent.iterdir()] == ["m.manifest.json"]


def _dead_pid() -> int:
    return 2**22 + 12345  # above the default pid_max (4194304): never a running process


def test_cleanup_keeps_live_runs_and_user_files(tmp_path: Path) -> None:
    """M4: only temporaries of dead runs go; another live run's and a user's file stay."""
    live = tmp_path / f".torch-2.5.1-cp311-linux_x86_64.whl.partial-{os.getppid()}"
    dead = tmp_path / f".torch-2.5.1-cp311-linux_x86_64.whl.partial-{_dead_pid()}-ab_c1"
    user = tmp_path / ".notes.partial-draft"
    for path in (live, dead, user):
        path.write_text("x")
    assert remove_stale_temporaries(tmp_path) == [dead]
    assert live.exists() and user.exists() and not dead.exists()


def test_a_planted_symlink_at_the_temp_name_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """L1: the temporary is created with O_EXCL|O_NOFOLLOW; a link planted there is skipped."""
    out = tmp_path / "dist"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    src = tmp_path / "w.whl"
    src.write_bytes(b"PK wheel bytes")
    names = iter(["planted", "fresh01"])
    monkeypatch.setattr(tempfile, "_get_candidate_names", lambda: names)
    for planted in (f".w.whl.partial-{os.getpid()}", f".w.whl.partial-{os.getpid()}-planted"):
        (out / planted).symlink_to(victim)
    final = publish_file(src, out)
    assert victim.read_text() == "precious"
    assert not final.is_symlink() and final.read_bytes() == b"PK wheel bytes"


def _manifest(out: Path, wheel: str, plan_hash: str) -> None:
    name = wheel.removesuffix(".whl") + ".manifest.json"
    (out / name).write_text(json.dumps({"plan_hash": plan_hash}))


def test_a_wheel_of_another_plan_is_not_replaced(tmp_path: Path) -> None:
    """L2: same name, other bytes, other plan: refused with the way out."""
    out = tmp_path / "dist"
    out.mkdir()
    (out / "t.whl").write_bytes(b"plan A's wheel")
    _manifest(out, "t.whl", "a" * 16)
    src = tmp_path / "t.whl"
    src.write_bytes(b"plan B's wheel")
    with pytest.raises(HostError, match=f"made by plan {'a' * 16}") as caught:
        publish_file(src, out, plan_hash="b" * 16)
    assert "--output-dir" in caught.value.hint and "delete" in caught.value.hint
    assert (out / "t.whl").read_bytes() == b"plan A's wheel"
    publish_file(src, out, plan_hash="a" * 16)  # a rebuild of plan A may replace it
    assert (out / "t.whl").read_bytes() == b"plan B's wheel"
    publish_file(src, out, plan_hash="c" * 16)  # the same bytes: fine for anyone


def test_a_wheel_of_unknown_origin_is_not_replaced(tmp_path: Path) -> None:
    out = tmp_path / "dist"
    out.mkdir()
    (out / "t.whl").write_bytes(b"someone's wheel")
    src = tmp_path / "t.whl"
    src.write_bytes(b"ours")
    with pytest.raises(HostError, match="unknown origin"):
        publish_file(src, out, plan_hash="b" * 16)


def test_a_manifest_of_another_plan_is_not_replaced(tmp_path: Path) -> None:
    out = tmp_path / "dist"
    out.mkdir()
    _manifest(out, "t.whl", "a" * 16)
    with pytest.raises(HostError, match="another manifest"):
        publish_manifest({"plan_hash": "b" * 16}, [out], "t.manifest.json")
    publish_manifest({"plan_hash": "a" * 16, "n": 2}, [out], "t.manifest.json")
    assert json.loads((out / "t.manifest.json").read_text())["n"] == 2


def test_the_published_manifest_has_no_credentials(tmp_path: Path) -> None:
    manifest = {
        "plan": {"source": {"location": "https://u:CANARY@h/t.tgz?sig=CANARY2"}},
        "env": {"SCCACHE_REDIS": "redis://:CANARY3@cache:6379"},
    }
    (path,) = publish_manifest(manifest, [tmp_path], "m.manifest.json")
    assert "CANARY" not in path.read_text()
