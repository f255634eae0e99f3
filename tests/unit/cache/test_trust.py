"""What root may run code from (security review f1b4bec L3): a compiler-cache directory or a
cache root whose own mode, or any parent's, lets another user change or swap it is refused.
The rule is applied for this test's user (``as_root=True``: owners root or this user), so it
runs the same as root and as anyone else."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from torchsmith.cache import CachePlan, cache_from_plan
from torchsmith.cache.trust import ancestor_reason, untrusted_reason
from torchsmith.errors import HostError

ME = os.geteuid()


def _reason(path: Path) -> str | None:
    return untrusted_reason(path, ME, as_root=True)


def test_a_private_directory_and_a_missing_one_pass(tmp_path: Path) -> None:
    mine = tmp_path / "cache"
    mine.mkdir(mode=0o700)
    assert _reason(mine) is None and _reason(tmp_path / "not" / "yet") is None


def test_a_group_writable_shared_cache_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o2775)  # the ccache manual's shared setup (CCACHE_UMASK=002)
    assert "group or others may write it" in str(_reason(shared))


def test_a_writable_parent_lets_another_user_swap_it(tmp_path: Path) -> None:
    parent = tmp_path / "home"
    (parent / "cache").mkdir(parents=True, mode=0o700)
    parent.chmod(0o777)
    assert f"{parent} has mode" in str(_reason(parent / "cache"))
    assert f"{parent} has mode" in str(ancestor_reason(parent / "cache", ME, as_root=True))
    parent.chmod(0o755)
    assert _reason(parent / "cache") is None


def test_a_link_is_judged_by_where_it_leads(tmp_path: Path) -> None:
    target = tmp_path / "open"
    target.mkdir()
    target.chmod(0o777)
    (tmp_path / "link").symlink_to(target)
    assert "group or others" in str(_reason(tmp_path / "link"))


def test_sticky_root_owned_tmp_is_a_fine_parent_but_not_a_cache() -> None:
    assert ancestor_reason(Path("/tmp/x"), ME, as_root=True) is None
    assert "group or others" in str(_reason(Path("/tmp")))


def test_another_users_directory_is_refused(tmp_path: Path) -> None:
    assert "belongs to uid" in str(untrusted_reason(tmp_path, ME + 1, as_root=True))


def test_not_root_nothing_is_refused(tmp_path: Path) -> None:
    assert untrusted_reason(Path("/tmp"), 1000) is None


def test_the_build_refuses_a_shared_cache_as_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    setup = CachePlan(kind="ccache", local_dir=str(shared), shared_dir=True)
    with pytest.raises(HostError, match="running as root"):
        cache_from_plan(setup, tmp_path, "/usr/bin/ccache", {})


def test_the_cache_root_of_root_needs_safe_parents(tmp_path: Path) -> None:
    from torchsmith.workspace import check_cache_root

    parent = tmp_path / "home"
    (parent / "cache").mkdir(parents=True, mode=0o700)
    parent.chmod(0o777)  # like a user's ~/.cache under sudo -E: its owner may rename ours
    with pytest.raises(HostError, match="cache root") as caught:
        check_cache_root(parent / "cache", euid=0)
    if ME == 0:  # as another user, the cache root's own owner is refused first
        assert "another user could replace the cache root" in caught.value.render()
    parent.chmod(0o755)
