"""A private directory for what a compiler cache must not share: sccache's server socket and
the sccache-dist client config (its token inside).

A socket at a name others can compute (``/tmp/torchsmith-sccache-<hash>.sock``) or inside a
shared cache directory can be bound first by another local user, who then receives every
compile request with the build's whole environment: remote-cache passwords, AWS keys (security
review f1b4bec, N5). So each build gets a fresh directory made by :func:`tempfile.mkdtemp`
(mode 0700, unpredictable name, created with ``O_EXCL`` semantics) under ``$XDG_RUNTIME_DIR``
when that is this user's private 0700 directory, else ``/tmp`` (short enough for a socket path:
``sun_path`` holds 108 bytes), and removes it when the build's server stops.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path

PREFIX = "torchsmith-cache-"
BASE = Path("/tmp")
"""Where the directory goes without a private ``$XDG_RUNTIME_DIR`` (not ``$TMPDIR``, which may
be too long for a socket path)."""
UDS_MAX = 100  # sun_path holds 108 bytes; the longest name put inside is "server-dist.sock"
_LONGEST = len("/server-dist.sock") + len(PREFIX) + 8


def _runtime_dir(env: Mapping[str, str]) -> Path | None:
    """``$XDG_RUNTIME_DIR`` when it is a directory of this user that nobody else can enter."""
    text = env.get("XDG_RUNTIME_DIR", "")
    if not text or not Path(text).is_absolute() or len(text) + _LONGEST >= UDS_MAX:
        return None
    try:
        info = os.lstat(text)
    except OSError:
        return None
    private = stat.S_ISDIR(info.st_mode) and not info.st_mode & 0o077
    return Path(text) if private and info.st_uid == os.geteuid() else None


def make_private_dir(env: Mapping[str, str]) -> Path:
    """A new, empty directory only this user can enter."""
    base = _runtime_dir(env) or BASE
    return Path(tempfile.mkdtemp(prefix=PREFIX, dir=base))


def remove_private_dir(path: Path | None) -> None:
    """Remove a directory :func:`make_private_dir` made (nothing else: checked by its name)."""
    if path is not None and path.name.startswith(PREFIX) and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
