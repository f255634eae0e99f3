"""Safe extraction of source archives, on every Python torchsmith supports.

torchsmith checks every member itself before anything is written, and writes every file itself:
only regular files, directories and relative symlinks whose target stays inside the tree without
passing through another symlink; no hard links, devices or fifos; no empty, duplicate, absolute or
``..`` names; bounded name length, member count and total size; modes 0o755/0o644. Symlinks are
created last, so no write ever goes through a link.

tarfile's ``data`` filter (Python >= 3.10.12 / 3.11.4) runs as a second opinion where this
Python has it, but is never relied on: it has been bypassed repeatedly (CVE-2025-4517 and
CVE-2025-4330/-4138, python/cpython#135034, fixed in 3.10.18 / 3.11.13 / 3.12.11 / 3.13.4; later
cpython#149486, #151558, #157190), and Debian 12's Python 3.11.2 does not have it at all.
"""

from __future__ import annotations

import os
import shutil
import tarfile
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from torchsmith.errors import SourceError

Kind = Literal["dir", "file", "link"]
_KINDS: dict[bytes, Kind] = {
    tarfile.DIRTYPE: "dir",
    tarfile.REGTYPE: "file",
    tarfile.AREGTYPE: "file",
    tarfile.SYMTYPE: "link",
}
_REFUSED_TYPES = {
    tarfile.LNKTYPE: "a hard link",
    tarfile.CHRTYPE: "a character device",
    tarfile.BLKTYPE: "a block device",
    tarfile.FIFOTYPE: "a fifo",
}
_OUTSIDE = "outside its directory"
_MAX_MTIME = 2**32 - 1


@dataclass(frozen=True)
class Limits:
    """Bounds against archive bombs. PyTorch 2.x with submodules: ~40k members, ~1.5 GB;
    Debian's 1.13.1 orig: 12,004 members, 109 MB, longest name 143 characters."""

    members: int = 1_000_000
    total_bytes: int = 32 << 30
    name_bytes: int = 1024


@dataclass(frozen=True)
class Entry:
    """A checked member: its normalised relative name and what to create."""

    name: str
    kind: Kind
    member: tarfile.TarInfo


class RefusedError(Exception):
    """A member that may not be unpacked (turned into a SourceError by :func:`safe_extract`)."""


def normalise(raw: str, limits: Limits) -> str:
    """``raw`` as a clean relative name ('' for the archive's own root ``./``)."""
    if "\0" in raw or raw.startswith("/"):
        raise RefusedError(f"{raw!r} is an absolute name: it would write {_OUTSIDE}")
    if len(raw.encode("utf-8", "surrogateescape")) > limits.name_bytes:
        raise RefusedError(f"a name is longer than {limits.name_bytes} bytes ({raw[:60]!r}…)")
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise RefusedError(f"{raw!r} contains '..': it would write {_OUTSIDE}")
    return "/".join(parts)


def _kind(member: tarfile.TarInfo) -> Kind:
    kind = _KINDS.get(member.type)
    if kind is None:
        what = _REFUSED_TYPES.get(member.type, f"of tar type {member.type!r}")
        raise RefusedError(f"{member.name!r} is {what}: only files, directories, symlinks unpack")
    return kind


def _second_opinion(member: tarfile.TarInfo, dest: Path) -> None:
    """tarfile's own ``data`` filter, where this Python has it (never the only check)."""
    check = getattr(tarfile, "data_filter", None)
    if check is None:
        return
    try:
        check(member, str(dest))
    except tarfile.FilterError as exc:
        raise RefusedError(f"tarfile's data filter: {exc}") from exc


def read_entries(tar: tarfile.TarFile, limits: Limits) -> list[Entry]:
    """Every member, checked one by one (the limits stop a bomb before it is read through)."""
    entries: dict[str, Entry] = {}
    total = 0
    for count, member in enumerate(_members(tar), start=1):
        if count > limits.members:
            raise RefusedError(f"more than {limits.members} members")
        total += max(member.size, 0)
        if total > limits.total_bytes:
            raise RefusedError(f"more than {limits.total_bytes} bytes of content")
        entry = _entry(member, limits)
        if entry is None:
            continue
        if entry.name in entries:
            raise RefusedError(f"{entry.name!r} appears twice")
        entries[entry.name] = entry
    return list(entries.values())


