"""The interface every source provider implements."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

SourceKind = Literal["git", "debian", "path", "tarball", "bundle"]


@dataclass(frozen=True)
class SourceTree:
    """A source tree ready to build.

    ``root`` is the directory holding the top-level ``setup.py``/``CMakeLists.txt``. ``identity``
    is a commit SHA (git) or a sha256 of the fetched archive(s) (tarball, debian, bundle) or of
    the tree listing (path). ``owned`` says whether torchsmith created ``root`` (and may modify
    or delete it); a user's checkout is never owned.
    """

    kind: SourceKind
    root: Path
    identity: str
    version: str
    owned: bool
    details: dict[str, str] = field(default_factory=dict)


BUILD_DEPENDS = "build_depends"
"""The details key naming the Debian packages building a Debian tree needs (a bundle carries it
to the machine that builds, which checks them there)."""
