"""Pure parts of the tarball and bundle providers."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchsmith.errors import SourceError
from torchsmith.sources.bundle import listing, verify_tree
from torchsmith.sources.tarball import is_url, split_location, version_from_name


def test_location_with_an_expected_hash() -> None:
    digest = "AB" * 32
    assert split_location(f"/x/pytorch-v2.5.1.tar.gz#sha256={digest}") == (
        "/x/pytorch-v2.5.1.tar.gz",
        digest.lower(),
    )
    assert split_location("https://h/p.tar.gz") == ("https://h/p.tar.gz", None)


@pytest.mark.parametrize(
    ("name", "version"),
    [("pytorch-v2.5.1.tar.gz", "2.5.1"), ("pytorch_1.13.1+dfsg.orig.tar.xz", "1.13.1"),
     ("torch-2.6.0rc1.tar.gz", "2.6.0rc1"), ("snapshot.tar", "")],
)  # fmt: skip
def test_version_from_the_file_name(name: str, version: str) -> None:
    assert version_from_name(name) == version


def test_is_url() -> None:
    assert is_url("https://github.com/x.tar.gz")
    assert not is_url("/home/u/x.tar.gz")


def test_bundle_listing_keeps_empty_dirs_and_skips_git_and_build(tmp_path: Path) -> None:
    (tmp_path / "third_party" / "pocketfft").mkdir(parents=True)
    (tmp_path / "third_party" / "sub").mkdir()
    (tmp_path / "third_party" / "sub" / ".git").write_text("gitdir: ../../.git/modules/sub\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "x.o").write_text("obj")
    (tmp_path / "setup.py").write_text("print()\n")
    (tmp_path / "link").symlink_to("setup.py")
    entries = listing(tmp_path)
    assert entries["third_party/pocketfft"] == "dir"
    assert entries["link"] == "link:setup.py"
    assert len(entries["setup.py"]) == 64
    assert not [name for name in entries if ".git" in name or name.startswith("build")]
    verify_tree(tmp_path, entries)
    (tmp_path / "setup.py").write_text("changed\n")
    with pytest.raises(SourceError, match="1 changed"):
        verify_tree(tmp_path, entries)
