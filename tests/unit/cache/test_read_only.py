"""A read-only remote (``cache.read_only``): builds that must not change what other builds get
from a shared cache (pull requests, untrusted machines) read it and never write it; trusted CI
writes it. Spelled the way each tool reads it, as measured against redis-server on loopback
(ccache 4.7.5, sccache 0.16.0: 0 keys written with it, 2 without; a fresh local cache hit the
remote)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.planner.test_cache_plan import plan, refusal
from tests.unit.private_base import private_base_fixture  # noqa: F401 (the fixture)
from torchsmith.cache import CachePlan, cache_from_plan, launcher_env_keys

pytestmark = pytest.mark.usefixtures("private_base")


def _env(tmp_path: Path, kind: str, remote: str, remote_kind: str) -> dict[str, str]:
    setup = CachePlan(kind=kind, remote=remote, remote_kind=remote_kind,  # type: ignore[arg-type]
                      remote_read_only=True)  # fmt: skip
    cache = cache_from_plan(setup, tmp_path, f"/usr/bin/{kind}", {})
    try:
        return cache.env()
    finally:
        cache.release()


def test_ccache_reads_the_remote_only(tmp_path: Path) -> None:
    env = _env(tmp_path, "ccache", "rediss://cache.example:6380", "redis")
    assert env["CCACHE_REMOTE_STORAGE"] == "rediss://cache.example:6380|read-only=true"
    webdav = _env(tmp_path, "ccache", "https://dav.example/c", "webdav")
    assert webdav["CCACHE_REMOTE_STORAGE"] == "https://dav.example/c|layout=flat|read-only=true"


@pytest.mark.parametrize(
    ("remote", "kind", "variable"),
    [
        ("rediss://cache.example:6380", "redis", "SCCACHE_REDIS_RW_MODE"),
        ("https://dav.example/c", "webdav", "SCCACHE_WEBDAV_RW_MODE"),
        ("s3://bucket/prefix", "s3", "SCCACHE_S3_RW_MODE"),
    ],
)
def test_sccache_reads_the_remote_only(
    tmp_path: Path, remote: str, kind: str, variable: str
) -> None:
    env = _env(tmp_path, "sccache", remote, kind)
    assert env[variable] == "READ_ONLY"
    assert launcher_env_keys(env)[variable] == "READ_ONLY"  # the manifest says so


def test_the_plan_carries_it_and_refuses_it_without_a_remote() -> None:
    spec = {"cache.location": "rediss://cache.example:6380", "cache.read_only": True}
    setup = plan(**spec).cache_setup
    assert setup is not None and setup.remote_read_only
    assert "cache.read_only without a remote" in refusal(**{"cache.read_only": True})
    assert (
        plan(**spec).plan_hash() == plan(**{"cache.location": spec["cache.location"]}).plan_hash()
    )
