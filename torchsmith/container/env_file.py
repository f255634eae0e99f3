"""Environment for a command in a working container, by file instead of ``--env KEY=VALUE``.

An engine's argv is readable by every local user (``/proc/*/cmdline``) for as long as the
command runs: a whole build. The values (a ``git_mirror`` password from a spec file, a proxy's
user-info, …) go instead into a file only this user can read (0600, created with ``O_EXCL``),
in a 0700 directory under a path mounted at the same place inside the container. The command
becomes ``/bin/sh -c LOADER sh FILE ARGV…``: the shell exports the file's assignments, deletes
the file, then ``exec``\\ s the command (security review f1b4bec, N1).
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import stat
from collections.abc import Iterable
from pathlib import Path

from torchsmith.errors import HostError

DIR_NAME = ".torchsmith-env"
LOADER = 'set -a && . "$1" && set +a && rm -f -- "$1" && shift && exec "$@"'
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def script(values: Iterable[tuple[str, str]]) -> str:
    """``KEY='value'`` lines a POSIX shell sources (``shlex.quote``: any byte but NUL)."""
    lines = []
    for key, value in values:
        if not _KEY.fullmatch(key) or "\0" in value:
            raise HostError(
                f"environment variable {key!r} cannot be passed into the container",
                "give variables with plain names and no NUL byte",
            )
        lines.append(f"{key}={shlex.quote(value)}\n")
    return "".join(lines)


def private_dir(under: Path) -> Path:
    """``under/.torchsmith-env``: made 0700 if missing; refused when it is a link, another
    user's, or others can enter it."""
    path = under / DIR_NAME
    with contextlib.suppress(FileExistsError):
        path.mkdir(mode=0o700)
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
        raise HostError(
            f"{path} is not a private directory of this user (a link, another owner, or "
            "others may enter it): the container's environment would be readable there",
            f"remove {path}; torchsmith makes it again, mode 0700",
        )
    return path


def write(under: Path, values: Iterable[tuple[str, str]]) -> Path:
    """A fresh 0600 file holding ``values``; this process's earlier files there are removed
    first (each is deleted by the command that read it; one is left only when the engine
    failed before its shell ran)."""
    folder = private_dir(under)
    release(under)
    name = f"env-{os.getpid()}-{os.urandom(8).hex()}"
    fd = os.open(folder / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(script(values))
    return folder / name


def release(under: Path) -> None:
    """Remove what this process left in ``under/.torchsmith-env``."""
    folder = under / DIR_NAME
    if folder.is_dir() and not folder.is_symlink():
        for leftover in folder.glob(f"env-{os.getpid()}-*"):
            leftover.unlink(missing_ok=True)


def wrapped(argv: list[str], file: Path) -> list[str]:
    """``argv`` run with the environment of ``file`` (which it deletes once read)."""
    return ["/bin/sh", "-c", LOADER, "sh", str(file), *argv]
