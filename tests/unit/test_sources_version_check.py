"""The fetched tree's own version.txt against the planned release (no process)."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchsmith.errors import SourceError
from torchsmith.sources.base import SourceTree
from torchsmith.sources.version_check import check_tree_version, same_release


def _tree(tmp_path: Path, version: str | None, kind: str = "bundle") -> SourceTree:
    if version is not None:
        (tmp_path / "version.txt").write_text(version + "\n", encoding="utf-8")
    return SourceTree(kind, tmp_path, "sha256:0", version or "", True)  # type: ignore[arg-type]


@pytest.mark.parametrize("found", ["1.13.1", "1.13.1+dfsg"])
def test_the_planned_release_and_a_debian_local_version_pass(tmp_path: Path, found: str) -> None:
    check_tree_version(_tree(tmp_path, found, "debian"), "1.13.1")


def test_a_tree_of_another_release_is_refused_naming_both(tmp_path: Path) -> None:
    with pytest.raises(SourceError) as info:
        check_tree_version(_tree(tmp_path, "1.13.1"), "2.5.1")
    text = info.value.render()
    assert "is torch 1.13.1 (its version.txt), but the plan builds torch 2.5.1" in text
    assert "--torch 1.13.1" in text


@pytest.mark.parametrize("found", ["1.13.0a0", "1.13.1a0", "1.13.1rc2", "1.13.1.post1", "junk"])
def test_pre_releases_and_branch_checkouts_are_not_the_release(tmp_path: Path, found: str) -> None:
    assert not same_release(found, "1.13.1")
    with pytest.raises(SourceError):
        check_tree_version(_tree(tmp_path, found, "path"), "1.13.1")


def test_no_version_txt_main_and_commits_are_not_checked(tmp_path: Path) -> None:
    check_tree_version(_tree(tmp_path, None), "1.13.1")
    check_tree_version(_tree(tmp_path, "2.16.0a0"), "main")
    check_tree_version(_tree(tmp_path, "2.16.0a0"), "0123456789abcdef")
