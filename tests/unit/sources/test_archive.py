"""safe_extract checks every member itself (no subprocess): the CVE-2025-4517 layout, each
refused member kind, bombs, and the same result with and without tarfile's ``data`` filter."""

from __future__ import annotations

import stat
import tarfile
from pathlib import Path

import pytest

from tests.unit.sources.archive_maker import ArchiveMaker, cve_2025_4517
from torchsmith.errors import SourceError
from torchsmith.sources.archive import Limits, safe_extract


@pytest.fixture(params=["with data filter", "without data filter"])
def filter_state(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run each test twice: as on a patched Python and as on Debian 12's 3.11.2 (no filter)."""
    if request.param == "without data filter":
        monkeypatch.delattr(tarfile, "data_filter", raising=False)
    return str(request.param)


def _outer(tmp_path: Path) -> tuple[Path, Path]:
    outer = tmp_path / "victim"
    dest = outer / "dest"
    dest.mkdir(parents=True)
    (outer / "flag").write_text("original")
    return outer, dest


@pytest.mark.parametrize("limits", [Limits(), Limits(name_bytes=1 << 20)], ids=["default", "long"])
def test_the_cve_2025_4517_layout_cannot_escape(
    tmp_path: Path, limits: Limits, filter_state: str
) -> None:
    outer, dest = _outer(tmp_path)
    archive = cve_2025_4517(dest).write(tmp_path / "cve.tar")
    with pytest.raises(SourceError, match="refused to unpack"):
        safe_extract(archive, dest, limits=limits)
    assert (outer / "flag").read_text() == "original"
    assert not (outer / "newfile").exists()
    assert sorted(outer.iterdir()) == [dest, outer / "flag"]
    assert list(dest.iterdir()) == []  # checked before anything is written


def test_the_cve_layout_without_its_hard_link_is_refused_by_the_tree_check(
    tmp_path: Path, filter_state: str
) -> None:
    outer, dest = _outer(tmp_path)
    archive = cve_2025_4517(dest, hardlink=False).write(tmp_path / "cve.tar")
    with pytest.raises(SourceError, match="lies below a file or a symlink"):
        safe_extract(archive, dest, limits=Limits(name_bytes=1 << 20))
    assert not (outer / "newfile").exists()
    assert list(dest.iterdir()) == []


@pytest.mark.parametrize(
    ("arc", "reason"),
    [
        (ArchiveMaker().add("../escape.txt", content=b"x"), "contains '..'"),
        (ArchiveMaker().add("a/../../escape.txt", content=b"x"), "contains '..'"),
        (ArchiveMaker().add("/abs/escape.txt", content=b"x"), "absolute name"),
        (ArchiveMaker().add("top/link", symlink_to="../../outside"), "outside its directory"),
        (ArchiveMaker().add("top/abs", symlink_to="/etc/passwd"), "outside its directory"),
        (ArchiveMaker().add("empty-target", symlink_to=""), "outside its directory"),
        (ArchiveMaker().add("x", content=b"1").add("hl", hardlink_to="x"), "a hard link"),
        (ArchiveMaker().add("hl", hardlink_to="/etc/passwd"), "a hard link"),
        (ArchiveMaker().add("dev", kind=tarfile.CHRTYPE), "a character device"),
        (ArchiveMaker().add("blk", kind=tarfile.BLKTYPE), "a block device"),
        (ArchiveMaker().add("fifo", kind=tarfile.FIFOTYPE), "a fifo"),
        (ArchiveMaker().add("./", symlink_to="x"), "empty name"),
        (ArchiveMaker().add("a", content=b"1").add("./a", content=b"2"), "appears twice"),
        (ArchiveMaker().add("d").add("d/"), "appears twice"),
        (ArchiveMaker().add("f", content=b"1").add("f/g", content=b"2"), "below a file"),
        (ArchiveMaker().add("l", symlink_to="d").add("l/g", content=b"2"), "below a file or a sym"),
        (
            ArchiveMaker()
            .add("d/sub")
            .add("d/up", symlink_to="..")
            .add("x", symlink_to="d/up/../.."),
            "passes through another symlink",
        ),
        (ArchiveMaker().add("n" * 1100, content=b"x"), "longer than 1024 bytes"),
        (ArchiveMaker().add("l", symlink_to="a/" * 600), "longer than 1024 bytes"),
    ],
)
def test_each_refused_member_kind(
    tmp_path: Path, arc: ArchiveMaker, reason: str, filter_state: str
) -> None:
    outer, dest = _outer(tmp_path)
    with pytest.raises(SourceError, match="refused to unpack") as info:
        safe_extract(arc.write(tmp_path / "evil.tar"), dest)
    assert reason in info.value.message
    assert list(dest.iterdir()) == []
    assert sorted(p.name for p in outer.iterdir()) == ["dest", "flag"]


def test_member_count_and_total_size_are_bounded(tmp_path: Path) -> None:
    many = ArchiveMaker()
    for i in range(11):
        many.add(f"f{i}", content=b"")
    with pytest.raises(SourceError, match="more than 10 members"):
        safe_extract(many.write(tmp_path / "many.tar"), tmp_path / "a", limits=Limits(members=10))
    big = ArchiveMaker().add("a", content=b"x" * 600).add("b", content=b"x" * 600)
    with pytest.raises(SourceError, match="more than 1000 bytes"):
        safe_extract(big.write(tmp_path / "big.tar"), tmp_path / "b", limits=Limits(1000, 1000))


def test_a_normal_tree_unpacks_with_sanitised_modes_and_links_last(
    tmp_path: Path, filter_state: str
) -> None:
    arc = (
        ArchiveMaker()
        .add("./")
        .add("pkg-1.0/link-to-dir", symlink_to="sub/")  # before its target exists
        .add("pkg-1.0/sub/tool", content=b"#!/bin/sh\n", mode=0o6777)
        .add("pkg-1.0/sub/data.txt", content=b"data", mode=0o666)
        .add("pkg-1.0/docs", symlink_to="sub/../sub/data.txt")
        .add("pkg-1.0/empty", mode=0o777)
        .add("pkg-1.0/deep/file", content=b"implicit parent")
    )
    dest = tmp_path / "dest"
    safe_extract(arc.write(tmp_path / "ok.tar.gz", "w:gz"), dest)
    top = dest / "pkg-1.0"
    assert stat.S_IMODE((top / "sub" / "tool").stat().st_mode) & 0o7022 == 0
    assert stat.S_IMODE((top / "sub" / "tool").stat().st_mode) & 0o100
    assert stat.S_IMODE((top / "sub" / "data.txt").stat().st_mode) & 0o133 == 0
    assert (top / "link-to-dir" / "data.txt").read_bytes() == b"data"
    assert (top / "docs").read_bytes() == b"data"
    assert (top / "empty").is_dir()
    assert (top / "deep" / "file").read_bytes() == b"implicit parent"


def test_only_keeps_members_and_links_inside_the_declared_top_entries(tmp_path: Path) -> None:
    outside = ArchiveMaker().add("MANIFEST", content=b"{}").add("payload.py", content=b"x")
    with pytest.raises(SourceError, match=r"'payload\.py' is outside MANIFEST, source"):
        safe_extract(outside.write(tmp_path / "a.tar"), tmp_path / "a", only={"MANIFEST", "source"})
    leaving = ArchiveMaker().add("source/setup.py", symlink_to="../MANIFEST")
    with pytest.raises(SourceError, match="leaves source/"):
        safe_extract(leaving.write(tmp_path / "b.tar"), tmp_path / "b", only={"MANIFEST", "source"})
    inside = ArchiveMaker().add("source/a", content=b"1").add("source/b", symlink_to="a")
    safe_extract(inside.write(tmp_path / "c.tar"), tmp_path / "c", only={"MANIFEST", "source"})
    assert (tmp_path / "c" / "source" / "b").read_bytes() == b"1"


def test_a_non_empty_destination_is_refused(tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "marker.json").write_text("{}")
    archive = ArchiveMaker().add("marker.json", content=b"replaced").write(tmp_path / "a.tar")
    with pytest.raises(SourceError, match="not an empty directory"):
        safe_extract(archive, dest)
    assert (dest / "marker.json").read_text() == "{}"


def test_a_truncated_archive_is_a_clean_error(tmp_path: Path) -> None:
    archive = ArchiveMaker().add("f", content=b"x" * 4096).write(tmp_path / "a.tar")
    archive.write_bytes(archive.read_bytes()[:1024])
    with pytest.raises(SourceError, match="cannot unpack"):
        safe_extract(archive, tmp_path / "dest")


def test_a_zip_or_random_bytes_name_the_real_problem(tmp_path: Path, filter_state: str) -> None:
    """Trial §3 #3: on Debian's Python a zip given as bundle: was reported as a missing filter."""
    import zipfile

    with zipfile.ZipFile(tmp_path / "plain.zip", "w") as zf:
        zf.writestr("a.txt", "x")
    (tmp_path / "random.bin").write_bytes(bytes(range(256)) * 20)
    for name in ("plain.zip", "random.bin"):
        with pytest.raises(SourceError, match="is not a tar archive") as info:
            safe_extract(tmp_path / name, tmp_path / f"dest-{name}")
        assert "zip is not supported" in info.value.hint