def _members(tar: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    while (member := tar.next()) is not None:
        yield member


def _entry(member: tarfile.TarInfo, limits: Limits) -> Entry | None:
    kind = _kind(member)
    name = normalise(member.name, limits)
    if not name:
        if kind != "dir":
            raise RefusedError(f"a {kind} member has an empty name")
        return None
    return Entry(name, kind, member)


def _prefixes(name: str) -> Iterator[str]:
    parts = name.split("/")
    for i in range(1, len(parts)):
        yield "/".join(parts[:i])


def link_target(name: str, target: str, links: Collection[str], limits: Limits) -> str:
    """Where the symlink ``name -> target`` points, as a tree-relative name; refuses a target
    that is absolute, empty, too long, leaves the tree or passes through another symlink."""
    if not target or target.startswith("/") or "\0" in target:
        raise RefusedError(f"symlink {name!r} -> {target!r} points {_OUTSIDE}")
    if len(target.encode("utf-8", "surrogateescape")) > limits.name_bytes:
        raise RefusedError(f"symlink {name!r} has a target longer than {limits.name_bytes} bytes")
    parts = name.split("/")[:-1]
    steps = [s for s in target.split("/") if s not in ("", ".")]
    for i, step in enumerate(steps):
        if step == "..":
            if not parts:
                raise RefusedError(f"symlink {name!r} -> {target!r} points {_OUTSIDE}")
            parts.pop()
            continue
        parts.append(step)
        if i < len(steps) - 1 and "/".join(parts) in links:
            raise RefusedError(f"symlink {name!r} -> {target!r} passes through another symlink")
    return "/".join(parts)


def check_tree(entries: list[Entry], limits: Limits, only: Collection[str] | None) -> None:
    """Nothing lies below a file or a symlink; every symlink stays inside the tree (and inside
    its own top-level entry when ``only`` names the allowed top-level entries)."""
    leaves = {e.name for e in entries if e.kind != "dir"}
    links = {e.name for e in entries if e.kind == "link"}
    for entry in entries:
        top = entry.name.split("/", 1)[0]
        if only is not None and top not in only:
            raise RefusedError(f"{entry.name!r} is outside {', '.join(sorted(only))}")
        if any(p in leaves for p in _prefixes(entry.name)):
            raise RefusedError(f"{entry.name!r} lies below a file or a symlink")
        if entry.kind == "link":
            _check_link(entry, links, limits, only, top)


def _check_link(
    entry: Entry, links: Collection[str], limits: Limits, only: Collection[str] | None, top: str
) -> None:
    resolved = link_target(entry.name, entry.member.linkname, links, limits)
    if only is not None and resolved.split("/", 1)[0] != top:
        raise RefusedError(f"symlink {entry.name!r} -> {entry.member.linkname!r} leaves {top}/")


def _mode(member: tarfile.TarInfo) -> int:
    return 0o755 if member.mode & 0o111 else 0o644


def _write_file(tar: tarfile.TarFile, entry: Entry, dest: Path) -> None:
    path = dest / entry.name
    path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    source = tar.extractfile(entry.member)
    if source is None:  # pragma: no cover - a regular member always has a file object
        raise RefusedError(f"{entry.name!r} has no data")
    with source, os.fdopen(os.open(path, flags, _mode(entry.member)), "wb") as target:
        shutil.copyfileobj(source, target, 1 << 20)
        mtime = min(max(int(entry.member.mtime), 0), _MAX_MTIME)
        target.flush()
        os.utime(target.fileno(), (mtime, mtime))


def _make(tar: tarfile.TarFile, entries: list[Entry], dest: Path) -> None:
    """Directories and files in archive order (one forward pass), symlinks last."""
    for entry in entries:
        if entry.kind == "dir":
            (dest / entry.name).mkdir(mode=0o755, parents=True, exist_ok=True)
        elif entry.kind == "file":
            _write_file(tar, entry, dest)
    for entry in entries:
        if entry.kind == "link":
            path = dest / entry.name
            path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
            path.symlink_to(entry.member.linkname)


def _empty_dest(dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    if dest.is_symlink() or any(dest.iterdir()):
        raise SourceError(
            f"refusing to unpack into {dest}: it is not an empty directory",
            "this is a bug in torchsmith (archives are unpacked into fresh directories); report it",
        )


def safe_extract(
    archive: Path,
    dest: Path,
    *,
    only: Collection[str] | None = None,
    limits: Limits = Limits(),
) -> None:
    """Check every member of ``archive`` (any compression tarfile reads), then unpack it into the
    empty directory ``dest``. ``only``: the top-level names allowed (symlinks may not leave the
    top-level entry they are in). Nothing is written when a member is refused."""
    _empty_dest(dest)
    try:
        with _open(archive) as tar:
            entries = read_entries(tar, limits)
            check_tree(entries, limits, only)
            for entry in entries:
                _second_opinion(entry.member, dest)
            _make(tar, entries, dest)
    except RefusedError as exc:
        raise SourceError(
            f"refused to unpack {archive}: {exc}",
            "the archive is malformed or malicious; nothing of it was unpacked",
        ) from exc
    except (tarfile.TarError, EOFError, OSError, UnicodeError) as exc:
        raise SourceError(f"cannot unpack {archive}: {exc}", "fetch the archive again") from exc


def _open(archive: Path) -> tarfile.TarFile:
    try:
        return tarfile.open(archive)
    except tarfile.ReadError as exc:
        raise SourceError(
            f"{archive} is not a tar archive (plain, gzip, bzip2 or xz)",
            "give a .tar, .tar.gz, .tar.bz2 or .tar.xz file (`torchsmith source bundle` writes "
            "a .tar.gz; a zip is not supported)",
        ) from exc


def single_top_dir(dest: Path, ignore: frozenset[str] = frozenset()) -> Path:
    """The one top-level directory of an unpacked archive, or ``dest`` itself if there are many."""
    entries = [p for p in dest.iterdir() if p.name not in ignore]
    if len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink():
        return entries[0]
    return dest
