"""Conda-channel publish: the package's own ``subdir`` never places a file outside the channel
(security review f1b4bec, N3: ``../../x`` and an absolute subdir wrote outside it)."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from torchsmith.errors import PublishError
from torchsmith.publish.conda_channel import add_to_channel, channel_path, package_subdir


def _package(where: Path, subdir: str) -> Path:
    """A minimal ``.tar.bz2`` conda package whose ``info/index.json`` names ``subdir``."""
    index = {"name": "evil", "version": "1.0", "build": "0", "build_number": 0, "subdir": subdir}
    data = json.dumps(index).encode()
    path = where / "evil-1.0-0.tar.bz2"
    with tarfile.open(path, "w:bz2") as tar:
        member = tarfile.TarInfo("info/index.json")
        member.size = len(data)
        tar.addfile(member, io.BytesIO(data))
    return path


@pytest.mark.parametrize("subdir", ["../../escape-dir", "/tmp/abs-escape", "linux-64/..", "a/b"])
def test_a_subdir_that_is_not_a_platform_is_refused(tmp_path: Path, subdir: str) -> None:
    package = _package(tmp_path, subdir)
    channel = tmp_path / "conda" / "chan" / "sub"
    with pytest.raises(PublishError, match="not a platform"):
        add_to_channel(package, channel)
    assert [p.name for p in tmp_path.rglob("evil*")] == [package.name]


def test_platform_subdirs_pass(tmp_path: Path) -> None:
    assert package_subdir(_package(tmp_path, "linux-64")) == "linux-64"
    assert package_subdir(_package(tmp_path, "noarch")) == "noarch"


def test_a_link_inside_the_channel_does_not_carry_the_write_out(tmp_path: Path) -> None:
    channel = tmp_path / "chan"
    channel.mkdir()
    (channel / "linux-64").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(PublishError, match="outside the channel"):
        channel_path(channel, "linux-64", "evil-1.0-0.tar.bz2")
    assert channel_path(channel, "noarch", "x.conda") == channel.resolve() / "noarch" / "x.conda"
