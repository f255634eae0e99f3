"""fetch_extra unpacks Debian packaging into its own ``src/``, so an archive member named like the
ownership marker cannot replace it (security review L7). apt is replaced by stand-ins here: the
unit tier starts no process; the real download is tests/integration/test_sources_debian.py."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from tests.unit.sources.archive_maker import ArchiveMaker
from torchsmith.proc import HOST
from torchsmith.sources import apt, owned
from torchsmith.sources.extras import fetch_extra

NAME = "pytorch_2.6.0+dfsg-7.debian.tar.xz"
HOSTILE_MARKER = {"created_by": "torchsmith", "staging_for": "elsewhere", "planted": True}


def _debian_tar(path: Path) -> None:
    arc = ArchiveMaker()
    arc.add("debian/patches/series", content=b"fix.patch\n")
    arc.add(owned.MARKER, content=json.dumps(HOSTILE_MARKER).encode())
    arc.write(path, "w:xz")


def _fake_apt(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    remote = apt.RemoteFile(uri=f"http://deb.debian.org/{NAME}", name=NAME, size=0, sha256="0")

    def download(
        rf: apt.RemoteFile, dest: Path, env: Mapping[str, str], on_line: object, runner: object
    ) -> None:
        calls.append(rf.name)
        _debian_tar(dest / rf.name)

    monkeypatch.setattr(apt, "lists_fresh", lambda cfg: True)
    monkeypatch.setattr(apt, "source_files", lambda cfg, pkg, ver, env, runner: [remote])
    monkeypatch.setattr(apt, "download", download)
    return calls


def test_a_member_named_like_the_marker_cannot_replace_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _fake_apt(monkeypatch)
    cfg = apt.AptConfig(root=tmp_path / "apt")
    ref = ("pytorch", "2.6.0+dfsg-7")
    unpacked = fetch_extra(cfg, tmp_path / "extra", ref, {}, runner=HOST)
    final = tmp_path / "extra" / "pytorch_2.6.0+dfsg-7"
    info = owned.read_info(final)
    assert "planted" not in info
    assert unpacked == final / "src"
    assert (unpacked / "debian" / "patches" / "series").read_text() == "fix.patch\n"
    assert info["sha256"] == {NAME: "0"}
    assert (
        fetch_extra(cfg, tmp_path / "extra", ref, {}, runner=HOST) == unpacked
    )  # cached: no download
    assert calls == [NAME]
