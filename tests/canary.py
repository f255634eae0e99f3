"""Canary-credential scans for tests that hand torchsmith a secret (publish, compiler caches,
the container backend): the test puts a unique, harmless value where a credential goes, runs the
real commands, then asks where the value surfaced. Three places are looked at:

* every process's command line, read from ``/proc/*/cmdline`` by a thread while the commands run
  (:class:`CmdlineWatch`: an argv lives only as long as its process) and once more at the end;
* every file under the directories the test names (workspace, cache, dist, logs, manifests),
  minus the files the test itself wrote the secret into (:func:`files_holding`);
* texts the test captured: stdout, stderr, log contents (:func:`texts_holding`);
* what appeared in the temporary directory while the test ran (:class:`TmpWatch`): a credential
  file left behind there (an OCI auth file on SIGTERM) is a leak even once the test is over.

Each looks for the value as given and percent-encoded (a URL's user-info or query).

:class:`Sweep` puts the three together cheaply for a whole test (the integration conftest wraps
every publish, compiler-cache and container test in one, with canary credentials in the
environment): the watch polls every ``interval`` seconds, and only files written since the
test started are read (:func:`recent_files`: text-sized, not archives or objects, container
stores pruned)."""

from __future__ import annotations

import os
import secrets
import tempfile
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import quote


def forms(canary: str) -> tuple[bytes, ...]:
    """The canary as bytes, as given and percent-encoded (without duplicates)."""
    return tuple(dict.fromkeys(f.encode() for f in (canary, quote(canary, safe=""))))


def _holds(data: bytes, canary: str) -> bool:
    return any(form in data for form in forms(canary))


_CHUNK = 16 << 10  # read size: larger buffers cost an mmap each; a longer argv reads on


def _cmdline(pid: str) -> bytes:
    """``/proc/PID/cmdline`` through plain os calls (b"" if the process ended meanwhile or is
    not ours to read): pathlib's glob and read_bytes cost 2.5x the CPU of a 20 ms watch."""
    try:
        fd = os.open(f"/proc/{pid}/cmdline", os.O_RDONLY)
    except OSError:
        return b""
    try:
        data = chunk = os.read(fd, _CHUNK)
        while len(chunk) == _CHUNK:
            chunk = os.read(fd, _CHUNK)
            data += chunk
    except OSError:
        return b""
    finally:
        os.close(fd)
    return data


def cmdlines_holding(canary: str) -> list[str]:
    """The command lines of live processes that hold the canary (NULs shown as spaces)."""
    wanted = forms(canary)
    found = []
    for pid in os.listdir("/proc"):
        data = _cmdline(pid) if pid.isdigit() else b""
        if any(form in data for form in wanted):
            found.append(data.replace(b"\0", b" ").decode(errors="replace"))
    return found


class CmdlineWatch:
    """Reads every process's command line until stopped; ``seen`` holds any with the canary,
    ``scans`` how many full passes were made (a test asserts > 0: the watch really ran)."""

    def __init__(self, canary: str, interval: float = 0.0) -> None:
        self.canary = canary
        self.interval = interval  # seconds between passes (0: back to back)
        self.seen: list[str] = []
        self.scans = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> CmdlineWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.seen += cmdlines_holding(self.canary)  # whatever is still running

    def _run(self) -> None:
        while not self._stop.is_set():
            self.seen += cmdlines_holding(self.canary)
            self.scans += 1
            self._stop.wait(self.interval)


def files_holding(canary: str, roots: Iterable[Path], skip: Iterable[Path] = ()) -> list[Path]:
    """Regular files under ``roots`` (or the roots themselves) whose bytes hold the canary;
    ``skip``: the files the test wrote it into on purpose. Symlinks are not followed."""
    skipped, found = {Path(p) for p in skip}, []
    for root in roots:
        paths = [root] if root.is_file() else root.rglob("*")
        for path in paths:
            readable = path.is_file() and not path.is_symlink() and path not in skipped
            if readable and path not in found and _holds(path.read_bytes(), canary):
                found.append(path)
    return found


def texts_holding(canary: str, texts: Iterable[str | bytes]) -> list[int]:
    """The indexes of the captured texts (output, logs) that hold the canary."""
    return [
        i
        for i, text in enumerate(texts)
        if _holds(text if isinstance(text, bytes) else text.encode(errors="replace"), canary)
    ]


