"""The epoch of a fetched source: what ``SOURCE_DATE_EPOCH`` is for its build, resolved by the
fetch step as the plan says (:mod:`torchsmith.planner.reproducible` plans *how*; the planner
reads no files).

* ``commit-date``: the committer date of the commit fetched, ``git show -s --format=%ct
  COMMIT`` through the build's runner (the date every reproducible-builds tool takes for a git
  tree: https://reproducible-builds.org/docs/source-date-epoch/).
* ``debian-changelog``: the date of ``debian/changelog``'s top entry, as
  ``dpkg-parsechangelog -STimestamp`` gives it: the entry's trailer line
  (`` -- Maintainer <email>  Fri, 11 Apr 2025 06:45:18 -0400``, Debian Policy 4.4), its
  RFC 5322 date read by :func:`email.utils.parsedate_to_datetime`. The changelog is in the tree
  (``dpkg-source -x`` unpacked the packaging tarball) or, for a companion fetched as its
  upstream tarball, in the packaging tarball when the mirror serves it; without either, the
  plan's fallback (the release's date) — said in ``epoch_from``.
* a number: the plan's own (the release's date, or 1980-01-01).
"""

from __future__ import annotations

import email.utils
import re
import tarfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from torchsmith.errors import InternalError, SourceError
from torchsmith.planner.reproducible import ZIP_EPOCH, EpochRule
from torchsmith.runner import Runner
from torchsmith.sources.debian_orig import DEBIAN_TARBALL
from torchsmith.sources.git import Git

CHANGELOG = "debian/changelog"
_HEADER = re.compile(r"^(?P<source>\w[-+0-9a-z.]*) \((?P<version>[^() \t]+)\)")
_TRAILER = re.compile(r"^ -- (?P<who>.*<[^>]*>) {1,2}(?P<date>\S.*?)\s*$")
_MAX_CHANGELOG = 8 * 1024 * 1024


@dataclass(frozen=True)
class SourceEpoch:
    """The epoch of a source and where it came from (recorded with the source)."""

    epoch: int
    epoch_from: str

    def record(self) -> dict[str, Any]:
        return {"epoch": self.epoch, "epoch_from": self.epoch_from}


def commit_time(text: str, commit: str) -> int:
    """``git show -s --format=%ct``'s output (seconds since 1970, UTC) as an epoch."""
    value = text.strip()
    if not value.isdigit():
        raise SourceError(
            f"git show -s --format=%ct {commit} gave {value[:80]!r}, not a time",
            "check that the cached clone is intact (delete it to fetch again)",
        )
    return max(ZIP_EPOCH, int(value))


def commit_epoch(root: Path, commit: str, env: Mapping[str, str], runner: Runner) -> SourceEpoch:
    """The committer date of ``commit`` in the clone at ``root``."""
    text = Git(root, env, None, runner).out("show", "-s", "--format=%ct", commit)
    return SourceEpoch(commit_time(text, commit), f"git commit {commit} (committer date, %ct)")


def _changelog_error(where: str, why: str) -> SourceError:
    return SourceError(
        f"{where}: {why}, so the build's SOURCE_DATE_EPOCH cannot be read from it",
        "the Debian source package is damaged: delete its cache entry to fetch it again",
    )


def changelog_epoch(text: str, where: str) -> SourceEpoch:
    """dpkg-parsechangelog -STimestamp: the date of the top entry's trailer line."""
    lines = text.splitlines()
    header = next((m for m in map(_HEADER.match, lines) if m), None)
    trailer = next((m for m in map(_TRAILER.match, lines) if m), None)
    if header is None or trailer is None:
        raise _changelog_error(where, "no entry with a trailer line (' -- NAME <EMAIL>  DATE')")
    try:
        when = email.utils.parsedate_to_datetime(trailer["date"])
    except (TypeError, ValueError):
        when = None
    date = trailer["date"]
    if when is None or when.tzinfo is None:
        raise _changelog_error(where, f"the top entry's date {date!r} is no RFC 5322 date")
    version = f"{header['source']} {header['version']}"
    return SourceEpoch(max(ZIP_EPOCH, int(when.timestamp())), f"{where}: {version}, {date}")


def tarball_changelog(path: Path) -> str | None:
    """``debian/changelog`` of a Debian packaging tarball (``*.debian.tar.xz``), if it has one."""
    with tarfile.open(path, "r:*") as tar:
        try:
            member = tar.getmember(CHANGELOG)
        except KeyError:
            return None
        handle = tar.extractfile(member) if member.isfile() else None
        if handle is None or member.size > _MAX_CHANGELOG:
            return None
        return handle.read().decode("utf-8", errors="replace")


def _changelog(root: Path, details: Mapping[str, Any]) -> tuple[str, str] | None:
    """(text, where) of the source's Debian changelog: in the tree, else the packaging tarball."""
    in_tree = root / CHANGELOG
    if in_tree.is_file():
        return in_tree.read_text(encoding="utf-8", errors="replace"), CHANGELOG
    tarball = details.get(DEBIAN_TARBALL)
    text = tarball_changelog(Path(str(tarball))) if tarball else None
    return None if text is None else (text, f"{Path(str(tarball)).name}:{CHANGELOG}")


def debian_epoch(rule: EpochRule, root: Path, details: Mapping[str, Any]) -> SourceEpoch:
    """The changelog's date, else the plan's fallback (the packaging tarball not served)."""
    found = _changelog(root, details)
    if found is not None:
        return changelog_epoch(*found)
    return SourceEpoch(
        rule.fallback or ZIP_EPOCH,
        "the plan's fallback, the release's date: no debian/changelog (the mirror serves no "
        "Debian packaging tarball for this source)",
    )


def source_epoch(
    rule: EpochRule,
    root: Path,
    details: Mapping[str, Any],
    env: Mapping[str, str],
    runner: Runner,
) -> SourceEpoch:
    """The epoch of the source fetched at ``root`` (``details``: its provider's record; a git
    tree's ``commit``) as ``rule`` says."""
    match rule.how:
        case "fixed":
            return SourceEpoch(rule.fallback or ZIP_EPOCH, "the plan (the release's date)")
        case "debian-changelog":
            return debian_epoch(rule, root, details)
        case "commit-date":
            commit = details.get("commit")
            if not commit:
                raise InternalError("an epoch from a commit date, but the source is no git tree")
            return commit_epoch(root, str(commit), env, runner)
