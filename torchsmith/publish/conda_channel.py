"""Conda packages into a channel directory: ``SUBDIR/FILE`` (the subdirectory read from the
package's own ``info/index.json``), copied atomically, then the channel indexed with py-rattler
(``repodata.json`` per subdirectory). Idempotent: a file of the same name with the same sha256
is a no-op (the index is still brought up to date), another one is refused."""

from __future__ import annotations

import json
import re
from pathlib import Path

from torchsmith.atomic import copy_file
from torchsmith.errors import PublishError, UsageError
from torchsmith.hashing import sha256_file
from torchsmith.packaging.conda import index_channel
from torchsmith.publish.model import Outcome, Published

SUBDIR = re.compile(r"noarch|[a-z0-9]+-[a-z0-9_]+")
"""What a conda subdir looks like (``linux-64``, ``osx-arm64``, ``noarch``): one path component,
never ``..`` or an absolute path — the value comes from the package, which may not be ours."""


def package_subdir(package: Path) -> str:
    """``linux-64``, ``noarch``…: the ``subdir`` of the package's ``info/index.json``."""
    from rattler.package import IndexJson

    try:
        index = IndexJson.from_package_archive(package)
    except Exception as exc:  # rattler raises its own exception types for a bad archive
        raise UsageError(f"{package}: not a conda package ({exc})", "build one first") from None
    subdir = str(index.subdir or "noarch")
    if not SUBDIR.fullmatch(subdir):
        raise PublishError(
            f"{package}: its info/index.json names the subdir {subdir!r}, which is not a "
            "platform (linux-64, noarch, …); it would place the file outside the channel",
            "publish only packages you built, or rebuild this one",
        )
    return subdir


def channel_path(channel: Path, subdir: str, name: str) -> Path:
    """``channel/subdir/name``, refused unless it stays inside ``channel`` once resolved (a
    planted link at ``channel/subdir`` must not carry the write elsewhere)."""
    root = channel.resolve()
    dest = (root / subdir).resolve() / name
    if Path(name).name != name or not dest.is_relative_to(root):
        raise PublishError(
            f"{channel}/{subdir}/{name} resolves to {dest}, outside the channel",
            "remove the link inside the channel directory, or publish to another one",
        )
    return dest


def add_to_channel(package: Path, channel: Path) -> Published:
    """``package`` into ``channel`` (created when missing) and the channel re-indexed."""
    sha = sha256_file(package)
    dest = channel_path(channel, package_subdir(package), package.name)
    outcome: Outcome = "already-there"
    if dest.exists():
        theirs = sha256_file(dest)
        if theirs != sha:
            raise PublishError(
                f"{dest} already exists with sha256 {theirs}; this package is {sha}",
                "give this build another build number or version, or remove the old package "
                "from the channel first",
            )
    else:
        dest.parent.mkdir(parents=True, exist_ok=True)
        copy_file(package, dest)
        outcome = "uploaded"
    index_channel(channel)
    return Published(package.name, sha, outcome, str(channel))


def publish_packages(files: list[Path], channel: Path) -> list[Published]:
    return [add_to_channel(f, channel) for f in files]


def repodata(channel: Path, subdir: str) -> dict[str, object]:
    """The channel's index of one subdirectory (for callers and tests)."""
    data: dict[str, object] = json.loads((channel / subdir / "repodata.json").read_text())
    return data
