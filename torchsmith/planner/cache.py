"""The compiler cache decision: which tool, which levels (local / shared directory, remote),
and what cannot be carried out (refused here, before anything runs).

Facts used: ccache 4.7.5 (Debian 12) stores remotely in Redis and over HTTP (WebDAV), not in
S3; sccache 0.16 stores in Redis, WebDAV and S3 and keeps the local disk as the first level
(multi-level chain). Both were measured here against real servers on loopback
(tests/integration/test_cache_remote.py).
"""

from __future__ import annotations

from typing import Any

from torchsmith.cache.model import CachePlan, remote_kind_of
from torchsmith.plan_model import Decision
from torchsmith.planner.context import Ctx, decide
from torchsmith.redact import redact_url, url_secrets
from torchsmith.spec import CacheSpec

DIST_NOT_YET = (
    "distributed compiling (cache.cluster, sccache-dist) is not carried out yet: no build of "
    "this version sends compile jobs to a cluster"
)


def resolve_cache(ctx: Ctx) -> tuple[Decision[Any], CachePlan]:
    """The cache kind (a decision with its origin) and the levels the build uses."""
    spec = ctx.spec.cache
    _check(ctx, spec)
    setup = _setup(spec)
    # where the cache stores does not change the result: the reason (hashed) leaves it out
    why = "no compiler cache" if spec.kind == "none" else f"{spec.kind} as compiler launcher "
    why += "" if spec.kind == "none" else "of C, C++ and CUDA; levels: cache_setup"
    if ctx.asked("cache.kind"):
        return ctx.user("cache.kind", spec.kind, f"{why} (asked)"), setup
    return decide(spec.kind, "default", why), setup


def _setup(spec: CacheSpec) -> CachePlan:
    remote = spec.location if spec.remote else None
    local = spec.dir if spec.dir else (spec.location if not spec.remote else None)
    return CachePlan(
        kind=spec.kind,
        local_dir=local,
        shared_dir=local is not None,
        remote=remote,
        remote_kind=remote_kind_of(remote) if remote else None,
        endpoint=spec.endpoint,
        region=spec.region,
        username=spec.username,
        credentials_env=spec.credentials_env,
        credentials_file=spec.credentials_file,
        basedir=spec.basedir,
        size=spec.size,
        cluster=spec.cluster,
        cluster_slots=spec.cluster_slots,
        cluster_token_env=spec.cluster_token_env,
        reason=_reason(spec, local, remote),
    )


def _reason(spec: CacheSpec, local: str | None, remote: str | None) -> str:
    if spec.kind == "none":
        return "no compiler cache: every object is compiled"
    first = f"shared directory {local}" if local else f"<cache root>/{spec.kind}"
    if remote is None:
        return f"{spec.kind} in {first}: rebuilds of this machine hit it"
    return (
        f"{spec.kind}: {first} first, then the remote {redact_url(remote)} that every build "
        "naming it fills and reads (objects another machine compiled are not compiled again)"
    )


def _check(ctx: Ctx, spec: CacheSpec) -> None:
    if spec.kind == "none":
        _none_problems(ctx, spec)
        return
    if spec.remote:
        _remote_problems(ctx, spec)
    elif spec.credentials_env or spec.credentials_file or spec.username:
        ctx.problem(
            "cache credentials/username given without a remote cache.location",
            "name the remote (cache.location = redis://HOST:PORT), or drop the credentials",
            "cache.credentials_env",
        )
    if spec.cluster:
        _cluster_problems(ctx, spec)


def _none_problems(ctx: Ctx, spec: CacheSpec) -> None:
    if spec.location or spec.dir or spec.cluster:
        ctx.problem(
            "cache.kind = none, yet a cache location, directory or cluster is named",
            "choose cache.kind = ccache or sccache, or drop cache.location/dir/cluster",
            "cache.kind",
        )


def _remote_problems(ctx: Ctx, spec: CacheSpec) -> None:
    location = str(spec.location)
    kind = remote_kind_of(location)
    if url_secrets(location):
        ctx.problem(
            f"cache.location {redact_url(location)} carries a credential; the plan, logs and "
            "the manifest would show it",
            "drop it from the URL; name the variable holding it (cache.credentials_env) or a "
            "mode-600 file (cache.credentials_file); change the password that was in the spec",
            "cache.location",
        )
    if kind == "s3" and spec.kind == "ccache":
        ctx.problem(
            "cache.location s3://: ccache has no S3 storage (its remotes: redis://, http://)",
            "use cache.kind = sccache for S3, or a Redis/WebDAV remote with ccache",
            "cache.location",
        )
    if spec.credentials_env and spec.credentials_file:
        ctx.problem(
            "cache.credentials_env and cache.credentials_file are both given",
            "keep one of them",
            "cache.credentials_file",
        )
    if kind == "s3" and (spec.credentials_env or spec.credentials_file):
        ctx.problem(
            "cache credentials for s3://: sccache reads AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY from the environment itself",
            "export those two variables and drop cache.credentials_env/credentials_file",
            "cache.credentials_env",
        )
    if (spec.endpoint or spec.region) and kind != "s3":
        ctx.problem(
            "cache.endpoint/region only apply to an s3:// location",
            "drop them, or give an s3://BUCKET location",
            "cache.endpoint",
        )


def _cluster_problems(ctx: Ctx, spec: CacheSpec) -> None:
    if spec.kind != "sccache":
        ctx.problem(
            f"cache.cluster needs cache.kind = sccache (sccache-dist), not {spec.kind}",
            "set cache.kind = sccache, or drop cache.cluster",
            "cache.cluster",
        )
    ctx.problem(
        f"cache.cluster {redact_url(str(spec.cluster))}: {DIST_NOT_YET}",
        "drop cache.cluster: the build compiles on this machine (a shared cache.location "
        "still saves every object another machine compiled)",
        "cache.cluster",
    )
