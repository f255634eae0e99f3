"""Directories torchsmith owns: made by it, marked with a small info file, and the only ones it
ever deletes or overwrites. A directory without the marker is refused with a clear error."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from torchsmith.errors import SourceError
from torchsmith.workspace import write_json_atomic

MARKER = "torchsmith-source.json"


def is_owned(path: Path) -> bool:
    return (path / MARKER).is_file()


def ensure_owned(path: Path) -> None:
    """Raise unless ``path`` is missing or a directory torchsmith created."""
    if path.exists() and not is_owned(path):
        raise SourceError(
            f"{path} exists but torchsmith did not create it (no {MARKER} inside)",
            "torchsmith never modifies or deletes such a directory: move it away or choose "
            "another cache root",
        )


def claim(path: Path, info: Mapping[str, Any]) -> Path:
    """Make ``path`` (marked as torchsmith's) or check that it already is torchsmith's."""
    ensure_owned(path)
    if not path.exists():
        path.mkdir(parents=True)
        write_json_atomic(path / MARKER, {"created_by": "torchsmith", **info})
    return path


def read_info(path: Path) -> dict[str, Any]:
    data = json.loads((path / MARKER).read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def update_info(path: Path, **values: Any) -> dict[str, Any]:
    """Merge ``values`` into the info file of an owned directory."""
    ensure_owned(path)
    data = {**read_info(path), **values}
    write_json_atomic(path / MARKER, data)
    return data


def remove_owned(path: Path) -> None:
    """Delete an owned directory; refuse one torchsmith did not create."""
    if not path.exists():
        return
    if not is_owned(path):
        raise SourceError(
            f"refusing to delete {path}: torchsmith did not create it",
            "remove it yourself if it is safe to do so",
        )
    shutil.rmtree(path)


def staging_dir(parent: Path, name: str) -> Path:
    """A fresh owned scratch directory next to where ``name`` will go, for atomic renames."""
    stage = parent / f".{name}.partial-{os.getpid()}"
    for stale in parent.glob(f".{name}.partial-*"):
        remove_owned(stale)
    return claim(stage, {"staging_for": name})


def publish(stage: Path, final: Path) -> Path:
    """Atomically move a finished staging directory to ``final`` (which must not exist)."""
    if final.exists():
        remove_owned(final)
    stage.replace(final)
    return final
