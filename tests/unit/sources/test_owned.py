"""Owned directories, placeholders and safe extraction (no subprocess)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from torchsmith.errors import SourceError
from torchsmith.sources import owned
from torchsmith.sources.archive import safe_extract, single_top_dir
from torchsmith.sources.extras import expand_placeholders, placeholders


def test_claim_marks_and_reclaims(tmp_path: Path) -> None:
    target = owned.claim(tmp_path / "a", {"k": "v"})
    assert owned.is_owned(target)
    assert owned.read_info(target)["k"] == "v"
    assert owned.claim(target, {}) == target  # already ours: fine


def test_a_foreign_directory_is_refused_and_kept(tmp_path: Path) -> None:
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "precious.txt").write_text("keep")
    with pytest.raises(SourceError, match="did not create"):
        owned.claim(foreign, {})
    with pytest.raises(SourceError, match="refusing to delete"):
        owned.remove_owned(foreign)
    assert (foreign / "precious.txt").read_text() == "keep"


def test_publish_replaces_only_an_owned_directory(tmp_path: Path) -> None:
    stage = owned.staging_dir(tmp_path, "tree")
    (stage / "f").write_text("1")
    final = owned.publish(stage, tmp_path / "tree")
    assert (final / "f").read_text() == "1"
    stage2 = owned.staging_dir(tmp_path, "tree")
    owned.publish(stage2, final)
    assert not (final / "f").exists()
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    with pytest.raises(SourceError):
        owned.publish(owned.staging_dir(tmp_path, "foreign"), foreign)


def test_placeholders_expand_to_fetched_directories() -> None:
    argv = ["cp", "{debian_extra:pytorch=2.6.0+dfsg-7}/debian/x.h", "third_party/"]
    assert placeholders(argv) == {"debian_extra:pytorch=2.6.0+dfsg-7": ("pytorch", "2.6.0+dfsg-7")}
    details = {"debian_extra:pytorch=2.6.0+dfsg-7": "/cache/extra/pytorch_2.6.0+dfsg-7"}
    assert expand_placeholders(argv, details)[1] == "/cache/extra/pytorch_2.6.0+dfsg-7/debian/x.h"
    with pytest.raises(SourceError, match="did not fetch"):
        expand_placeholders(argv, {})


def _tar_with(tmp_path: Path, name: str, *, link: str | None = None) -> Path:
    path = tmp_path / "evil.tar"
    with tarfile.open(path, "w") as tar:
        info = tarfile.TarInfo(name)
        if link is not None:
            info.type = tarfile.SYMTYPE
            info.linkname = link
            tar.addfile(info)
        else:
            data = b"x"
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


@pytest.mark.parametrize(
    ("name", "link"),
    [("../escape.txt", None), ("top/link", "../../outside"), ("top/abs", "/etc/passwd")],
)
def test_safe_extract_refuses_path_traversal(tmp_path: Path, name: str, link: str | None) -> None:
    archive = _tar_with(tmp_path, name, link=link)
    dest = tmp_path / "dest"
    with pytest.raises(SourceError, match="outside its directory"):
        safe_extract(archive, dest)
    assert not (tmp_path / "escape.txt").exists()


def test_safe_extract_refuses_absolute_names(tmp_path: Path) -> None:
    archive = _tar_with(tmp_path, "/abs/escape.txt")
    with pytest.raises(SourceError, match="absolute name"):
        safe_extract(archive, tmp_path / "dest")
    assert not (tmp_path / "dest" / "abs").exists()
    assert not Path("/abs/escape.txt").exists()


def test_safe_extract_unpacks_a_normal_archive(tmp_path: Path) -> None:
    archive = _tar_with(tmp_path, "pkg-1.0/file.txt")
    safe_extract(archive, tmp_path / "dest")
    top = single_top_dir(tmp_path / "dest")
    assert top.name == "pkg-1.0"
    assert (top / "file.txt").read_bytes() == b"x"
