"""sha256 of files and of directory trees."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from torchsmith.hashing import sha256_file

CHUNK = 1 << 20


def iter_tree(root: Path, exclude: Iterable[str] = ()) -> Iterator[Path]:
    """Every file and symlink under ``root`` (sorted, relative), skipping ``exclude`` names."""
    skip = set(exclude)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in skip)
        base = Path(dirpath)
        for name in sorted(filenames):
            if name not in skip:
                yield (base / name).relative_to(root)
        for name in dirnames:
            if (base / name).is_symlink():
                yield (base / name).relative_to(root)


def entry_digest(root: Path, rel: Path) -> str:
    """The sha256 of a file's bytes, or ``link:<target>`` for a symlink."""
    path = root / rel
    if path.is_symlink():
        return "link:" + str(path.readlink())
    return sha256_file(path)


def tree_manifest(root: Path, exclude: Iterable[str] = ()) -> dict[str, str]:
    """``relative path -> sha256`` (or ``link:target``) of every entry under ``root``."""
    return {rel.as_posix(): entry_digest(root, rel) for rel in iter_tree(root, exclude)}


def manifest_digest(manifest: dict[str, str]) -> str:
    """One sha256 for a whole manifest (order independent)."""
    text = "".join(f"{digest}  {name}\n" for name, digest in sorted(manifest.items()))
    return hashlib.sha256(text.encode()).hexdigest()
