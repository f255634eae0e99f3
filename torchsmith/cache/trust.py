"""Directories root may run code from: the cache root (build scripts, the venv) and the
compiler cache's directory (every object in it ends up in a wheel). As root, a directory is
trusted only when it, and every directory above it, cannot be changed by another user: owned by
root (the leaf: by this user) and not writable by group or others, except a root-owned sticky
directory such as /tmp, where nobody may rename what is not theirs. A user who owns a parent
(``sudo -E`` with the cache in ``~/.cache``) can rename root's directory away mid-run and put
their own tree at its path (security review f1b4bec, L3). Both the path as given and the one it
resolves to are checked, so a link planted anywhere on the way is judged by its own owner too.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


def _problem(path: Path, info: os.stat_result, euid: int, leaf: bool) -> str | None:
    owners = {euid} if leaf else {0, euid}
    if info.st_uid not in owners:
        return f"{path} belongs to uid {info.st_uid}"
    if stat.S_ISLNK(info.st_mode):
        return None  # a link's own mode means nothing; its directory and target are checked
    writable = info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    sticky_root = bool(info.st_mode & stat.S_ISVTX) and info.st_uid == 0 and not leaf
    if writable and not sticky_root:
        return f"{path} has mode {stat.filemode(info.st_mode)}: group or others may write it"
    return None


def _check(part: Path, euid: int, leaf: bool) -> str | None:
    try:
        info = part.lstat()
    except FileNotFoundError:
        return None  # made later by torchsmith, mode 0700
    return _problem(part, info, euid, leaf)


def _absolute(path: Path) -> list[Path]:
    absolute = Path(os.path.abspath(path))  # noqa: PTH100 (lexical: links are judged too)
    return [absolute, absolute.resolve()]


def ancestor_reason(path: Path, euid: int | None = None, as_root: bool | None = None) -> str | None:
    """Why a directory above ``path`` (as given, or as it resolves) lets another user swap
    ``path`` for their own tree; None when none does, or this is not root (``as_root``:
    apply root's rule for ``euid`` anyway, for tests)."""
    euid = os.geteuid() if euid is None else euid
    if not (euid == 0 if as_root is None else as_root):
        return None
    for absolute in _absolute(path):
        for part in reversed(absolute.parents):
            problem = _check(part, euid, leaf=False)
            if problem is not None:
                return problem
    return None


def untrusted_reason(
    path: Path, euid: int | None = None, as_root: bool | None = None
) -> str | None:
    """Why root must not run code from ``path`` (None: it may, or this is not root): the
    directory itself first, then every one above it."""
    euid = os.geteuid() if euid is None else euid
    if not (euid == 0 if as_root is None else as_root):
        return None
    for absolute in _absolute(path):
        problem = _check(absolute, euid, leaf=True)
        if problem is not None:
            return problem
    return ancestor_reason(path, euid, True)
