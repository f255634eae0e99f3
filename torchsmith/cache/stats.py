"""What the compiler cache answered: hits (local and remote) and misses, read from the tools'
machine-readable statistics.

* ccache ≥ 4.0 ``--print-stats``: one ``key<TAB>value`` per line; ``direct_cache_hit`` +
  ``preprocessed_cache_hit`` are all hits, ``local_storage_hit`` / ``remote_storage_hit`` say
  which level answered (ccache 4.7.5 on Debian 12, recorded in tests/fixtures/cache/).
* sccache ``--show-stats --stats-format=json``: ``cache_hits``/``cache_misses`` per language;
  with a multi-level chain (``SCCACHE_MULTILEVEL_CHAIN=disk,redis``, sccache ≥ 0.13) a
  ``multi_level`` list with the hits of each level, L0 being the local disk.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CacheStats:
    """Counters of compilations the cache answered (hits) or had to run (misses); of the hits,
    how many the remote answered (``None``: no remote, or the tool does not say)."""

    hits: int = 0
    misses: int = 0
    remote_hits: int | None = None
    remote_errors: int | None = None
    dist_compiles: int | None = None
    """Compilations sent to sccache-dist build servers (None: no cluster configured)."""

    def minus(self, before: CacheStats) -> CacheStats:
        return CacheStats(
            self.hits - before.hits,
            self.misses - before.misses,
            _minus(self.remote_hits, before.remote_hits),
            _minus(self.remote_errors, before.remote_errors),
            _minus(self.dist_compiles, before.dist_compiles),
        )

    @property
    def total(self) -> int:
        return self.hits + self.misses

    @property
    def hit_rate(self) -> float | None:
        """hits / (hits + misses), or None when nothing was compiled."""
        return self.hits / self.total if self.total else None

    @property
    def local_hits(self) -> int | None:
        return None if self.remote_hits is None else self.hits - self.remote_hits

    @property
    def remote_hit_rate(self) -> float | None:
        """remote hits / (hits + misses): the share of compilations another build paid for."""
        if self.remote_hits is None or not self.total:
            return None
        return self.remote_hits / self.total


def _minus(after: int | None, before: int | None) -> int | None:
    if after is None:
        return None
    return after - (before or 0)


def parse_ccache_print_stats(text: str, remote: bool = False) -> CacheStats:
    """Read ``ccache --print-stats``; with a remote, also which hits the remote answered."""
    values: dict[str, int] = {}
    for line in text.splitlines():
        key, _, value = line.partition("\t")
        if value.strip().isdigit():
            values[key.strip()] = int(value)
    hits = values.get("direct_cache_hit", 0) + values.get("preprocessed_cache_hit", 0)
    misses = values.get("cache_miss", 0)
    if not remote:
        return CacheStats(hits=hits, misses=misses)
    errors = values.get("remote_storage_error", 0) + values.get("remote_storage_timeout", 0)
    return CacheStats(hits, misses, values.get("remote_storage_hit", 0), errors)


def _count_sum(node: object) -> int:
    if isinstance(node, dict):
        counts = node.get("counts", node)
        return sum(v for v in counts.values() if isinstance(v, int))
    return node if isinstance(node, int) else 0


def _remote_levels(stats: dict[str, Any]) -> int | None:
    levels = stats.get("multi_level")
    if not isinstance(levels, list) or len(levels) < 2:
        return None
    return sum(int(level.get("hits", 0)) for level in levels[1:] if isinstance(level, dict))


def parse_sccache_json(text: str, remote: bool = False) -> CacheStats:
    """Read ``sccache --show-stats --stats-format=json``; with a remote, the hits of every level
    after the local disk (L0) are remote hits."""
    stats = json.loads(text).get("stats", {})
    hits = _count_sum(stats.get("cache_hits"))
    misses = _count_sum(stats.get("cache_misses"))
    dist = _dist_compiles(stats)
    if not remote:
        return CacheStats(hits, misses, dist_compiles=dist)
    errors = int(stats.get("cache_read_errors", 0)) + int(stats.get("cache_write_errors", 0))
    return CacheStats(hits, misses, _remote_levels(stats), errors, dist)


def _dist_compiles(stats: dict[str, Any]) -> int | None:
    """``dist_compiles`` (per build server) summed; ``None`` when nothing went to a cluster."""
    found = stats.get("dist_compiles")
    if not isinstance(found, dict) or not found:
        return None
    return sum(v for v in found.values() if isinstance(v, int))


def stats_record(kind: str, stats: CacheStats | None, remote: str | None) -> dict[str, Any]:
    """The manifest's ``compiler_cache``: all hits, and of them the local and the remote ones
    (``remote`` is the URL without credentials; the manifest is redacted once more)."""
    record: dict[str, Any] = {"kind": kind, "remote": remote}
    if stats is None:
        return {**record, "hits": None, "misses": None, "hit_rate": None, "remote_hits": None}
    return {
        **record,
        "hits": stats.hits,
        "misses": stats.misses,
        "hit_rate": _rounded(stats.hit_rate),
        "local_hits": stats.local_hits,
        "remote_hits": stats.remote_hits,
        "remote_hit_rate": _rounded(stats.remote_hit_rate),
        "remote_errors": stats.remote_errors,
        "distributed_compiles": stats.dist_compiles,
    }


def _rounded(rate: float | None) -> float | None:
    return None if rate is None else round(rate, 4)
