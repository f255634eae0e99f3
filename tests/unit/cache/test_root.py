"""L3 where the cache root is first touched: the build's preflight and `torchsmith source`."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from torchsmith.errors import HostError
from torchsmith.steps.preflight import _check_cache_root


def test_preflight_makes_a_private_cache_root(tmp_path: Path) -> None:
    _check_cache_root(tmp_path / "new" / "cache")
    assert stat.S_IMODE((tmp_path / "new" / "cache").stat().st_mode) == 0o700


def test_preflight_as_root_refuses_a_world_writable_cache_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    with pytest.raises(HostError, match="running as root"):
        _check_cache_root(shared)
