"""Step ``fetch``: a git tree nothing pinned is said loudly, naming the commit fetched
(security review f1b4bec M2); a pinned one is not."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.steps.conftest import Rig
from torchsmith.sources.base import SourceTree
from torchsmith.steps import source

SHA = "0123456789abcdef0123456789abcdef01234567"


def _fetched(rig: Rig, monkeypatch: pytest.MonkeyPatch, pinned_by: str) -> list[str]:
    tree = SourceTree(
        kind="git", root=rig.user_tree, identity=SHA, version="2.5.1", owned=True,
        details={"url": "https://github.com/pytorch/pytorch.git", "ref": "v2.5.1",
                 "commit": SHA, "pinned_by": pinned_by},
    )  # fmt: skip

    def fetch_source(*_args: Any, **_kwargs: Any) -> SourceTree:
        return tree

    monkeypatch.setattr(source, "fetch_source", fetch_source)
    source.run_fetch(rig.ctx, rig.state)
    return rig.reporter.lines


def test_an_unpinned_git_tree_is_said_with_its_commit(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    said = _fetched(rig, monkeypatch, "nothing")
    assert [line for line in said if "WARNING" in line] == [
        f"WARNING: v2.5.1 is not pinned (no commit recorded in the knowledge base): fetched "
        f"commit {SHA}, unverified, recorded in the manifest (pinned_by: nothing)"
    ]


def test_a_pinned_git_tree_says_no_warning(rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    assert not [line for line in _fetched(rig, monkeypatch, "knowledge base") if "WARN" in line]

