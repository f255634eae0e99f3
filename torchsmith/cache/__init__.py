"""Compiler cache: local, shared directory, remote (Redis / WebDAV / S3) levels, statistics.

:mod:`.model` is what the plan holds, :mod:`.launcher` what the build environment gets,
:mod:`.remote` how each tool spells a remote, :mod:`.credentials` where its secret comes from,
:mod:`.stats` what the tools report back.
"""

from __future__ import annotations

from torchsmith.cache.launcher import (
    LAUNCHER_KEYS,
    CompilerCache,
    cache_from_plan,
    launcher_env_keys,
    make_cache,
    with_cluster,
)
from torchsmith.cache.stats import (
    CacheStats,
    parse_ccache_print_stats,
    parse_sccache_json,
    stats_record,
)
from torchsmith.plan_types import CachePlan

__all__ = [
    "LAUNCHER_KEYS",
    "CachePlan",
    "CacheStats",
    "CompilerCache",
    "cache_from_plan",
    "launcher_env_keys",
    "make_cache",
    "parse_ccache_print_stats",
    "parse_sccache_json",
    "stats_record",
    "with_cluster",
]
