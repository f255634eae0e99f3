"""The compiler cache's transport rules (torchsmith/transport.py), as plan problems and
warnings: a remote or scheduler in clear text on another machine is refused when a credential
would travel (the password, the cluster token) unless ``cache.allow_cleartext`` says so, and
warned about otherwise, since whoever sits on the path can swap the objects it returns."""

from __future__ import annotations

from dataclasses import dataclass

from torchsmith.redact import redact_url, url_secrets
from torchsmith.spec import CacheSpec
from torchsmith.transport import cleartext_off_host

ACCEPT = "cache.allow_cleartext = true"


@dataclass(frozen=True)
class Finding:
    key: str
    what: str
    fix: str
    refused: bool


def _urls(spec: CacheSpec) -> list[tuple[str, str, bool]]:
    """(spec key, URL, whether a credential goes with it) of every remote the cache reaches."""
    secret = bool(spec.credentials_env or spec.credentials_file)
    found = [("cache.location", spec.location, secret)] if spec.remote and spec.location else []
    if spec.endpoint:
        found.append(("cache.endpoint", spec.endpoint, False))  # S3: requests signed (SigV4)
    if spec.cluster:
        found.append(("cache.cluster", spec.cluster, True))  # the client token
    return [(k, str(u), s) for k, u, s in found]


def _credential_in_endpoint(spec: CacheSpec) -> list[Finding]:
    """``cache.endpoint`` with user-info: the plan, the manifest and (by variable) every tool
    would carry it; S3 credentials are AWS's own variables."""
    if not spec.endpoint or not url_secrets(spec.endpoint):
        return []
    what = f"cache.endpoint {redact_url(spec.endpoint)} carries a credential"
    fix = "drop it from the URL; export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY instead"
    return [Finding("cache.endpoint", what, fix, True)]


def _cluster_sees_the_environment(spec: CacheSpec) -> list[Finding]:
    """sccache-dist sends each compile's whole environment to the build server, whose
    bubblewrap builder puts every variable on its world-readable command line (found by the
    canary scan of tests/integration/test_cache_shared.py). The build keeps only the plan's
    variables and an allow-list (cache/dist.py FORWARDED_NAMES); a remote cache's password,
    which sccache reads from the compile environment, would go too: refused."""
    if not spec.cluster:
        return []
    if spec.remote and (spec.credentials_env or spec.credentials_file):
        what = (
            "cache.cluster with a remote cache that needs a password: sccache-dist sends each "
            "compile's environment, the password included, to the build server, which puts "
            "every variable on its command line (bwrap --setenv), readable by its local users"
        )
        fix = "drop the remote's credentials (a read-only remote without them) or the cluster"
        return [Finding("cache.cluster", what, fix, True)]
    what = (
        "cache.cluster: sccache-dist sends each compile's environment to the build server, "
        "which puts every variable on its command line (bwrap --setenv), readable by the "
        "server's local users; this build keeps only the plan's variables and PATH, HOME, "
        "LANG, LC_*, TMPDIR and the compiler search paths (no other variable of this shell)"
    )
    fix = "use build servers whose local users you trust"
    return [Finding("cache.cluster", what, fix, False)]


def transport_findings(spec: CacheSpec) -> list[Finding]:
    """What the plan refuses (``refused``) or warns about for the cache's remotes."""
    findings = _credential_in_endpoint(spec) + _cluster_sees_the_environment(spec)
    for key, url, secret in _urls(spec):
        if not cleartext_off_host(url):
            continue
        shown = redact_url(url)
        danger = (
            f"{key} {shown} is plain text to another machine: anyone on the path reads "
            + ("its credential and " if secret else "")
            + "can swap cache entries, i.e. put code into every wheel built from it"
        )
        refused = secret and not spec.allow_cleartext
        fix = (
            f"use its TLS form (https://, rediss://), or, knowing the risk, accept it with {ACCEPT}"
        )
        findings.append(Finding(key, danger, fix, refused))
    return findings
