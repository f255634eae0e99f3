"""The remote level of the compiler cache, spelled the way each tool reads it.

ccache (4.7.5 on Debian 12: ``redis-storage``, ``http-storage``) takes one URL in
``CCACHE_REMOTE_STORAGE``; the password goes into its user-info (the only place 4.7 reads it)
and WebDAV needs ``layout=flat`` (wsgidav answers 409 to ccache's sub-directories;
https://ccache.dev/manual/4.7.5.html#_http_storage_backend). sccache reads one variable per
setting (https://github.com/mozilla/sccache/blob/v0.16.0/docs/Configuration.md) and keeps the
local disk as the first level with ``SCCACHE_MULTILEVEL_CHAIN=disk,<remote>``.

A read-only remote (``cache.read_only``: builds that must not change what others get) is
ccache's ``|read-only=true`` attribute and sccache's ``SCCACHE_<KIND>_RW_MODE=READ_ONLY``.
Measured here against redis-server on loopback: ccache 4.7.5 and sccache 0.16.0 each wrote 0
keys with it (2 without), and a fresh local cache got its object from the remote (1 remote hit).

Two dicts come back: ``public`` (shown in the manifest, redacted anyway) and ``secret`` (only in
the compile environment). A location never carries credentials (refused at plan time).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import quote, urlsplit

from torchsmith.cache.credentials import CacheSecret
from torchsmith.plan_types import CachePlan, RemoteKind

_CCACHE_VERSION = re.compile(r"ccache version (\d+)\.(\d+)")
_CCACHE_FEATURE: dict[RemoteKind, str] = {"redis": "redis-storage", "webdav": "http-storage"}
RW_MODE: dict[RemoteKind, str] = {
    "redis": "SCCACHE_REDIS_RW_MODE",
    "webdav": "SCCACHE_WEBDAV_RW_MODE",
    "s3": "SCCACHE_S3_RW_MODE",
}
"""sccache's read-only switch per remote (``READ_ONLY``; docs/Configuration.md)."""


@dataclass(frozen=True)
class RemoteEnv:
    public: dict[str, str] = field(default_factory=dict)
    secret: dict[str, str] = field(default_factory=dict, repr=False)


def ccache_remote(setup: CachePlan, secret: CacheSecret | None) -> RemoteEnv:
    """``CCACHE_REMOTE_STORAGE`` for a redis:// or http(s):// (WebDAV) remote."""
    assert setup.remote is not None
    url = setup.remote + ("|layout=flat" if setup.remote_kind == "webdav" else "")
    url += "|read-only=true" if setup.remote_read_only else ""
    public = {"CCACHE_REMOTE_STORAGE": url}
    if secret is None:
        return RemoteEnv(public)
    return RemoteEnv(public, {"CCACHE_REMOTE_STORAGE": _with_userinfo(url, setup, secret)})


def _with_userinfo(url: str, setup: CachePlan, secret: CacheSecret) -> str:
    scheme, _, rest = url.partition("://")
    user = f"{quote(setup.username, safe='')}:" if setup.username else ""
    return f"{scheme}://{user}{quote(secret.reveal(), safe='')}@{rest}"


def sccache_remote(setup: CachePlan, secret: CacheSecret | None) -> RemoteEnv:
    """The ``SCCACHE_*`` variables of the remote, with the local disk as the first level."""
    assert setup.remote is not None and setup.remote_kind is not None
    builders = {"redis": _sccache_redis, "webdav": _sccache_webdav, "s3": _sccache_s3}
    env = builders[setup.remote_kind](setup, secret)
    env.public["SCCACHE_MULTILEVEL_CHAIN"] = f"disk,{setup.remote_kind}"
    if setup.remote_read_only:
        env.public[RW_MODE[setup.remote_kind]] = "READ_ONLY"
    return env


def _sccache_redis(setup: CachePlan, secret: CacheSecret | None) -> RemoteEnv:
    assert setup.remote is not None
    parts = urlsplit(setup.remote)
    public = {"SCCACHE_REDIS_ENDPOINT": f"{parts.scheme}://{parts.netloc}"}
    if parts.path.strip("/"):
        public["SCCACHE_REDIS_DB"] = parts.path.strip("/")
    if setup.username:
        public["SCCACHE_REDIS_USERNAME"] = setup.username
    hidden = {"SCCACHE_REDIS_PASSWORD": secret.reveal()} if secret else {}
    return RemoteEnv(public, hidden)


def _sccache_webdav(setup: CachePlan, secret: CacheSecret | None) -> RemoteEnv:
    assert setup.remote is not None
    # no trailing slash: sccache 0.16 joins "/<key>" and wsgidav refuses "//.sccache_check"
    public = {"SCCACHE_WEBDAV_ENDPOINT": setup.remote.rstrip("/")}
    if setup.username:
        public["SCCACHE_WEBDAV_USERNAME"] = setup.username
    if secret is None:
        return RemoteEnv(public)
    name = "SCCACHE_WEBDAV_PASSWORD" if setup.username else "SCCACHE_WEBDAV_TOKEN"
    return RemoteEnv(public, {name: secret.reveal()})


def _sccache_s3(setup: CachePlan, secret: CacheSecret | None) -> RemoteEnv:
    """S3 credentials are AWS's own variables (AWS_ACCESS_KEY_ID…), read by sccache from the
    environment it inherits; ``secret`` is unused (the plan refuses credentials_* for s3)."""
    assert setup.remote is not None
    parts = urlsplit(setup.remote)
    public = {"SCCACHE_BUCKET": parts.netloc, "SCCACHE_REGION": setup.region or "us-east-1"}
    if parts.path.strip("/"):
        public["SCCACHE_S3_KEY_PREFIX"] = parts.path.strip("/")
    if setup.endpoint:
        public["SCCACHE_ENDPOINT"] = setup.endpoint
        public["SCCACHE_S3_USE_SSL"] = "false" if setup.endpoint.startswith("http:") else "true"
    return RemoteEnv(public)


def ccache_remote_problem(version_text: str, kind: RemoteKind) -> str | None:
    """Why this ccache (its ``--version`` text) cannot use a ``kind`` remote, or None. Before
    4.7 ``CCACHE_REMOTE_STORAGE`` is not read at all (4.4-4.6 call it secondary storage, older
    ones have none): such a ccache would build without the remote and say nothing."""
    match = _CCACHE_VERSION.search(version_text)
    if match is None:
        return "its version could not be read from `ccache --version`"
    version = (int(match[1]), int(match[2]))
    if version < (4, 7):
        return f"ccache {match[1]}.{match[2]} does not read CCACHE_REMOTE_STORAGE (4.7 and later)"
    features = next((ln for ln in version_text.splitlines() if ln.startswith("Features:")), "")
    if _CCACHE_FEATURE.get(kind, "") not in features.split():
        return f"this ccache was built without {_CCACHE_FEATURE.get(kind, kind)}"
    return None
