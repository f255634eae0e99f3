"""Safe extraction of source archives: tarfile's ``data`` filter refuses absolute paths, ``..``
traversal, links pointing outside the destination and device files."""

from __future__ import annotations

import tarfile
from pathlib import Path

from torchsmith.errors import SourceError


def safe_extract(archive: Path, dest: Path) -> None:
    """Extract ``archive`` (any compression tarfile reads) into ``dest``."""
    if not hasattr(tarfile, "data_filter"):  # pragma: no cover - Python < 3.10.12
        raise SourceError(
            "this Python's tarfile has no 'data' extraction filter",
            "use Python >= 3.10.12 / 3.11.4 to unpack archives safely",
        )
    dest.mkdir(parents=True, exist_ok=True)
    try:
        with tarfile.open(archive) as tar:
            tar.extractall(dest, filter="data")
    except tarfile.FilterError as exc:
        raise SourceError(
            f"{archive} tries to write outside its directory: {exc}",
            "the archive is malformed or malicious; it was not unpacked",
        ) from exc
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise SourceError(f"cannot unpack {archive}: {exc}", "fetch the archive again") from exc


def single_top_dir(dest: Path, ignore: frozenset[str] = frozenset()) -> Path:
    """The one top-level directory of an unpacked archive, or ``dest`` itself if there are many."""
    entries = [p for p in dest.iterdir() if p.name not in ignore]
    if len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink():
        return entries[0]
    return dest
