"""Atomic writes: the one module that puts a file (or a directory) in place.

Everything is first written to a temporary sibling of the target, named
``.<final name>.partial-<pid>-<random>`` and created with ``O_CREAT|O_EXCL|O_NOFOLLOW``
(:func:`tempfile.mkstemp` / :func:`tempfile.mkdtemp`), so a name planted by someone else (a
symlink, a file) is never opened; then it is fsynced and renamed over the target
(``os.replace``, atomic on POSIX within one directory), and the directory is fsynced. A reader
sees no file or the complete one. The pid in the name lets a later run recognise leftovers of a
killed one (:func:`stale_partials`) without touching anything else.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

PARTIAL = ".partial-"
FILE_MODE = 0o644


def partial_prefix(final: Path) -> str:
    """The name prefix of this process's temporaries for ``final``."""
    return f".{final.name}{PARTIAL}{os.getpid()}-"


def fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def _temp_file(final: Path, mode: int) -> Iterator[tuple[IO[bytes], Path]]:
    """A new temporary sibling of ``final`` open for writing; removed unless renamed."""
    final.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=partial_prefix(final), dir=final.parent)
    tmp = Path(name)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            yield fh, tmp
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_with(path: Path, write: Callable[[IO[bytes]], None], mode: int = FILE_MODE) -> Path:
    """Let ``write`` fill a temporary sibling of ``path``, then put it in place atomically."""
    with _temp_file(path, mode) as (fh, tmp):
        write(fh)
        fh.flush()
        os.fsync(fh.fileno())
    try:
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)
    return path


def write_bytes(path: Path, data: bytes, mode: int = FILE_MODE) -> Path:
    def write(fh: IO[bytes]) -> None:
        fh.write(data)

    return write_with(path, write, mode)


def write_text(path: Path, text: str, mode: int = FILE_MODE, encoding: str = "utf-8") -> Path:
    return write_bytes(path, text.encode(encoding), mode)


def write_json(path: Path, data: Any, mode: int = FILE_MODE) -> Path:
    """``data`` as indented, key-sorted JSON with a final newline."""
    text = json.dumps(data, indent=2, sort_keys=True, default=str) + "\n"
    return write_text(path, text, mode)


def copy_file(src: Path, dest: Path, mode: int | None = None) -> Path:
    """Copy ``src`` to ``dest`` atomically (``mode`` defaults to ``src``'s permission bits)."""
    bits = src.stat().st_mode & 0o777 if mode is None else mode
    with src.open("rb") as reader:
        return write_with(dest, lambda fh: shutil.copyfileobj(reader, fh, 1 << 20), bits)


def temp_dir(final: Path) -> Path:
    """A new, empty (mode 0700) temporary sibling directory of ``final``."""
    final.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=partial_prefix(final), dir=final.parent))


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (one of another user counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return pid > 0


def partial_pid(final: Path, candidate: Path) -> int | None:
    """The pid in ``candidate``'s name when it is a temporary of ``final``, else None."""
    pattern = rf"\.{re.escape(final.name)}{re.escape(PARTIAL)}(\d+)(-[A-Za-z0-9_]+)?"
    match = re.fullmatch(pattern, candidate.name)
    return int(match[1]) if match else None


def stale_partials(final: Path) -> list[Path]:
    """Temporaries of ``final`` left by processes that no longer run (never this one's)."""
    found = []
    for candidate in final.parent.glob(f".{glob_escape(final.name)}{PARTIAL}*"):
        pid = partial_pid(final, candidate)
        if pid is not None and pid != os.getpid() and not pid_alive(pid):
            found.append(candidate)
    return sorted(found)


def glob_escape(name: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", name)


def remove_stale_files(final: Path) -> list[Path]:
    """Delete the stale temporary *files* (not directories, not links) of ``final``."""
    removed = []
    for path in stale_partials(final):
        if path.is_file() and not path.is_symlink():
            path.unlink()
            removed.append(path)
    return removed
