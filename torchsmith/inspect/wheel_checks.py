"""What makes a file not the torch wheel it claims to be, checked before its libraries are read:
members that escape the install directory or are symbolic links (pip writes a link member as a
small text file), and versions that disagree between the file name, ``METADATA`` and
``torch/version.py`` (pip refuses a wheel whose name and metadata disagree). The tags pip
matches against the machine are the file name's, so those are the ones reported."""

from __future__ import annotations

import stat
import zipfile
from pathlib import Path, PurePosixPath

from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from torchsmith.errors import InspectError

_SHOWN = 5
_REFUSE_HINT = "pip refuses or breaks on such a wheel; rebuild it, or re-download the original"


def _escapes(name: str) -> bool:
    path = PurePosixPath(name.replace("\\", "/"))
    return path.is_absolute() or ".." in path.parts or (len(name) > 1 and name[1] == ":")


def _is_link(info: zipfile.ZipInfo) -> bool:
    return stat.S_ISLNK(info.external_attr >> 16)


def check_members(zf: zipfile.ZipFile, wheel: Path) -> None:
    """Refuse members that escape the install directory, and symbolic-link members."""
    escaping = [i.filename for i in zf.infolist() if _escapes(i.filename)]
    links = [i.filename for i in zf.infolist() if _is_link(i)]
    for found, what in ((escaping, "escape the install directory"), (links, "are symlinks")):
        if found:
            shown = ", ".join(repr(n) for n in found[:_SHOWN])
            more = f" and {len(found) - _SHOWN} more" if len(found) > _SHOWN else ""
            raise InspectError(
                f"{wheel.name}: {len(found)} member(s) {what}: {shown}{more}", _REFUSE_HINT
            )


def file_tags(wheel: Path) -> tuple[str, ...] | None:
    """The tags of the wheel's file name (what pip matches), None for a name that is not a
    wheel's."""
    try:
        return tuple(str(tag) for tag in parse_wheel_filename(wheel.name)[3])
    except InvalidWheelFilename:
        return None


_OTHER_OS = {"macosx": "macOS", "win": "Windows", "ios": "iOS", "android": "Android"}


def check_platform(wheel: Path) -> None:
    """A wheel whose every platform tag names another OS is refused up front (its libraries
    are Mach-O or PE files, not the ELF this reader knows)."""
    tags = file_tags(wheel) or ()
    systems = {_system(tag.rsplit("-", 1)[-1]) for tag in tags}
    if tags and None not in systems:
        names = " / ".join(sorted(s for s in systems if s))
        raise InspectError(
            f"{wheel.name} is a {names} wheel; torchsmith reads Linux torch wheels (ELF)",
            "inspect the linux_x86_64 / manylinux / aarch64 wheel of the same release",
        )


def _system(platform: str) -> str | None:
    for prefix, name in _OTHER_OS.items():
        if platform.startswith(prefix):
            return name
    return None


def _version(text: str | None) -> Version | None:
    try:
        return Version(text) if text else None
    except InvalidVersion:
        return None


def _named(wheel: Path) -> Version | None:
    try:
        return parse_wheel_filename(wheel.name)[1]
    except InvalidWheelFilename:
        return None


def check_versions(wheel: Path, metadata: str | None, version_py: str | None) -> None:
    """The file name's version is METADATA's (pip's own check), and version.py's public part
    (``2.6.0`` of ``2.6.0+cu124``) agrees with both."""
    said = {
        "file name": _named(wheel),
        "METADATA": _version(metadata),
        "torch/version.py": _version(version_py),
    }
    named, meta = said["file name"], said["METADATA"]
    publics = {v.public for v in said.values() if v is not None}
    if len(publics) > 1 or (named is not None and meta is not None and named != meta):
        parts = ", ".join(f"{where} says {v}" for where, v in said.items() if v is not None)
        raise InspectError(
            f"{wheel.name} disagrees with itself about its version: {parts}", _REFUSE_HINT
        )
