"""sha256 of a file, read in 1 MiB blocks (multi-GB wheels and tarballs stay out of memory)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import IO

CHUNK = 1 << 20


def sha256_stream(fh: IO[bytes]) -> str:
    """sha256 of what ``fh`` holds from where it stands, read in :data:`CHUNK` blocks."""
    digest = hashlib.sha256()
    for block in iter(lambda: fh.read(CHUNK), b""):
        digest.update(block)
    return digest.hexdigest()


def sha256_file(path: Path) -> str:
    with path.open("rb") as fh:
        return sha256_stream(fh)
