"""The compiler cache (ccache or sccache) used as CMake's compiler launcher, for C, C++ and
CUDA (nvcc) alike.

The local level lives in the torchsmith cache root (or the plan's directory). ``CCACHE_BASEDIR``
is the cache root too (or the plan's basedir), so two build directories of the same source hit
each other's entries. ``USE_CCACHE`` is always pinned to ``0``: PyTorch 1.x's CMake turns ccache
on by itself when it finds one, which changes every command line behind the plan's back
(docs/debian-source-builds.md §1.6, "always set USE_CCACHE"). A remote level
(:mod:`torchsmith.cache.remote`) adds variables; its secret stays out of :meth:`env`.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from torchsmith.cache.credentials import read_secret
from torchsmith.cache.dist import CONF_NAME, client_config, cluster_token, write_private
from torchsmith.cache.private import make_private_dir, remove_private_dir
from torchsmith.cache.remote import RemoteEnv, ccache_remote, sccache_remote
from torchsmith.cache.stats import (
    CacheStats,
    parse_ccache_print_stats,
    parse_sccache_json,
    stats_record,
)
from torchsmith.cache.trust import untrusted_reason
from torchsmith.errors import HostError
from torchsmith.plan_types import CachePlan
from torchsmith.spec import CacheKind

_LANGS = ("C", "CXX", "CUDA")


@dataclass(frozen=True)
class CompilerCache:
    """Which compiler cache, where it stores, and the paths it treats as equal."""

    kind: CacheKind
    directory: Path
    basedir: Path
    program: str | None = None
    size: str | None = None
    shared: bool = False
    remote: str | None = None
    remote_env: RemoteEnv = field(default_factory=RemoteEnv)
    cluster: str | None = None
    """The sccache-dist scheduler compile jobs go to (None: this machine compiles)."""
    dist_conf: Path | None = None
    cluster_fallback: str | None = None
    """Why the named cluster is not used (it did not answer), or None."""
    private_dir: Path | None = None
    """This build's 0700 directory for sccache's socket and the cluster config (cache/private.py);
    None: the cache directory (tests only; a real build always has one)."""

    @property
    def active(self) -> bool:
        return self.kind != "none" and self.program is not None

    def env(self) -> dict[str, str]:
        """The variables that make CMake use this cache (and only this one); no secret."""
        env = {"USE_CCACHE": "0"}
        if not self.active:
            return env
        for lang in _LANGS:
            env[f"CMAKE_{lang}_COMPILER_LAUNCHER"] = str(self.program)
        env.update(self._ccache_env() if self.kind == "ccache" else self._sccache_env())
        env.update(self.remote_env.public)
        if self.dist_conf is not None:
            env["SCCACHE_CONF"] = str(self.dist_conf)  # the path only; the token is inside
        return env

    def secret_env(self) -> dict[str, str]:
        """The variables that carry the remote's credentials (compile environment only)."""
        return dict(self.remote_env.secret) if self.active else {}

    def _ccache_env(self) -> dict[str, str]:
        env = {"CCACHE_DIR": str(self.directory), "CCACHE_BASEDIR": str(self.basedir)}
        env["CCACHE_NOHASHDIR"] = "1"
        if self.size:
            env["CCACHE_MAXSIZE"] = self.size
        if self.shared and os.geteuid() != 0:  # ccache manual, "Sharing a local storage"
            env["CCACHE_UMASK"] = "002"  # group-writable; never for root: check_trusted refuses it
        return env

    def _sccache_env(self) -> dict[str, str]:
        env = {"SCCACHE_DIR": str(self.directory), "SCCACHE_BASEDIRS": str(self.basedir)}
        env["SCCACHE_SERVER_UDS"] = str(self.server_socket)  # a server of this build alone
        if self.size:
            env["SCCACHE_CACHE_SIZE"] = self.size
        return env

    @property
    def server_socket(self) -> Path:
        """The sccache server's socket, in this build's private directory: never where another
        user could bind it first (a shared cache directory, a computable /tmp name). A server
        that reads the cluster config has a socket of its own: when the cluster does not answer
        it is stopped, and the local server starting right after must not race it."""
        name = "server-dist.sock" if self.dist_conf else "server.sock"
        return (self.private_dir or self.directory) / name

    def release(self) -> None:
        """Remove this build's private directory (socket, cluster config with its token)."""
        remove_private_dir(self.private_dir)

    def stats_command(self) -> list[str] | None:
        """The command printing machine-readable statistics, None without a cache."""
        if not self.active:
            return None
        if self.kind == "ccache":
            return [str(self.program), "--print-stats"]
        return [str(self.program), "--show-stats", "--stats-format=json"]

    def stop_command(self) -> list[str] | None:
        """The command that ends this build's sccache server (ccache has none)."""
        if not self.active or self.kind != "sccache":
            return None
        return [str(self.program), "--stop-server"]

    def dist_status_command(self) -> list[str] | None:
        """``sccache --dist-status`` when a cluster is configured."""
        return [str(self.program), "--dist-status"] if self.dist_conf is not None else None

    def without_cluster(self, why: str) -> CompilerCache:
        """This cache compiling locally, because the cluster ``why`` did not answer."""
        return dataclasses.replace(self, dist_conf=None, cluster_fallback=why)

    def record(self, stats: CacheStats | None) -> dict[str, Any]:
        """The manifest's ``compiler_cache``: hits by level, and where compiling happened."""
        record = stats_record(self.kind, stats, self.remote)
        record["cluster"] = self.cluster
        record["cluster_fallback"] = self.cluster_fallback
        return record

    def parse_stats(self, text: str) -> CacheStats:
        remote = self.remote is not None
        if self.kind == "sccache":
            return parse_sccache_json(text, remote)
        return parse_ccache_print_stats(text, remote)


