"""Right after fetch: is the fetched tree the torch release the plan builds?

A tree's own ``version.txt`` (PyTorch >= 1.6 keeps its version there) must belong to the
planned release. Upstream keeps the *series'* development version in it on release branches and
tags: the real v1.13.1 tree (Debian's ``pytorch_1.13.1+dfsg.orig.tar.xz``) says ``1.13.0a0``
(tests/integration/test_sources_debian.py reads it), and the wheel's version comes from
``PYTORCH_BUILD_VERSION`` instead. So a tree is accepted when its version.txt is the planned
release itself (``1.13.1``, also with a local part such as ``1.13.1+dfsg``) or the ``X.Y.0a0``
of the planned X.Y series; another series (``1.13.0a0`` for 2.5.1, a ``main`` checkout's
``1.14.0a0`` for 1.13.1), another final release, a release candidate or an unreadable version
is refused before anything is built. version.txt cannot tell 1.13.0 from 1.13.1 (both say
1.13.0a0): git sources check the tag's commit for that. Trees without ``version.txt`` (older
releases, stand-in trees) and plans of ``main`` or a commit are not checked. No process is
started here.
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
    """``found`` (a version.txt) belongs to release ``planned``: ``1.13.1``, ``1.13.1+dfsg`` or
    the series' ``1.13.0a0`` for 1.13.1; not ``1.14.0a0``, ``1.13.0``, ``1.13.1rc1``."""
    try:
        version, want = Version(found), Version(planned)
    except InvalidVersion:
        return False
    if version.base_version == want.base_version:
        return not (version.is_prerelease or version.is_devrelease or version.is_postrelease)
    series_dev = version.release == (*want.release[:2], 0) and version.pre == ("a", 0)
    return series_dev and not (version.is_devrelease or version.is_postrelease)


def check_tree_version(tree: SourceTree, planned: str) -> None:
    """Raise :class:`SourceError` when the tree's ``version.txt`` is not release ``planned``."""
    found = tree_version(tree.root)
    if found is None or not _RELEASE.match(planned) or same_release(found, planned):
        return
    raise SourceError(
        f"the {tree.kind} source at {tree.root} is torch {found or '(empty version.txt)'} "
        f"(its version.txt), but the plan builds torch {planned}",
        f"give the source tree of torch {planned}, or plan the tree's own release "
        f"(--torch {_tree_release(found)}); "
        "a tree of another X.Y series (e.g. a main checkout) is not the release",
    )


def _tree_release(found: str) -> str:
    """What to plan for this tree: its release, or its series for an X.Y.0a0."""
    try:
        version = Version(found)
    except InvalidVersion:
        return found
    if version.pre == ("a", 0):
        major, minor = version.release[:2]
        return f"{major}.{minor}.N, the release of the {major}.{minor} series this tree is"
    return version.base_version
