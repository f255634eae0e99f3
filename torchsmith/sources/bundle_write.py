"""Write a bundle reproducibly: the same tree always gives the same bytes (and sha256).

Members are sorted, every member has the same mtime, uid/gid 0 with no user or group names and
mode 0o755 (directories, executables) or 0o644; hard-linked files are stored as plain files;
the gzip header carries no file name and no time.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from torchsmith import atomic
from torchsmith.errors import UsageError
from torchsmith.hashing import sha256_file
from torchsmith.proc import LineCallback
from torchsmith.sources.base import SourceTree
from torchsmith.sources.bundle_format import MANIFEST, SOURCE, bundle_manifest

# 1980-01-01T00:00:00Z, the earliest time a zip (wheel) can hold; any constant would do.
BUNDLE_MTIME = 315532800


def _info(name: str, kind: bytes, mode: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.mtime = kind, mode, BUNDLE_MTIME
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def _add(tar: tarfile.TarFile, root: Path, rel: str, entry: str) -> None:
    name = f"{SOURCE}/{rel}"
    if entry == "dir":
        tar.addfile(_info(name, tarfile.DIRTYPE, 0o755))
        return
    if entry.startswith("link:"):
        info = _info(name, tarfile.SYMTYPE, 0o777)
        info.linkname = entry.removeprefix("link:")
        tar.addfile(info)
        return
    path = root / rel
    mode = 0o755 if path.stat().st_mode & 0o111 else 0o644
    info = _info(name, tarfile.REGTYPE, mode)
    with path.open("rb") as fh:
        info.size = os.fstat(fh.fileno()).st_size
        tar.addfile(info, fh)


def _write(fh: Any, manifest: dict[str, Any], root: Path) -> None:
    with (
        gzip.GzipFile(filename="", mode="wb", fileobj=fh, compresslevel=6, mtime=0) as gz,
        tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        data = json.dumps(manifest, indent=1, sort_keys=True).encode()
        info = _info(MANIFEST, tarfile.REGTYPE, 0o644)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
        for rel in sorted(manifest["files"]):
            _add(tar, root, rel, manifest["files"][rel])


def write_bundle(tree: SourceTree, out: Path, on_line: LineCallback | None = None) -> str:
    """Write ``out`` (a .tar.gz) atomically; returns its sha256."""
    manifest = bundle_manifest(tree)
    if on_line is not None:
        on_line(f"bundle: {len(manifest['files'])} files from {tree.root}")
    atomic.write_with(out, lambda fh: _write(fh, manifest, tree.root), mode=0o644)
    return sha256_file(out)


def check_output(out: Path) -> Path:
    """``source bundle -o FILE``: a file in a directory this user can write, checked before
    anything is fetched (a directory, /proc/... or a missing parent was exit 70 at the end)."""
    hint = "give -o a file name in a directory you can write, e.g. -o torch-src.tar"
    if out.is_dir():
        raise UsageError(f"-o {out} is a directory, not a bundle file", hint)
    try:
        with tempfile.TemporaryFile(dir=out.parent):
            pass
    except OSError as exc:
        why = exc.strerror or str(exc)
        raise UsageError(f"-o {out}: cannot write in {out.parent} ({why})", hint) from exc
    return out
