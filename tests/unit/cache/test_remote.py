"""The shared compiler cache: statistics with a remote level (real ccache 4.7.5 / sccache 0.16
output), each tool's spelling of a remote, and where its secret may and may not go."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.unit.private_base import private_base_fixture  # noqa: F401 (the fixture)
from torchsmith.cache import (
    CachePlan,
    CacheStats,
    CompilerCache,
    cache_from_plan,
    launcher_env_keys,
)
from torchsmith.cache.remote import ccache_remote_problem
from torchsmith.cache.stats import parse_ccache_print_stats, parse_sccache_json, stats_record
from torchsmith.errors import UsageError
from torchsmith.redact import redact_data

pytestmark = pytest.mark.usefixtures("private_base")  # sccache private dirs: not in /tmp

PASSWORD = "canary-Pw/7:x@y"  # a canary, not a credential


def _text(fixtures: Path, name: str) -> str:
    return (fixtures / "cache" / name).read_text()


def test_ccache_second_workspace_hits_the_remote(fixtures: Path) -> None:
    first = parse_ccache_print_stats(
        _text(fixtures, "ccache-4.7.5-redis-first-workspace.txt"), True
    )
    assert first == CacheStats(hits=0, misses=3, remote_hits=0, remote_errors=0)
    text = _text(fixtures, "ccache-4.7.5-redis-second-workspace.txt")
    second = parse_ccache_print_stats(text, remote=True)
    assert second == CacheStats(hits=3, misses=1, remote_hits=3, remote_errors=0)
    assert second.local_hits == 0 and second.remote_hit_rate == 0.75
    assert parse_ccache_print_stats(text).remote_hits is None  # no remote: not claimed


def test_sccache_multilevel_remote_hits_are_the_levels_after_disk(fixtures: Path) -> None:
    text = _text(fixtures, "sccache-0.16.0-multilevel-redis-second-workspace.json")
    stats = parse_sccache_json(text, remote=True)
    assert stats == CacheStats(hits=3, misses=1, remote_hits=3, remote_errors=0)
    data = json.loads(text)
    data["stats"]["multi_level"] = None  # a single-level remote: the tool does not say
    assert parse_sccache_json(json.dumps(data), remote=True).remote_hits is None


def test_the_manifest_record_has_local_and_remote_hits() -> None:
    record = stats_record("ccache", CacheStats(3, 1, 3, 0), "redis://127.0.0.1:6379")
    assert record["hits"] == 3 and record["local_hits"] == 0 and record["remote_hits"] == 3
    assert record["hit_rate"] == 0.75 and record["remote_hit_rate"] == 0.75
    assert record["remote"] == "redis://127.0.0.1:6379"
    assert stats_record("ccache", None, None)["remote_hits"] is None


def _cache(tmp_path: Path, env: dict[str, str] | None = None, **setup: object) -> CompilerCache:
    plan = CachePlan.model_validate(setup)
    program = f"/usr/bin/{plan.kind}"
    return cache_from_plan(plan, tmp_path, program, env or {})


def test_ccache_redis_with_password_from_the_environment(tmp_path: Path) -> None:
    env = {"REDIS_PW": PASSWORD}
    cache = _cache(tmp_path, env, kind="ccache", remote="redis://127.0.0.1:6379/2",
                   remote_kind="redis", credentials_env="REDIS_PW")  # fmt: skip
    public, secret = cache.env(), cache.secret_env()
    assert public["CCACHE_REMOTE_STORAGE"] == "redis://127.0.0.1:6379/2"
    assert secret["CCACHE_REMOTE_STORAGE"] == "redis://canary-Pw%2F7%3Ax%40y@127.0.0.1:6379/2"
    assert PASSWORD not in json.dumps(launcher_env_keys({**public, **secret}))
    assert PASSWORD not in repr(cache)


def test_ccache_webdav_is_flat_and_the_secret_redacts_in_a_manifest(tmp_path: Path) -> None:
    path = tmp_path / "pw"
    path.write_text(PASSWORD + "\n")
    path.chmod(0o600)
    cache = _cache(tmp_path, kind="ccache", remote="http://127.0.0.1:8080/cc",
                   remote_kind="webdav", username="ci", credentials_file=str(path))  # fmt: skip
    secret = cache.secret_env()["CCACHE_REMOTE_STORAGE"]
    assert secret.startswith("http://ci:canary-Pw%2F7%3Ax%40y@127.0.0.1:8080/cc|layout=flat")
    assert "canary" not in json.dumps(redact_data({"env": secret}))


def test_sccache_levels_and_secrets(tmp_path: Path) -> None:
    env = {"DAV": PASSWORD}
    cache = _cache(tmp_path, env, kind="sccache", remote="https://dav.example/cache/",
                   remote_kind="webdav", username="ci", credentials_env="DAV")  # fmt: skip
    public = cache.env()
    assert public["SCCACHE_MULTILEVEL_CHAIN"] == "disk,webdav"
    assert public["SCCACHE_WEBDAV_ENDPOINT"] == "https://dav.example/cache"
    assert public["SCCACHE_DIR"] == str(tmp_path / "sccache")
    assert public["SCCACHE_SERVER_UDS"].endswith(".sock")
    assert cache.secret_env() == {"SCCACHE_WEBDAV_PASSWORD": PASSWORD}
    assert PASSWORD not in json.dumps(public)
    assert cache.stop_command() == ["/usr/bin/sccache", "--stop-server"]


def test_sccache_s3_names_bucket_prefix_and_endpoint(tmp_path: Path) -> None:
    cache = _cache(tmp_path, kind="sccache", remote="s3://builds/torch/cache", remote_kind="s3",
                   endpoint="http://127.0.0.1:9000", size="20G")  # fmt: skip
    env = cache.env()
    assert env["SCCACHE_BUCKET"] == "builds" and env["SCCACHE_S3_KEY_PREFIX"] == "torch/cache"
    assert env["SCCACHE_ENDPOINT"] == "http://127.0.0.1:9000"
    assert env["SCCACHE_S3_USE_SSL"] == "false" and env["SCCACHE_CACHE_SIZE"] == "20G"
    assert set(launcher_env_keys(env)) == set(env)  # all of it may be shown


def test_a_shared_directory_is_group_writable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    cache = _cache(tmp_path, kind="ccache", local_dir="/srv/ccache", shared_dir=True)
    env = cache.env()
    assert env["CCACHE_DIR"] == "/srv/ccache" and env["CCACHE_UMASK"] == "002"


def test_root_never_makes_its_shared_cache_group_writable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As root a group-writable cache is refused on the next run (check_trusted): root's ccache
    keeps its default umask, so 'build --cache-dir X' twice works."""
    monkeypatch.setattr("os.geteuid", lambda: 0)
    cache = _cache(tmp_path, kind="ccache", local_dir="/srv/ccache", shared_dir=True)
    assert "CCACHE_UMASK" not in cache.env()


def test_a_missing_variable_or_a_readable_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="REDIS_PW is not set"):
        _cache(tmp_path, {}, kind="ccache", remote="redis://h:1", remote_kind="redis",
               credentials_env="REDIS_PW")  # fmt: skip
    path = tmp_path / "pw"
    path.write_text(PASSWORD)
    path.chmod(0o644)
    with pytest.raises(UsageError, match="mode 0644") as info:
        _cache(tmp_path, kind="ccache", remote="redis://h:1", remote_kind="redis",
               credentials_file=str(path))  # fmt: skip
    assert PASSWORD not in str(info.value) and os.path.exists(path)


def test_a_ccache_that_would_ignore_the_remote_is_named(fixtures: Path) -> None:
    debian12 = _text(fixtures, "ccache-4.7.5-version.txt")
    assert ccache_remote_problem(debian12, "redis") is None
    assert ccache_remote_problem(debian12, "webdav") is None
    bullseye = ccache_remote_problem(_text(fixtures, "ccache-4.2-bullseye-version.txt"), "redis")
    assert bullseye == "ccache 4.2 does not read CCACHE_REMOTE_STORAGE (4.7 and later)"
    assert ccache_remote_problem("", "redis") is not None