class TmpWatch:
    """The entries of the temporary directory (``$TMPDIR``, else /tmp) that appeared while the
    block ran; :meth:`holding` scans them (other tests' new entries cannot hold this canary)."""

    def __init__(self, canary: str) -> None:
        self.canary = canary
        self.root = Path(tempfile.gettempdir())
        self._before: set[str] = set()
        self.new: list[Path] = []

    def __enter__(self) -> TmpWatch:
        self._before = set(os.listdir(self.root))
        return self

    def __exit__(self, *exc: object) -> None:
        self.new = [self.root / n for n in sorted(set(os.listdir(self.root)) - self._before)]

    def holding(self) -> list[Path]:
        """The new entries (files, or files under new directories) that hold the canary."""
        readable = [p for p in self.new if os.access(p, os.R_OK)]
        return files_holding(self.canary, readable)


# Names a credential often has in CI environments; none of them means anything to torchsmith or
# the tools the tests run, so a canary there changes nothing but shows where the environment went.
ENV_NAMES = ("GITHUB_TOKEN", "HF_TOKEN", "CI_JOB_TOKEN", "CANARY_API_KEY", "CANARY_PASSWORD")
# archives and objects (compressed or binary: a scan would not see a value in them), git objects
_BINARY = frozenset({".o", ".a", ".so", ".whl", ".conda", ".bz2", ".gz", ".xz", ".zst",
                     ".tar", ".zip", ".pack", ".idx", ".pyc", ".sqlite", ".db", ".sif",
                     ".rdb"})  # fmt: skip
_MAX_BYTES = 8 << 20


def unique() -> str:
    """A fresh canary value (no other test's output can hold it)."""
    return f"tscanary-{secrets.token_hex(8)}"


def _scanned(path: str, since: float) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return (
        st.st_mtime >= since
        and os.path.isfile(path)
        and not os.path.islink(path)
        and st.st_size <= _MAX_BYTES
    )


def recent_files(roots: Iterable[Path], since: float) -> list[Path]:
    """Regular files under ``roots`` modified at or after ``since`` (epoch seconds; an unpacked
    archive keeps its members' old times, so a source tree is not read), up to 8 MiB,
    not archives or objects; a containers/storage root (``storage.lock``) and git's object store
    are pruned (an image's whole file system is not what torchsmith wrote)."""
    found: list[Path] = []
    for root in roots:
        if Path(root).suffix not in _BINARY and _scanned(str(root), since):  # a file itself
            found.append(Path(root))
        for folder, dirs, files in os.walk(root):
            if "storage.lock" in files:
                dirs.clear()
                continue
            dirs[:] = [d for d in dirs if not (d == "objects" and folder.endswith(".git"))]
            found += [Path(folder, f) for f in files if Path(f).suffix not in _BINARY
                      and _scanned(os.path.join(folder, f), since)]  # fmt: skip
    return found


def _readable_holding(canary: str, paths: Iterable[Path]) -> list[Path]:
    found = []
    for path in paths:
        try:
            data = path.read_bytes()
        except OSError:  # removed meanwhile, or not ours to read
            continue
        if _holds(data, canary):
            found.append(path)
    return found


class Sweep:
    """One test's scan: a :class:`CmdlineWatch` (every ``interval`` s; ``None``: the caller
    watches) while it runs, then the files written under ``roots`` and the new
    temporary-directory entries since it started. :meth:`leaks` names every place the canary
    surfaced (empty: nothing leaked)."""

    def __init__(self, canary: str, roots: Iterable[Path], interval: float | None = 0.02) -> None:
        self.canary, self.roots = canary, list(roots)
        self.watch = None if interval is None else CmdlineWatch(canary, interval)
        self.tmp = TmpWatch(canary)
        self.since = 0.0

    def __enter__(self) -> Sweep:
        self.since = time.time() - 1  # file times are coarser than the clock on some systems
        self.tmp.__enter__()
        if self.watch is not None:
            self.watch.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.watch is not None:
            self.watch.__exit__()
        self.tmp.__exit__()

    def leaks(self) -> list[str]:
        """``cmdline: …`` / ``file: …`` for every place holding the canary."""
        new = [p for p in self.tmp.new if os.access(p, os.R_OK)]
        paths = recent_files([*self.roots, *new], self.since)
        seen = self.watch.seen if self.watch is not None else []
        return [f"cmdline: {c}" for c in dict.fromkeys(seen)] + [
            f"file: {p}" for p in dict.fromkeys(_readable_holding(self.canary, paths))
        ]
