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

Each looks for the value as given and percent-encoded (a URL's user-info or query)."""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import quote


def forms(canary: str) -> tuple[bytes, ...]:
    """The canary as bytes, as given and percent-encoded (without duplicates)."""
    return tuple(dict.fromkeys(f.encode() for f in (canary, quote(canary, safe=""))))


def _holds(data: bytes, canary: str) -> bool:
    return any(form in data for form in forms(canary))


def cmdlines_holding(canary: str) -> list[str]:
    """The command lines of live processes that hold the canary (NULs shown as spaces)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            data = cmdline.read_bytes()
        except OSError:  # the process ended meanwhile, or is not ours to read
            continue
        if _holds(data, canary):
            found.append(data.replace(b"\0", b" ").decode(errors="replace"))
    return found


class CmdlineWatch:
    """Reads every process's command line until stopped; ``seen`` holds any with the canary,
    ``scans`` how many full passes were made (a test asserts > 0: the watch really ran)."""

    def __init__(self, canary: str) -> None:
        self.canary = canary
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
