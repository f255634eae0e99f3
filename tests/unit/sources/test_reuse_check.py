"""Reliability trial 6b (issue 16): an edited file in a cached source tree. The ``path:`` copy
and the unpacked tarball record a size+mtime listing when made; reusing a tree that changed
since is refused, naming what changed and where, with the way out."""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
from pathlib import Path

import pytest

from torchsmith.errors import SourceError
from torchsmith.plan_model import SourcePlan
from torchsmith.proc import HOST
from torchsmith.sources import owned
from torchsmith.sources.path import fetch_path
from torchsmith.sources.tarball import fetch_tarball


def _tree(root: Path) -> Path:
    root.mkdir()
    (root / "setup.py").write_text("# setup\n")
    (root / "a.c").write_text("int a(void) { return 1; }\n")
    (root / "b.c").write_text("int b(void) { return 2; }\n")
    return root


def _plan(kind: str, location: str) -> SourcePlan:
    return SourcePlan(kind=kind, location=location, ref="", reason="test")


def test_an_edited_path_copy_is_named_on_reuse(tmp_path: Path) -> None:
    user = _tree(tmp_path / "user")
    plan = _plan("path", str(user))
    first = fetch_path(plan, tmp_path / "cache", {}, runner=HOST)
    edited = first.root / "a.c"
    edited.write_text("int a(void) { return 666; }\n")  # same size, other bytes and mtime
    with pytest.raises(SourceError) as caught:
        fetch_path(plan, tmp_path / "cache", {}, runner=HOST)
    said = str(caught.value)
    assert f"the cached source tree {first.root} (the copy of {user})" in said
    assert said.endswith("changed after torchsmith made it: edited a.c")
    assert f"remove {first.root.parent}" in caught.value.hint
    owned.remove_owned(first.root.parent)  # the way out: the same command copies it again
    again = fetch_path(plan, tmp_path / "cache", {}, runner=HOST)
    assert (again.root / "a.c").read_text() == "int a(void) { return 1; }\n"
    assert (
        fetch_path(plan, tmp_path / "cache", {}, runner=HOST).root == again.root
    )  # untouched: reused


def _tarball(tmp_path: Path, tree: Path) -> Path:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(tree, arcname="pytorch-v2.5.1")
    path = tmp_path / "pytorch-v2.5.1.tar.gz"
    path.write_bytes(buf.getvalue())
    return path


def test_files_added_to_or_removed_from_an_unpacked_tarball_are_named(tmp_path: Path) -> None:
    archive = _tarball(tmp_path, _tree(tmp_path / "t"))
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    plan = _plan("tarball", f"{archive}#sha256={digest}")
    tree = fetch_tarball(plan, tmp_path / "cache", {}, runner=HOST)
    (tree.root / "b.c").unlink()
    (tree.root / "evil.c").write_text("")
    with pytest.raises(SourceError, match=r"unpacked from pytorch-v2\.5\.1\.tar\.gz") as caught:
        fetch_tarball(plan, tmp_path / "cache", {}, runner=HOST)
    assert str(caught.value).endswith(
        "made it: removed pytorch-v2.5.1/b.c, added pytorch-v2.5.1/evil.c"
    )


def test_a_touched_file_counts_as_edited_and_long_lists_are_cut(tmp_path: Path) -> None:
    user = _tree(tmp_path / "user")
    for i in range(7):
        (user / f"x{i}.c").write_text("")
    plan = _plan("path", str(user))
    root = fetch_path(plan, tmp_path / "cache", {}, runner=HOST).root
    for name in ["a.c", *(f"x{i}.c" for i in range(7))]:
        os.utime(root / name, ns=(0, 0))
    with pytest.raises(SourceError) as caught:
        fetch_path(plan, tmp_path / "cache", {}, runner=HOST)
    assert str(caught.value).endswith("edited a.c, edited x0.c, edited x1.c, edited x2.c, "
                                      "edited x3.c and 3 more")  # fmt: skip


def test_a_tree_cached_before_listings_gets_one_on_reuse(tmp_path: Path) -> None:
    user = _tree(tmp_path / "user")
    plan = _plan("path", str(user))
    root = fetch_path(plan, tmp_path / "cache", {}, runner=HOST).root
    listing = root.parent / owned.LISTING
    recorded = json.loads(listing.read_text())
    assert sorted(recorded) == ["a.c", "b.c", "setup.py"]
    listing.unlink()
    fetch_path(plan, tmp_path / "cache", {}, runner=HOST)
    assert json.loads(listing.read_text()) == recorded
