"""The free disk while an integration module runs (issue 23, stop 33: CI's run failed when two
CUDA modules on two workers filled the disk together). With ``TORCHSMITH_TEST_DISK_LOG`` set
(scripts/test sets it), each module appends one line ``module<TAB>free at start<TAB>lowest
free<TAB>free at end<TAB>wall seconds`` (GB; the end after its directories were removed) to that
file, and scripts/test prints the modules that ran with the least disk left.

:func:`reserved` keeps the module that takes the most disk from running beside the other big
ones on another worker (tests/integration/conftest.py ``DISK_ALONE``/``DISK_BIG``)."""

from __future__ import annotations

import fcntl
import os
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

GB = 1e9


class DiskWatch:
    """Samples the free space of ``path``'s file system every ``interval`` seconds in a thread."""

    def __init__(self, path: Path, interval: float = 2.0) -> None:
        self.path = path
        self.interval = interval
        self.start = self.lowest = self._free()
        self.began = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="disk-watch", daemon=True)

    def _free(self) -> int:
        return shutil.disk_usage(self.path).free

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.lowest = min(self.lowest, self._free())

    def __enter__(self) -> DiskWatch:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join()
        self.lowest = min(self.lowest, self._free())

    def line(self, module: str) -> str:
        """The module's line of the disk log (ends with a newline)."""
        free = [f"{f / GB:.1f}" for f in (self.start, self.lowest, self._free())]
        return "\t".join([module, *free, f"{time.monotonic() - self.began:.0f}"]) + "\n"


def append(log: str, line: str) -> None:
    """One write of a short line in append mode: workers' lines never interleave."""
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


@contextmanager
def reserved(lock: Path, alone: bool) -> Iterator[None]:
    """Held while a big module runs: shared by the big ones, exclusive for the one that must run
    alone (flock: a worker waits here until the other worker's big module has ended)."""
    with lock.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        yield
