"""A companion's Debian source when the mirror serves the orig but not the .dsc (issue 11):
the file list and hashes come from the signed Sources index (real `apt-get source
--print-uris` output, tests/fixtures/companions)."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchsmith import kb
from torchsmith.errors import SourceError
from torchsmith.sources.apt import RemoteFile, parse_print_uris
from torchsmith.sources.debian_orig import OrigJob, check_index, pick_orig, verify_orig

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "companions"


def index(package: str, version: str) -> list[RemoteFile]:
    text = (FIXTURES / f"print-uris-{package}-{version}.txt").read_text()
    return parse_print_uris(text.splitlines())


def job(package: str, version: str, upstream: str) -> OrigJob:
    pkg = kb.load().debian_package(package, upstream)
    return OrigJob(package, version, upstream, pkg.dsc_sha256)


def test_the_orig_is_picked_with_the_index_sha256() -> None:
    orig = pick_orig(
        index("pytorch-vision", "0.21.0-3"), job("pytorch-vision", "0.21.0-3", "0.21.0")
    )
    assert orig.name == "pytorch-vision_0.21.0.orig.tar.gz" and orig.size == 13149842
    assert orig.sha256 == "0a4a967bbb7f9810f792cd0289a07fb98c8fb5d1303fae8b63e3a6b05d720058"


def test_the_kb_dsc_hash_agrees_with_the_signed_index() -> None:
    for package, version, upstream in (
        ("pytorch-vision", "0.21.0-3", "0.21.0"),
        ("pytorch-audio", "2.6.0-1", "2.6.0"),
    ):
        check_index(index(package, version), job(package, version, upstream))


def test_a_kb_dsc_hash_the_index_does_not_list_is_refused_naming_both() -> None:
    # the record before the fix: pytorch 2.6.0's .dsc hash given to pytorch-audio 2.6.0-1
    wrong = OrigJob(
        "pytorch-audio", "2.6.0-1", "2.6.0", kb.load().debian_package("pytorch", "2.6.0").dsc_sha256
    )
    with pytest.raises(SourceError) as info:
        check_index(index("pytorch-audio", "2.6.0-1"), wrong)
    assert "96e7c2ce22640ea22d6e62eb44b283a4e7804d9621363ee84e81983659fb44c3" in info.value.message
    assert "24783f3515b228ee476e788608ea0beea80409dbc8e861b6b8035c592d79646e" in info.value.message


def test_an_orig_whose_bytes_differ_from_the_index_is_refused(tmp_path: Path) -> None:
    orig = pick_orig(index("pytorch-audio", "2.6.0-1"), job("pytorch-audio", "2.6.0-1", "2.6.0"))
    path = tmp_path / orig.name
    path.write_bytes(b"not the tarball")
    with pytest.raises(SourceError, match="signed Sources index lists 3335d8fc"):
        verify_orig(path, orig)


def test_an_index_without_an_orig_is_an_error() -> None:
    files = [f for f in index("pytorch-audio", "2.6.0-1") if ".orig." not in f.name]
    with pytest.raises(SourceError, match="no single upstream tarball"):
        pick_orig(files, job("pytorch-audio", "2.6.0-1", "2.6.0"))
