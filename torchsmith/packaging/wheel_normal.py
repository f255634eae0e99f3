"""One normal form for every wheel torchsmith publishes, so the same files give the same bytes
whatever the clock, the umask or the order a tool wrote them in (issue 29).

The wheel is rewritten (atomically, in place) with:

* members in a fixed order: the package's files sorted by name, then the ``.dist-info`` files
  sorted, ``RECORD`` last (PEP 427: "the .dist-info directory ... placed at the end of the
  archive"; https://packaging.python.org/en/latest/specifications/binary-distribution-format/);
* every member stamped with ``SOURCE_DATE_EPOCH`` (never before 1980-01-01, the earliest a zip
  entry holds), made on Unix, no extra fields, no comments;
* modes reduced to ``0644``, or ``0755`` for a file any execute bit was set on (directories
  ``0755``);
* ``RECORD``'s lines sorted by path, its own line last; the other members' bytes are unchanged,
  so their hashes in ``RECORD`` stay right;
* one compression (deflate, zlib's default level) for every member.

Objects and libraries inside the wheel must already be identical (that is the build's part:
planner/reproducible.py); this removes what the packaging tools add on top (file times,
orders, modes)."""

from __future__ import annotations

import shutil
import time
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO

from torchsmith.atomic import write_with
from torchsmith.errors import BuildError

ZIP_EPOCH = 315532800  # 1980-01-01T00:00:00Z
_ZIP64 = (1 << 31) - (1 << 20)  # members near 2 GiB (libtorch_cuda) need zip64 headers
_CHUNK = 1 << 20
REGULAR, EXECUTABLE, DIRECTORY = 0o100644, 0o100755, 0o40755
_MSDOS_DIR = 0x10


def is_record(name: str) -> bool:
    return name.endswith(".dist-info/RECORD") and name.count("/") == 1


def sort_key(name: str) -> tuple[int, str]:
    """The package's files first, then its .dist-info, RECORD last."""
    top = name.split("/", 1)[0]
    if is_record(name):
        return (2, name)
    return (1 if top.endswith(".dist-info") else 0, name)


def member_order(names: Iterable[str]) -> list[str]:
    return sorted(names, key=sort_key)


def zip_time(epoch: int) -> tuple[int, int, int, int, int, int]:
    """``epoch`` as a zip entry's date and time (UTC), never before 1980."""
    year, month, day, hour, minute, second = time.gmtime(max(epoch, ZIP_EPOCH))[:6]
    return (year, month, day, hour, minute, second)


def fixed_mode(info: zipfile.ZipInfo) -> int:
    """The ``external_attr`` of ``info`` in normal form."""
    if info.is_dir():
        return (DIRECTORY << 16) | _MSDOS_DIR
    mode = info.external_attr >> 16
    return (EXECUTABLE if mode & 0o111 else REGULAR) << 16


def sorted_record(text: str) -> str:
    """RECORD's lines sorted by path, RECORD's own line (no hash) last."""
    lines = [line for line in text.splitlines() if line.strip()]
    own = [line for line in lines if is_record(line.rsplit(",", 2)[0])]
    rest = sorted((line for line in lines if line not in own), key=lambda x: x.rsplit(",", 2)[0])
    return "\n".join([*rest, *own]) + "\n"


def normal_info(info: zipfile.ZipInfo, epoch: int) -> zipfile.ZipInfo:
    fresh = zipfile.ZipInfo(info.filename, zip_time(epoch))
    fresh.create_system = 3  # Unix: the mode bits above mean what they say
    fresh.external_attr = fixed_mode(info)
    fresh.compress_type = zipfile.ZIP_DEFLATED
    return fresh


def _copy(src: zipfile.ZipFile, dst: zipfile.ZipFile, info: zipfile.ZipInfo, epoch: int) -> None:
    fresh = normal_info(info, epoch)
    if is_record(info.filename):
        dst.writestr(fresh, sorted_record(src.read(info).decode()))
        return
    with src.open(info) as fh, dst.open(fresh, "w", force_zip64=info.file_size > _ZIP64) as out:
        shutil.copyfileobj(fh, out, _CHUNK)


def _write(wheel: zipfile.ZipFile, epoch: int) -> Callable[[IO[bytes]], None]:
    infos = {info.filename: info for info in wheel.infolist()}

    def write(fh: IO[bytes]) -> None:
        with zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED) as dst:
            for name in member_order(infos):
                _copy(wheel, dst, infos[name], epoch)

    return write


def normalise_wheel(path: Path, epoch: int) -> None:
    """Rewrite ``path`` in the normal form, its times ``epoch`` (``SOURCE_DATE_EPOCH``)."""
    with zipfile.ZipFile(path) as wheel:
        names = [info.filename for info in wheel.infolist()]
        if len(set(names)) != len(names):
            raise BuildError(
                f"{path.name}: a member name appears twice; a wheel holds each file once",
                "read the package and repair logs: the tool that wrote the wheel is at fault",
            )
        write_with(path, _write(wheel, epoch))


def stamp_differences(a: Path, b: Path) -> list[str]:
    """What keeps two wheels from being the same bytes, member by member: each member whose
    content (CRC), time or mode differs, or that only one of them holds."""
    with zipfile.ZipFile(a) as za, zipfile.ZipFile(b) as zb:
        one, two = ({i.filename: (i.CRC, i.date_time, i.external_attr) for i in z.infolist()}
                    for z in (za, zb))  # fmt: skip
    names = sorted(set(one) | set(two))
    return [f"{n}: {one.get(n)} != {two.get(n)}" for n in names if one.get(n) != two.get(n)]
