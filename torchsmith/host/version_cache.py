"""Version answers cached by the file they come from, so that a repeated ``torchsmith plan`` or
``torchsmith host`` starts no compiler: ``gcc -dumpfullversion``, ``nvcc --version``,
``cmake --version``, ``python3 --version`` print what is compiled into the executable, so the
answer holds for as long as the executable is the same file.

*The same file*: its real path, device, inode, size, modification and change times (and those
of the files the answer also comes from: a Python's shared ``libpython``, ``ldconfig``'s
``/etc/ld.so.cache``), read again at every lookup. A package upgrade replaces the file (another
inode), an edit in place changes its times, a symlink pointed elsewhere its real path; any of
these is a miss, and the command runs again. A file changed less than ``RACY_NS`` before it
was asked is not kept (git's "racy" rule: the kernel stamps times with a coarse clock, so a
second change within the same tick would leave the same times). Only ELF executables are
cached (a script's answer depends on what it runs), only the answers of commands that
succeeded, and the variables that change what a binary loads (``LD_LIBRARY_PATH``,
``LD_PRELOAD``) are part of the key.

The probes ask through :class:`CachingRunner` (``_run.query(..., cacheable=True)``), only for a
runner on this machine (the files are looked at here). The file,
``<cache root>/host-versions.json``: JSON written atomically (a temporary sibling renamed over
it), mode 0600; read only when it is a regular file (not a link) owned by this user that nobody
else may write, and a file that is not such a record is ignored and written again. Entries whose
files changed are dropped when it is written; losing it costs one probe.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from torchsmith.runner import Completed, LineCallback, Runner

if TYPE_CHECKING:
    from subprocess import CompletedProcess

FILE_NAME = "host-versions.json"
FORMAT = 1
MAX_BYTES = 1 << 20  # a bigger file is not one we wrote
LOADER_VARIABLES = ("LD_LIBRARY_PATH", "LD_PRELOAD")
ELF_MAGIC = b"\x7fELF"
RACY_NS = 2_000_000_000  # far above any kernel's timestamp granularity (jiffies: <= 10 ms)

Identity = list[Any]  # [real path, st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns]


def identity(path: Path) -> Identity | None:
    """What makes ``path`` the same file as before; None when it is not a regular file."""
    try:
        real = os.path.realpath(path)
        info = os.stat(real)  # noqa: PTH116 (a string: no Path made per lookup)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    return [real, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns]


def is_elf(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return fh.read(4) == ELF_MAGIC
    except OSError:
        return False


def _valid_entry(entry: Any) -> bool:
    if not isinstance(entry, dict) or not isinstance(entry.get("answer"), str):
        return False
    files = entry.get("files")
    return isinstance(files, list) and all(
        isinstance(f, list) and len(f) == 6 and isinstance(f[0], str)
        and all(type(n) is int for n in f[1:])
        for f in files
    )  # fmt: skip


def _owned_text(path: Path) -> str | None:
    """The file's text when it is a regular file of this user that only this user may write."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        mine = info.st_uid == os.geteuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
        if not (stat.S_ISREG(info.st_mode) and mine and info.st_size <= MAX_BYTES):
            return None
        try:
            return fh.read().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None


def read_entries(path: Path) -> dict[str, dict[str, Any]] | None:
    """The entries of a cache file; None when there is none or it is not one to trust."""
    text = _owned_text(path)
    try:
        data = json.loads(text) if text is not None else None
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    entries = data.get("entries")
    if not isinstance(entries, dict) or not all(map(_valid_entry, entries.values())):
        return None
    return entries


def cache_key(argv: Sequence[str], files: Sequence[Path], env: Mapping[str, str]) -> str:
    """The query and what it is asked of; the loader variables hashed, never written out."""
    what = [list(argv), [str(f) for f in files], [env.get(v, "") for v in LOADER_VARIABLES]]
    return hashlib.sha256(json.dumps(what).encode()).hexdigest()


def _keepable(files: list[Identity | None], asked_at: int) -> bool:
    """Every file there, and none changed within ``RACY_NS`` of the question (see above)."""
    return all(f is not None and f[5] < asked_at - RACY_NS for f in files)


class VersionCache:
    """The answers kept in ``path`` (None: kept in memory only), shared by the probe threads."""

    def __init__(self, path: Path | None, entries: dict[str, dict[str, Any]] | None = None):
        self.path = path
        self._entries = dict(entries or {})
        self._lock = threading.Lock()
        self.dirty = False

    @classmethod
    def read(cls, path: Path) -> VersionCache:
        entries = read_entries(path)
        cache = cls(path, entries)
        cache.dirty = entries is None and os.path.lexists(path)  # not ours or broken: rewrite
        return cache

    def answer(
        self,
        argv: Sequence[str],
        executable: Path,
        also: Sequence[Path],
        env: Mapping[str, str],
        ask: Callable[[], str],
    ) -> str:
        """The cached answer to ``argv`` while ``executable`` and ``also`` are the same files,
        else ``ask()``'s (kept when they did not change while it ran)."""
        files = [executable, *also]
        key = cache_key(argv, files, env)
        asked_at = time.time_ns()
        before = [identity(f) for f in files]
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry["files"] == before:
                return str(entry["answer"])
        text = ask()  # raises when the command failed: nothing is kept
        after = [identity(f) for f in files]
        if _keepable(before, asked_at) and after == before and is_elf(executable):
            with self._lock:
                self._entries[key] = {"argv": list(argv), "files": before, "answer": text}
                self.dirty = True
        return text

    def _current(self) -> dict[str, dict[str, Any]]:
        """The entries whose files are still the files they were asked of."""
        with self._lock:
            entries = dict(self._entries)
        return {
            key: entry
            for key, entry in entries.items()
            if [identity(Path(f[0])) for f in entry["files"]] == entry["files"]
        }

    def save(self) -> None:
        """Write the file when something changed; a cache that cannot be written is no error."""
        if self.path is None or not self.dirty:
            return
        from torchsmith.atomic import write_text  # only when writing (tempfile, shutil)

        payload = {"format": FORMAT, "entries": self._current()}
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            write_text(self.path, json.dumps(payload, indent=1, sort_keys=True) + "\n", 0o600)
        except OSError:
            return
        self.dirty = False


class CachingRunner:
    """``inner``, through which the host probes ask their version queries of ``cache`` first
    (only for a runner on this machine). Every other command goes to ``inner`` unchanged.
    (A plain class: a dataclass's generated methods cost start-up.)"""

    __slots__ = ("cache", "inner")

    def __init__(self, inner: Runner, cache: VersionCache) -> None:
        self.inner = inner
        self.cache = cache

    def run(
        self,
        argv: Sequence[str | Path],
        *,
        env: Mapping[str, str],
        cwd: Path | None = None,
        log_path: Path | None = None,
        on_line: LineCallback | None = None,
        check: bool = True,
        stdin_text: str | None = None,
    ) -> Completed:
        return self.inner.run(
            argv, env=env, cwd=cwd, log_path=log_path, on_line=on_line, check=check,
            stdin_text=stdin_text,
        )  # fmt: skip

    def capture(
        self,
        argv: Sequence[str | Path],
        *,
        env: Mapping[str, str],
        cwd: Path | None = None,
        timeout: float = 30,
        pass_fds: Sequence[int] = (),
    ) -> CompletedProcess[str]:
        return self.inner.capture(argv, env=env, cwd=cwd, timeout=timeout, pass_fds=pass_fds)
