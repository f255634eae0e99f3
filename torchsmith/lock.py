"""One writer at a time: an exclusive ``flock`` on a ``.lock`` file inside the directory.

The kernel drops the lock when its holder exits (even on SIGKILL), so a stale lock of a dead
process never blocks anyone; the holder's pid is written into the file only to name it in the
message a second run gets. Two locks taken through different ``open`` calls conflict even within
one process (``flock`` belongs to the open file description).
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable
from pathlib import Path

from torchsmith.errors import HostError

LOCK_NAME = ".lock"
WAIT_S = 5.0
_POLL_S = 0.1


class DirLock:
    """A held exclusive lock on ``<directory>/.lock``; :meth:`release` (or exit) frees it."""

    def __init__(self, directory: Path, fd: int) -> None:
        self.path = directory / LOCK_NAME
        self._fd: int | None = fd

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __del__(self) -> None:  # a workspace dropped without release(): free the lock too
        self.release()

    def __enter__(self) -> DirLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _holder(fd: int) -> str:
    data = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    return f"pid {data}" if data.isdigit() else "another process"


def _try_lock(fd: int, wait_s: float) -> bool:
    deadline = time.monotonic() + wait_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(_POLL_S)


def acquire(
    directory: Path,
    what: str,
    wait_s: float = WAIT_S,
    say: Callable[[str], None] | None = None,
) -> DirLock:
    """Lock ``directory`` (made if missing) for this process, waiting up to ``wait_s`` (said
    through ``say``); a :class:`HostError` naming the holder's pid when another process keeps
    it longer."""
    directory.mkdir(parents=True, exist_ok=True)
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(directory / LOCK_NAME, flags, 0o600)
    except OSError as exc:  # ELOOP: a link planted at the lock's name
        raise HostError(
            f"cannot open the lock file {directory / LOCK_NAME}: {exc.strerror}",
            "it must be a regular file torchsmith made; remove whatever is there",
        ) from exc
    if not _try_lock(fd, 0) and say is not None and wait_s > 0:
        say(f"waiting up to {wait_s:.0f} s for {what}, in use by {_holder(fd)}")
    if not _try_lock(fd, wait_s):
        holder = _holder(fd)
        os.close(fd)
        raise HostError(
            f"{what} ({directory}) is in use by another torchsmith run ({holder})",
            "wait for that run to finish (or stop it) and run the same command again; "
            "two runs of one plan cannot share a build directory",
        )
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return DirLock(directory, fd)
