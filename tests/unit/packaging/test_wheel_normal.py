"""The one normal form of a published wheel (torchsmith/packaging/wheel_normal.py, issue 29): the
same files written in another order, at another time, with other modes give the same bytes."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from torchsmith.errors import BuildError
from torchsmith.packaging.wheel_normal import (
    ZIP_EPOCH,
    member_order,
    normalise_wheel,
    sorted_record,
    zip_time,
)

EPOCH = 1738108800  # 2025-01-29, torch 2.6.0's release date
RECORD = "pkg-1.0.dist-info/RECORD"
FILES = {
    "pkg/__init__.py": (b"x = 1\n", 0o644),
    "pkg/_C.so": (b"\x7fELF" + bytes(range(256)) * 40, 0o775),
    "pkg.libs/libjpeg-1a2b3c4d.so.62": (b"\x7fELFjpeg", 0o600),
    "pkg-1.0.dist-info/METADATA": (b"Metadata-Version: 2.1\nName: pkg\n", 0o664),
    "pkg-1.0.dist-info/WHEEL": (b"Wheel-Version: 1.0\n", 0o644),
}


def record_text(order: list[str]) -> bytes:
    lines = [f"{name},sha256=x,{len(FILES[name][0])}" for name in order]
    return ("\n".join([*lines, f"{RECORD},,"]) + "\n").encode()


def write_wheel(path: Path, order: list[str], when: tuple[int, ...], level: int) -> Path:
    """A wheel as a packaging tool might write it: its own order, time, modes, compression."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as zf:
        for name in order:
            info = zipfile.ZipInfo(name, when)  # type: ignore[arg-type]
            data, mode = FILES[name]
            info.external_attr = mode << 16
            zf.writestr(info, data)
        zf.writestr(zipfile.ZipInfo(RECORD, when), record_text(order))  # type: ignore[arg-type]
    return path


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_two_writes_of_the_same_files_become_the_same_bytes(tmp_path: Path) -> None:
    names = list(FILES)
    a = write_wheel(tmp_path / "a.whl", names, (2026, 11, 27, 8, 30, 2), 9)
    b = write_wheel(tmp_path / "b.whl", names[::-1], (2024, 1, 2, 3, 4, 6), 1)
    assert sha(a) != sha(b)
    for wheel in (a, b):
        normalise_wheel(wheel, EPOCH)
    assert sha(a) == sha(b)
    normalise_wheel(a, EPOCH)
    assert sha(a) == sha(b)  # idempotent


def test_the_normal_form(tmp_path: Path) -> None:
    wheel = write_wheel(tmp_path / "a.whl", list(FILES)[::-1], (2026, 11, 27, 8, 30, 2), 9)
    normalise_wheel(wheel, EPOCH)
    with zipfile.ZipFile(wheel) as zf:
        infos = zf.infolist()
        assert [i.filename for i in infos] == [
            "pkg.libs/libjpeg-1a2b3c4d.so.62",
            "pkg/_C.so",
            "pkg/__init__.py",
            "pkg-1.0.dist-info/METADATA",
            "pkg-1.0.dist-info/WHEEL",
            RECORD,
        ]
        assert {i.date_time for i in infos} == {(2025, 1, 29, 0, 0, 0)}
        modes = {i.filename: i.external_attr >> 16 for i in infos}
        assert modes["pkg/_C.so"] == 0o100755 and modes["pkg/__init__.py"] == 0o100644
        assert modes["pkg.libs/libjpeg-1a2b3c4d.so.62"] == 0o100644
        assert {i.compress_type for i in infos} == {zipfile.ZIP_DEFLATED}
        record = zf.read(RECORD).decode().splitlines()
        assert record[-1] == f"{RECORD},,"
        assert record[:-1] == sorted(record[:-1])
        assert zf.read("pkg/_C.so") == FILES["pkg/_C.so"][0]  # contents untouched


def test_times_before_1980_are_the_zip_floor() -> None:
    assert zip_time(0) == zip_time(ZIP_EPOCH) == (1980, 1, 1, 0, 0, 0)
    assert zip_time(EPOCH) == (2025, 1, 29, 0, 0, 0)


def test_member_order_puts_dist_info_and_record_last() -> None:
    names = [RECORD, "z/a.py", "pkg-1.0.dist-info/WHEEL", "a.libs/x.so", "pkg/sub/RECORD"]
    assert member_order(names) == [
        "a.libs/x.so",
        "pkg/sub/RECORD",
        "z/a.py",
        "pkg-1.0.dist-info/WHEEL",
        RECORD,
    ]


def test_record_lines_sorted_its_own_last() -> None:
    text = f"b.py,sha256=1,2\n{RECORD},,\na.py,sha256=3,4\n\n"
    assert sorted_record(text) == f"a.py,sha256=3,4\nb.py,sha256=1,2\n{RECORD},,\n"


def test_a_member_twice_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "dup.whl"
    with zipfile.ZipFile(path, "w") as zf, pytest.warns(UserWarning, match="Duplicate name"):
        zf.writestr("pkg/a.py", b"1")
        zf.writestr("pkg/a.py", b"2")
    with pytest.raises(BuildError, match="appears twice"):
        normalise_wheel(path, EPOCH)
