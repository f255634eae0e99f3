"""A fetched tree's identity is checked against the knowledge base where it records one."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchsmith import kb
from torchsmith.errors import SourceError
from torchsmith.sources.base import SourceTree
from torchsmith.sources.identity import check_identity

DSC = "pytorch_1.13.1+dfsg-4.dsc"
GOOD = "0c8c5dc52df6a728a8d00d87b5c042ec9a6b96a8ce4d58ab9de44b307b4402de"


def _tree(sha: str, version: str = "1.13.1") -> SourceTree:
    details = {"package": "pytorch", f"sha256:pytorch_{version}+dfsg-4.dsc": sha}
    return SourceTree("debian", Path("/x"), "id", version, True, details)


def test_matching_dsc_hash_is_reported_checked() -> None:
    assert "matches the knowledge base" in check_identity(_tree(GOOD), kb.load())


def test_other_dsc_hash_is_refused_naming_both() -> None:
    with pytest.raises(SourceError) as info:
        check_identity(_tree("0" * 64), kb.load())
    assert f"sha256:{DSC} is {'0' * 64}, expected {GOOD}" in info.value.message


def test_unrecorded_identity_is_said_not_checked() -> None:
    tree = SourceTree("path", Path("/x"), "abc", "1.13.1", False, {})
    assert check_identity(tree, kb.load()) == "not recorded in the knowledge base"
