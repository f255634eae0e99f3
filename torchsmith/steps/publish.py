"""Step "publish": artifacts into the output directory, atomically, with the manifest beside.

A file is written to a hidden temporary name in the output directory itself, fsynced, then
renamed over its final name (``os.replace``, atomic on POSIX), and the directory is fsynced: a
reader sees no file or the complete one, never half a wheel. Leftover temporaries of a killed
publish are removed on the next one.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from torchsmith.workspace import write_json_atomic

TMP_MARK = ".partial-"


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def remove_stale_temporaries(directory: Path) -> list[Path]:
    """Delete what killed publishes left behind (only our own ``.NAME.partial-PID`` files)."""
    stale = [p for p in directory.glob(f".*{TMP_MARK}*") if p.is_file()]
    for path in stale:
        path.unlink()
    return stale


def publish_file(src: Path, dest_dir: Path, name: str | None = None) -> Path:
    """Copy ``src`` to ``dest_dir/name`` atomically; the final path."""
    dest_dir.mkdir(parents=True, exist_ok=True)
    final = dest_dir / (name or src.name)
    tmp = dest_dir / f".{final.name}{TMP_MARK}{os.getpid()}"
    try:
        with src.open("rb") as reader, tmp.open("wb") as writer:
            shutil.copyfileobj(reader, writer, 1 << 20)
            writer.flush()
            os.fsync(writer.fileno())
        tmp.replace(final)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(dest_dir)
    return final


def publish_manifest(
    manifest: Mapping[str, Any], dest_dirs: Sequence[Path], name: str
) -> list[Path]:
    """Write the manifest (atomically) into each directory; the paths written."""
    paths = []
    for directory in dest_dirs:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / name
        write_json_atomic(path, dict(manifest))
        _fsync_dir(directory)
        paths.append(path)
    return paths
