"""The compiler cache decision: which tool, which levels (local / shared directory, remote),
and what cannot be carried out (refused here, before anything runs).

Facts used: ccache 4.7.5 (Debian 12) stores remotely in Redis and over HTTP (WebDAV), not in
S3; sccache 0.16 stores in Redis, WebDAV and S3 and keeps the local disk as the first level
(multi-level chain). Both were measured here against real servers on loopback
(tests/integration/test_cache_remote.py).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from torchsmith.plan_model import Decision
from torchsmith.plan_types import CachePlan, remote_kind_of
from torchsmith.planner.cache_transport import transport_findings
from torchsmith.planner.context import Ctx, decide
from torchsmith.redact import redact_url, url_secrets
from torchsmith.spec import CacheKind, CacheSpec

GIB_PER_DIST_JOB = 0.5
"""Local RAM per job compiled on the cluster: this machine still preprocesses it (g++ -E of a
torch_cpu TU peaks at a few hundred MB) and holds its input and output while it travels."""


def cluster_jobs(ctx: Ctx, jobs: tuple[Decision[int], Decision[int]]) -> Decision[int]:
    """MAX_JOBS with an sccache-dist cluster: this machine's jobs plus the cluster's slots,
    capped by local RAM at :data:`GIB_PER_DIST_JOB` per job (the user's max_jobs wins)."""
    cxx, spec = jobs[0], ctx.spec.cache
    if not spec.cluster or spec.kind != "sccache" or ctx.spec.max_jobs is not None:
        return cxx
    if not spec.cluster_slots:
        ctx.warnings.append(
            f"cache.cluster without cache.cluster_slots: MAX_JOBS stays {cxx.value} (this "
            "machine's); give the cluster's CPU count (`sccache --dist-status`: num_cpus)"
        )
        return cxx
    ram = ctx.host.ram_gib
    by_ram = int(ram // GIB_PER_DIST_JOB) if ram else cxx.value + spec.cluster_slots
    total = max(cxx.value, min(cxx.value + spec.cluster_slots, by_ram))
    return decide(
        total,
        "host",
        f"{cxx.value} local jobs ({cxx.reason}) + {spec.cluster_slots} cluster slots "
        f"(cache.cluster_slots), at most {by_ram} by RAM at {GIB_PER_DIST_JOB:g} GiB per "
        "distributed job (preprocessing stays local)",
    )


def resolve_cache(ctx: Ctx, local_jobs: int | None = None) -> tuple[Decision[CacheKind], CachePlan]:
    """The cache kind (a decision with its origin) and the levels the build uses;
    ``local_jobs``: MAX_JOBS without the cluster (the fallback when it does not answer)."""
    spec = ctx.spec.cache
    _check(ctx, spec)
    setup = _setup(spec, local_jobs if spec.cluster else None)
    # where the cache stores does not change the result: the reason (hashed) leaves it out
    why = "no compiler cache" if spec.kind == "none" else f"{spec.kind} as compiler launcher "
    why += "" if spec.kind == "none" else "of C, C++ and CUDA; levels: cache_setup"
    if ctx.asked("cache.kind"):
        return ctx.user("cache.kind", spec.kind, f"{why} (asked)"), setup
    return decide(spec.kind, "default", why), setup


def _setup(spec: CacheSpec, local_jobs: int | None) -> CachePlan:
    remote = spec.location if spec.remote else None
    local = spec.dir if spec.dir else (spec.location if not spec.remote else None)
    return CachePlan(
        kind=spec.kind,
        local_dir=local,
        shared_dir=local is not None,
        remote=remote,
        remote_kind=remote_kind_of(remote) if remote else None,
        remote_read_only=spec.read_only and remote is not None,
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
        local_jobs=local_jobs,
        reason=_reason(spec, local, remote),
    )


def _reason(spec: CacheSpec, local: str | None, remote: str | None) -> str:
    if spec.kind == "none":
        return "no compiler cache: every object is compiled"
    first = f"shared directory {local}" if local else f"<cache root>/{spec.kind}"
    where = (
        f"{spec.kind} in {first}: rebuilds of this machine hit it"
        if remote is None
        else f"{spec.kind}: {first} first, then the remote {redact_url(remote)} that every "
        "build naming it fills and reads (objects another machine compiled are not compiled "
        "again)"
    )
    if spec.cluster:
        where += (
            f"; misses compile on the sccache-dist cluster {redact_url(spec.cluster)} "
            "(this machine when it does not answer)"
        )
    return where


def url_problem(url: str) -> str | None:
    """Why ``SCHEME://HOST:PORT…`` cannot be connected to, or None (trial C07: port 99999 was
    planned; C08: 'http://[::1' was exit 70, Python's 'Invalid IPv6 URL'). A location without
    '://' is a shared directory, not checked here."""
    try:
        parts = urlsplit(url)
        port = parts.port  # ValueError past 65535 or not a number
    except ValueError as exc:
        return str(exc)
    if port == 0:
        return "port 0 is no port"
    return None if parts.hostname else "it names no host"


def _bad_urls(ctx: Ctx, spec: CacheSpec) -> bool:
    urls = {"cache.location": spec.location, "cache.endpoint": spec.endpoint}
    urls["cache.cluster"] = spec.cluster
    bad = {k: (u, why) for k, u in urls.items() if u and "://" in u and (why := url_problem(u))}
    for key, (url, why) in bad.items():
        ctx.problem(
            f"{key} {redact_url(url)} is not a URL a client can connect to: {why}",
            "write it as SCHEME://HOST:PORT (a port from 1 to 65535, an IPv6 address in [ ])",
            key,
        )
    return bool(bad)


def _check(ctx: Ctx, spec: CacheSpec) -> None:
    if spec.kind == "none":
        _none_problems(ctx, spec)
        return
    if _bad_urls(ctx, spec):
        return
    if spec.remote:
        _remote_problems(ctx, spec)
    elif spec.read_only:
        ctx.problem(
            "cache.read_only without a remote cache.location: there is nothing to only read",
            "name the remote (cache.location = rediss://HOST:PORT), or drop cache.read_only",
            "cache.read_only",
        )
    elif spec.credentials_env or spec.credentials_file or spec.username:
        ctx.problem(
            "cache credentials/username given without a remote cache.location",
            "name the remote (cache.location = redis://HOST:PORT), or drop the credentials",
            "cache.credentials_env",
        )
    if spec.cluster:
        _cluster_problems(ctx, spec)
    for found in transport_findings(spec):  # credentials only over TLS or loopback
        if found.refused:
            ctx.problem(found.what, found.fix, found.key)
        else:
            ctx.warnings.append(f"{found.what}; {found.fix}")


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
    cluster = str(spec.cluster)
    if spec.kind != "sccache":
        ctx.problem(
            f"cache.cluster needs cache.kind = sccache (sccache-dist), not {spec.kind}",
            "set cache.kind = sccache, or drop cache.cluster",
            "cache.cluster",
        )
    if not cluster.startswith(("http://", "https://")) or url_secrets(cluster):
        ctx.problem(
            f"cache.cluster {redact_url(cluster)}: not the scheduler's http(s)://HOST:PORT "
            "URL, or it carries a credential",
            "give the scheduler URL (http://HOST:10600) and the token by variable name "
            "(cache.cluster_token_env)",
            "cache.cluster",
        )
    if not spec.cluster_token_env:
        ctx.problem(
            "cache.cluster without cache.cluster_token_env: sccache-dist clients authenticate "
            "with the scheduler's client token",
            'name the environment variable holding it: cache.cluster_token_env = "VAR"',
            "cache.cluster_token_env",
        )
