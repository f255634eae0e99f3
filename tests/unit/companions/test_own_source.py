"""A companion's own source (``companion_source``): the tree must say it is the planned release
(its version.txt), and a path tree changed since the last run is built again."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchsmith.companions.source import check_version, still_current, tree_version
from torchsmith.errors import SourceError
from torchsmith.plan_types import CompanionBuild, OwnSource
from torchsmith.proc import HOST


def vision(location: str, kind: str = "path") -> CompanionBuild:
    return CompanionBuild(
        name="torchvision",
        version="0.21.0",
        package="pytorch-vision",
        source=OwnSource(kind=kind, location=location),  # type: ignore[arg-type]
        env=[],
        smoke="nms",
        reason="test",
    )


def tree(root: Path, version: str | None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "setup.py").write_text("")
    if version is not None:
        (root / "version.txt").write_text(version + "\n")
    return root


def test_the_version_is_read_from_version_txt(tmp_path: Path) -> None:
    # pytorch/vision@v0.21.0:version.txt and pytorch/audio@v2.6.0:version.txt hold 'X.Y.Za0'
    assert tree_version(tree(tmp_path / "a", "0.21.0a0")) == "0.21.0"
    assert tree_version(tree(tmp_path / "b", "2.6.0a0")) == "2.6.0"
    assert tree_version(tree(tmp_path / "c", None)) is None
    assert tree_version(tree(tmp_path / "d", "not a version")) is None


def test_another_release_is_refused_naming_both(tmp_path: Path) -> None:
    root = tree(tmp_path / "v", "0.20.1a0")
    with pytest.raises(SourceError) as info:
        check_version(vision(str(root)), root, f"path:{root}")
    said = info.value.render()
    assert "is torchvision 0.20.1; the plan builds torchvision 0.21.0" in said
    assert "give a torchvision 0.21.0 tree" in said
    check_version(vision(str(root)), tree(tmp_path / "w", "0.21.0a0"), "path:w")


def test_a_tree_without_version_txt_is_refused(tmp_path: Path) -> None:
    root = tree(tmp_path / "v", None)
    with pytest.raises(SourceError, match=r"no readable version\.txt"):
        check_version(vision(str(root)), root, f"path:{root}")


def test_a_changed_path_tree_is_not_current(tmp_path: Path) -> None:
    root = tree(tmp_path / "v", "0.21.0a0")
    from torchsmith.sources.path import identity_of

    identity, _ = identity_of(root, {}, runner=HOST)
    comp = vision(str(root))
    assert still_current(comp, {"identity": identity}, {}, runner=HOST)
    (root / "setup.py").write_text("# changed\n")
    assert not still_current(comp, {"identity": identity}, {}, runner=HOST)
    assert still_current(
        vision("https://h/v.tar.gz", "tarball"), {"identity": "x"}, {}, runner=HOST
    )
