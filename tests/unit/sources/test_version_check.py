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


@pytest.mark.parametrize("found", ["1.13.1", "1.13.1+dfsg", "1.13.0a0"])
def test_the_release_its_local_version_and_its_series_dev_version_pass(
    tmp_path: Path, found: str
) -> None:
    """Upstream's v1.13.1 tree says 1.13.0a0 (Debian's orig tarball of it, read by
    tests/integration/test_sources_debian.py)."""
    check_tree_version(_tree(tmp_path, found, "debian"), "1.13.1")


def test_a_tree_of_another_release_is_refused_naming_both(tmp_path: Path) -> None:
    with pytest.raises(SourceError) as info:
        check_tree_version(_tree(tmp_path, "1.13.1"), "2.5.1")
    text = info.value.render()
    assert "is torch 1.13.1 (its version.txt), but the plan builds torch 2.5.1" in text
    assert "--torch 1.13.1" in text


@pytest.mark.parametrize(
    "found", ["1.14.0a0", "1.12.0a0", "1.13.0", "1.13.1a0", "1.13.1rc2", "1.13.1.post1", "junk"]
)
def test_other_series_releases_and_candidates_are_not_the_release(
    tmp_path: Path, found: str
) -> None:
    assert not same_release(found, "1.13.1")
    with pytest.raises(SourceError):
        check_tree_version(_tree(tmp_path, found, "path"), "1.13.1")


def test_no_version_txt_main_and_commits_are_not_checked(tmp_path: Path) -> None:
    check_tree_version(_tree(tmp_path, None), "1.13.1")
    check_tree_version(_tree(tmp_path, "2.16.0a0"), "main")
    check_tree_version(_tree(tmp_path, "2.16.0a0"), "0123456789abcdef")


def test_a_series_tree_for_another_release_names_its_series(tmp_path: Path) -> None:
    with pytest.raises(SourceError) as info:
        check_tree_version(_tree(tmp_path, "1.13.0a0"), "2.5.1")
    assert "--torch 1.13.N, the release of the 1.13 series this tree is" in info.value.render()
