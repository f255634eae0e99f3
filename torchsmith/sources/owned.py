"""Directories torchsmith owns: made by it, marked with a small info file, and the only ones it
ever deletes or overwrites. A directory without the marker is refused with a clear error.

A cached source tree (``<entry>/tree/src``) is never edited by a build (fixes go to each
build's own copy), so its listing (path, size, mtime of every file; a stat walk, no hashing:
about 0.3 s for 50 000 files) is recorded when it is made and compared when it is reused: a file
edited, added or removed since is named, not built from.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from torchsmith import atomic, lock
from torchsmith.errors import SourceError
from torchsmith.redact import redact_data

MARKER = "torchsmith-source.json"
LISTING = "torchsmith-listing.json"
SHOWN_CHANGES = 5
LOCK_WAIT_S = 600.0  # another run's download or unpack of the same entry: wait for it


def _write_info(path: Path, info: Mapping[str, Any]) -> None:
    """The marker JSON, URL credentials redacted (it records where a tree came from)."""
    atomic.write_json(path / MARKER, redact_data(dict(info)))


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
    if path.exists():
        return path
    stage = atomic.temp_dir(path)  # made complete with its marker, then renamed into place:
    _write_info(stage, {"created_by": "torchsmith", **info})  # never seen without the marker
    try:
        stage.rename(path)
    except OSError:  # another run claimed it first (EEXIST/ENOTEMPTY): fine if it is ours
        shutil.rmtree(stage)
        ensure_owned(path)
    return path


def locked(
    path: Path,
    what: str,
    say: Callable[[str], None] | None = None,
    wait_s: float = LOCK_WAIT_S,
) -> lock.DirLock:
    """Hold ``path``'s lock (``path/.lock``) while filling or replacing what is inside it: one
    writer per cache entry; another run waits (saying so) up to ``wait_s``, then is refused
    with the holder's pid."""
    return lock.acquire(path, what, wait_s, say)


def read_info(path: Path) -> dict[str, Any]:
    data = json.loads((path / MARKER).read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def update_info(path: Path, **values: Any) -> dict[str, Any]:
    """Merge ``values`` into the info file of an owned directory."""
    ensure_owned(path)
    data = {**read_info(path), **values}
    _write_info(path, data)
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


def remove_stale_stages(final: Path) -> list[Path]:
    """Delete the staging directories of ``final`` left by runs that died (pid not running);
    a live run's stage, and anything we did not mark, stay."""
    removed = []
    for stale in atomic.stale_partials(final):
        if stale.is_dir() and not stale.is_symlink() and is_owned(stale):
            shutil.rmtree(stale)
            removed.append(stale)
    return removed


def staging_dir(parent: Path, name: str) -> Path:
    """A new owned scratch directory (unique to this call, made with ``mkdtemp``) next to
    where ``name`` will go, for an atomic rename; stale stages of dead runs are removed."""
    remove_stale_stages(parent / name)
    stage = atomic.temp_dir(parent / name)
    _write_info(stage, {"created_by": "torchsmith", "staging_for": name})
    return stage


def publish(stage: Path, final: Path) -> Path:
    """Atomically move a finished staging directory to ``final`` (which must not exist)."""
    if final.exists():
        remove_owned(final)
    stage.replace(final)
    return final


def stat_listing(root: Path) -> dict[str, list[int]]:
    """``relative path -> [size, mtime_ns]`` of every file and symlink under ``root`` (one
    ``scandir`` and one ``lstat`` per entry)."""
    listing: dict[str, list[int]] = {}
    pending = [("", str(root))]
    while pending:
        prefix, directory = pending.pop()
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    pending.append((f"{prefix}{entry.name}/", entry.path))
                else:
                    info = entry.stat(follow_symlinks=False)
                    listing[prefix + entry.name] = [info.st_size, info.st_mtime_ns]
    return listing


def record_listing(tree: Path) -> None:
    """Record the listing of ``tree/src`` (``tree``: an owned, finished tree directory)."""
    atomic.write_json(tree / LISTING, stat_listing(tree / "src"))


def listing_changes(recorded: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """``edited a.c``, ``added x``, ``removed y``: what differs, sorted by path."""
    changes = [(p, "added") for p in now.keys() - recorded.keys()]
    changes += [(p, "removed") for p in recorded.keys() - now.keys()]
    changes += [(p, "edited") for p in now.keys() & recorded.keys() if now[p] != recorded[p]]
    return [f"{how} {path}" for path, how in sorted(changes)]


def check_listing(tree: Path, what: str) -> None:
    """Raise when the cached ``tree/src`` differs from its recorded listing, naming the files;
    a tree cached before listings were recorded gets its listing now."""
    try:
        recorded = json.loads((tree / LISTING).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        record_listing(tree)
        return
    changes = listing_changes(recorded, stat_listing(tree / "src"))
    if changes:
        raise _changed_error(tree, what, changes)


def _changed_error(tree: Path, what: str, changes: list[str]) -> SourceError:
    shown = ", ".join(changes[:SHOWN_CHANGES])
    more = f" and {len(changes) - SHOWN_CHANGES} more" if len(changes) > SHOWN_CHANGES else ""
    return SourceError(
        f"the cached source tree {tree / 'src'} ({what}) changed after torchsmith made it: "
        f"{shown}{more}",
        f"a build never edits its cached source, so someone else did: remove {tree} and run the "
        "same command (it is made again from the original), or build the edited tree itself "
        "with --source path:DIR",
    )
