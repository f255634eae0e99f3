"""Atomic publishing: the output dir holds no file or the complete one, never a partial file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

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
