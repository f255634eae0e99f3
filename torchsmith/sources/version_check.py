"""Right after fetch: is the fetched tree the torch release the plan builds?

A tree's own ``version.txt`` (PyTorch >= 1.6 keeps its version there) must name the planned
release. Local version segments are accepted (a Debian ``1.13.1+dfsg`` tree may say ``1.13.1``
or ``1.13.1+dfsg``); a different release or a pre-release (``1.13.0a0``, what a branch or
``main`` checkout says) is refused before anything is built. Trees without ``version.txt``
(older releases, stand-in trees) and plans of ``main`` or a commit are not checked.
This module starts no process.
"""

from __future__ import annotations

import re
from pathlib import Path

from packaging.version import InvalidVersion, Version

from torchsmith.errors import SourceError
from torchsmith.sources.base import SourceTree

_RELEASE = re.compile(r"^\d+\.\d+\.\d+$")


def tree_version(root: Path) -> str | None:
    """The first line of ``root/version.txt``, or ``None`` when there is none."""
    path = root / "version.txt"
    if not path.is_file():
        return None
    lines = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    return lines[0].strip() if lines else ""


def same_release(found: str, planned: str) -> bool:
    """``1.13.1`` and ``1.13.1+dfsg`` are release 1.13.1; ``1.13.0a0`` and ``1.13.1rc1`` are not."""
    try:
        version = Version(found)
    except InvalidVersion:
        return False
    plain = not (version.is_prerelease or version.is_devrelease or version.is_postrelease)
    return plain and version.base_version == planned


def check_tree_version(tree: SourceTree, planned: str) -> None:
    """Raise :class:`SourceError` when the tree's ``version.txt`` is not release ``planned``."""
    found = tree_version(tree.root)
    if found is None or not _RELEASE.match(planned) or same_release(found, planned):
        return
    raise SourceError(
        f"the {tree.kind} source at {tree.root} is torch {found or '(empty version.txt)'} "
        f"(its version.txt), but the plan builds torch {planned}",
        f"give the source tree of torch {planned}, or plan the tree's own release "
        f"(--torch {Version(found).base_version if _parses(found) else found}); "
        "a pre-release or branch checkout (e.g. 1.13.0a0) is not the release",
    )


def _parses(text: str) -> bool:
    try:
        Version(text)
    except InvalidVersion:
        return False
    return True
