"""The compiler cache (ccache or sccache) used as CMake's compiler launcher.

The cache lives in the torchsmith cache root. ``CCACHE_BASEDIR`` is the cache root too, so two
build directories of the same source hit each other's entries. ``USE_CCACHE`` is always pinned
to ``0``: PyTorch 1.x's CMake turns ccache on by itself when it finds one, which changes every
command line behind the plan's back (docs/debian-source-builds.md §1.6, "always set USE_CCACHE").
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from torchsmith.spec import CacheKind

_LANGS = ("C", "CXX", "CUDA")


@dataclass(frozen=True)
class CacheStats:
    """Counters of compilations the cache answered (hits) or had to run (misses)."""

    hits: int = 0
    misses: int = 0

    def minus(self, before: CacheStats) -> CacheStats:
        return CacheStats(self.hits - before.hits, self.misses - before.misses)

    @property
    def total(self) -> int:
        return self.hits + self.misses

    @property
    def hit_rate(self) -> float | None:
        """hits / (hits + misses), or None when nothing was compiled."""
        return self.hits / self.total if self.total else None


@dataclass(frozen=True)
class CompilerCache:
    """Which compiler cache, where it stores, and the paths it treats as equal."""

    kind: CacheKind
    directory: Path
    basedir: Path
    program: str | None = None

    def env(self) -> dict[str, str]:
        """The variables that make CMake use this cache (and only this one)."""
        env = {"USE_CCACHE": "0"}
        if self.kind == "none" or self.program is None:
            return env
        for lang in _LANGS:
            env[f"CMAKE_{lang}_COMPILER_LAUNCHER"] = self.program
        if self.kind == "ccache":
            env["CCACHE_DIR"] = str(self.directory)
            env["CCACHE_BASEDIR"] = str(self.basedir)
            env["CCACHE_NOHASHDIR"] = "1"
        else:
            env["SCCACHE_DIR"] = str(self.directory)
            env["SCCACHE_BASEDIRS"] = str(self.basedir)
        return env

    def stats_command(self) -> list[str] | None:
        """The command printing machine-readable statistics, None without a cache."""
        if self.kind == "none" or self.program is None:
            return None
        if self.kind == "ccache":
            return [self.program, "--print-stats"]
        return [self.program, "--show-stats", "--stats-format=json"]

    def parse_stats(self, text: str) -> CacheStats:
        if self.kind == "sccache":
            return parse_sccache_json(text)
        return parse_ccache_print_stats(text)


def parse_ccache_print_stats(text: str) -> CacheStats:
    """Read ``ccache --print-stats`` (ccache ≥ 4.0: one ``key<TAB>value`` per line)."""
    values: dict[str, int] = {}
    for line in text.splitlines():
        key, _, value = line.partition("\t")
        if value.strip().isdigit():
            values[key.strip()] = int(value)
    hits = values.get("direct_cache_hit", 0) + values.get("preprocessed_cache_hit", 0)
    return CacheStats(hits=hits, misses=values.get("cache_miss", 0))


def _count_sum(node: object) -> int:
    if isinstance(node, dict):
        counts = node.get("counts", node)
        return sum(v for v in counts.values() if isinstance(v, int))
    return node if isinstance(node, int) else 0


def parse_sccache_json(text: str) -> CacheStats:
    """Read ``sccache --show-stats --stats-format=json`` (per-language hit/miss counts)."""
    stats = json.loads(text).get("stats", {})
    return CacheStats(_count_sum(stats.get("cache_hits")), _count_sum(stats.get("cache_misses")))


def make_cache(kind: str, cache_root: Path, program: str | None) -> CompilerCache:
    """The plan's compiler cache, stored under ``cache_root/<kind>``."""
    checked: CacheKind = kind if kind in ("ccache", "sccache") else "none"  # type: ignore[assignment]
    return CompilerCache(checked, cache_root / checked, cache_root, program)


# The launcher variables a manifest may show: where the cache is and how paths are hashed.
# Never a prefix match: CCACHE_REMOTE_STORAGE, SCCACHE_REDIS, SCCACHE_WEBDAV_PASSWORD,
# SCCACHE_AZURE_CONNECTION_STRING… carry credentials (https://ccache.dev/manual/latest.html,
# https://github.com/mozilla/sccache/blob/main/docs/Configuration.md).
LAUNCHER_KEYS = frozenset(
    {
        "USE_CCACHE",
        "CCACHE_DIR",
        "CCACHE_BASEDIR",
        "CCACHE_NOHASHDIR",
        "CCACHE_HASHDIR",
        "CCACHE_MAXSIZE",
        "CCACHE_COMPILERCHECK",
        "CCACHE_SLOPPINESS",
        "CCACHE_DISABLE",
        "SCCACHE_DIR",
        "SCCACHE_BASEDIRS",
        "SCCACHE_CACHE_SIZE",
        "SCCACHE_DIRECT",
        "SCCACHE_RECACHE",
        "SCCACHE_NO_DAEMON",
        "SCCACHE_IDLE_TIMEOUT",
    }
)


def launcher_env_keys(env: Mapping[str, str]) -> dict[str, str]:
    """The known, non-secret launcher variables of ``env`` (for the manifest)."""
    keys = {k: v for k, v in env.items() if k in LAUNCHER_KEYS}
    keys.update({k: v for k, v in env.items() if k.endswith("_COMPILER_LAUNCHER")})
    return keys
