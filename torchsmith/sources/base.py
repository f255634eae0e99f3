"""The interface every source provider implements."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

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
    epoch: int | None = None
    """Its SOURCE_DATE_EPOCH, resolved by the fetch step (:mod:`torchsmith.sources.epoch`)."""
    epoch_from: str = ""
    """Where ``epoch`` came from (a commit's date, Debian's changelog, the plan)."""

    def epoch_record(self) -> dict[str, Any]:
        """``epoch`` and ``epoch_from`` as the manifest's source record holds them."""
        return {"epoch": self.epoch, "epoch_from": self.epoch_from}


BUILD_DEPENDS = "build_depends"
"""The details key naming the Debian packages building a Debian tree needs (a bundle carries it
to the machine that builds, which checks them there)."""
