"""Compiler-cache statistics from real `ccache --print-stats` output, and the launcher env."""

from __future__ import annotations

from pathlib import Path

from torchsmith.cache import (
    CacheStats,
    launcher_env_keys,
    make_cache,
    parse_ccache_print_stats,
)


def _stats(fixtures: Path, name: str) -> CacheStats:
    return parse_ccache_print_stats((fixtures / "build" / name).read_text())


def test_real_cold_and_warm_stats(fixtures: Path) -> None:
    cold = _stats(fixtures, "ccache-4.7.5-print-stats-after-cold-c10.txt")
    warm = _stats(fixtures, "ccache-4.7.5-print-stats-after-warm-c10.txt")
    assert cold == CacheStats(hits=3, misses=124)  # configure's try_compile + 67 c10 objects
    delta = warm.minus(cold)
    assert delta == CacheStats(hits=127, misses=0)
    assert delta.hit_rate == 1.0


def test_hit_rate_of_nothing_is_none() -> None:
    assert CacheStats().hit_rate is None
    assert CacheStats(3, 1).hit_rate == 0.75


def test_ccache_env_pins_use_ccache(tmp_path: Path) -> None:
    cache = make_cache("ccache", tmp_path, "/usr/bin/ccache")
    env = cache.env()
    assert env["USE_CCACHE"] == "0"
    assert env["CMAKE_CXX_COMPILER_LAUNCHER"] == "/usr/bin/ccache"
    assert env["CCACHE_DIR"] == str(tmp_path / "ccache")
    assert env["CCACHE_BASEDIR"] == str(tmp_path)
    assert cache.stats_command() == ["/usr/bin/ccache", "--print-stats"]
    assert set(launcher_env_keys({**env, "PATH": "/bin"})) == set(env)


def test_no_cache_sets_only_the_pin(tmp_path: Path) -> None:
    cache = make_cache("none", tmp_path, None)
    assert cache.env() == {"USE_CCACHE": "0"}
    assert cache.stats_command() is None


def test_sccache_env(tmp_path: Path) -> None:
    env = make_cache("sccache", tmp_path, "/usr/bin/sccache").env()
    assert env["SCCACHE_DIR"] == str(tmp_path / "sccache")
    assert env["CMAKE_C_COMPILER_LAUNCHER"] == "/usr/bin/sccache"