def make_cache(kind: CacheKind, cache_root: Path, program: str | None) -> CompilerCache:
    """The plan's compiler cache, stored under ``cache_root/<kind>``, no remote."""
    return CompilerCache(kind, cache_root / kind, cache_root, program)


def cache_from_plan(
    setup: CachePlan, cache_root: Path, program: str | None, env: Mapping[str, str]
) -> CompilerCache:
    """The compiler cache the plan's cache section describes; the remote's secret is read from
    ``env`` (the build's base environment) or the plan's mode-600 file."""
    base = make_cache(setup.kind, cache_root, program)
    directory = Path(setup.local_dir).expanduser() if setup.local_dir else base.directory
    if base.kind != "none":
        check_trusted(directory)
    basedir = Path(setup.basedir).expanduser() if setup.basedir else base.basedir
    remote_env = RemoteEnv()
    private = make_private_dir(env) if base.kind == "sccache" and program else None
    if setup.remote is not None and base.kind != "none":
        secret = read_secret(setup, env)
        build = ccache_remote if base.kind == "ccache" else sccache_remote
        remote_env = build(setup, secret)
    return CompilerCache(
        base.kind,
        directory,
        basedir,
        program,
        setup.size,
        setup.shared_dir,
        setup.remote,
        remote_env,
        private_dir=private,
    )


def check_trusted(directory: Path) -> None:
    """As root, refuse a compiler-cache directory another user can write or swap: every object
    in it ends up in the wheel (a swapped entry made ``return 42`` print 1337, security review
    f1b4bec N4; ``cache.dir`` was never checked, L3)."""
    problem = untrusted_reason(directory)
    if problem is not None:
        raise HostError(
            f"compiler cache {directory}: {problem}; running as root, torchsmith would put "
            "objects another user can write into the wheel",
            "build as a non-root user (the cache may stay shared), or give root a cache "
            "directory only root can write (cache.dir)",
        )


def with_cluster(cache: CompilerCache, setup: CachePlan, env: Mapping[str, str]) -> CompilerCache:
    """``cache`` sending compile jobs to the plan's sccache-dist scheduler: the client config
    (with the token from ``env``) is written mode 600 into the build's private directory, which
    :meth:`CompilerCache.release` removes when the build ends (never the shared cache dir)."""
    if setup.cluster is None or cache.kind != "sccache" or not cache.active:
        return cache
    token = cluster_token(setup.cluster_token_env, env)
    text = client_config(setup.cluster, cache.directory / "dist-toolchains", token)
    conf = write_private((cache.private_dir or cache.directory) / CONF_NAME, text)
    return dataclasses.replace(cache, cluster=setup.cluster, dist_conf=conf)


# The launcher variables a manifest may show: where the cache is and how paths are hashed.
# Never a prefix match: CCACHE_REMOTE_STORAGE (with user-info), SCCACHE_REDIS_PASSWORD,
# SCCACHE_WEBDAV_PASSWORD/TOKEN, SCCACHE_AZURE_CONNECTION_STRING… carry credentials
# (https://ccache.dev/manual/latest.html,
# https://github.com/mozilla/sccache/blob/main/docs/Configuration.md).
LAUNCHER_KEYS = frozenset(
    {
        "USE_CCACHE",
        "CCACHE_DIR",
        "CCACHE_BASEDIR",
        "CCACHE_NOHASHDIR",
        "CCACHE_HASHDIR",
        "CCACHE_MAXSIZE",
        "CCACHE_UMASK",
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
        "SCCACHE_SERVER_UDS",
        "SCCACHE_MULTILEVEL_CHAIN",
        "SCCACHE_REDIS_ENDPOINT",
        "SCCACHE_REDIS_DB",
        "SCCACHE_WEBDAV_ENDPOINT",
        "SCCACHE_BUCKET",
        "SCCACHE_ENDPOINT",
        "SCCACHE_REGION",
        "SCCACHE_S3_KEY_PREFIX",
        "SCCACHE_S3_USE_SSL",
        "SCCACHE_REDIS_RW_MODE",
        "SCCACHE_WEBDAV_RW_MODE",
        "SCCACHE_S3_RW_MODE",
        "SCCACHE_CONF",
    }
)


def launcher_env_keys(env: Mapping[str, str]) -> dict[str, str]:
    """The known, non-secret launcher variables of ``env`` (for the manifest)."""
    keys = {k: v for k, v in env.items() if k in LAUNCHER_KEYS}
    keys.update({k: v for k, v in env.items() if k.endswith("_COMPILER_LAUNCHER")})
    return keys
