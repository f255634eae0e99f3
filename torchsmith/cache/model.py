"""The compiler cache as the plan holds it: pure data, no secret (only where one comes from)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from torchsmith.spec import CacheKind

RemoteKind = Literal["redis", "webdav", "s3"]
SCHEMES: dict[str, RemoteKind] = {
    "redis": "redis",
    "rediss": "redis",
    "http": "webdav",
    "https": "webdav",
    "s3": "s3",
}


class CachePlan(BaseModel):
    """Where the compiler cache stores, level by level, and why."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: CacheKind
    local_dir: str | None = Field(None, description="the first level; None: <cache root>/<kind>")
    shared_dir: bool = Field(False, description="local_dir is shared with other builds/users")
    remote: str | None = Field(None, description="the remote URL (never with credentials)")
    remote_kind: RemoteKind | None = None
    endpoint: str | None = None
    region: str | None = None
    username: str | None = None
    credentials_env: str | None = Field(None, description="variable holding the secret")
    credentials_file: str | None = Field(None, description="mode-600 file holding the secret")
    basedir: str | None = Field(None, description="None: the cache root")
    size: str | None = None
    cluster: str | None = Field(None, description="sccache-dist scheduler URL")
    cluster_slots: int | None = None
    cluster_token_env: str | None = None
    local_jobs: int | None = Field(
        None, description="MAX_JOBS without the cluster (used when it does not answer)"
    )
    reason: str = ""


def remote_kind_of(location: str) -> RemoteKind | None:
    scheme, sep, _ = location.partition("://")
    return SCHEMES.get(scheme.lower()) if sep else None
