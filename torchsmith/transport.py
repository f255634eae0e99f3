"""Transport rules for every remote torchsmith talks to or hands to a tool (compiler-cache
remotes and scheduler, package indexes, registries, mirrors): a credential travels only over
TLS or to this machine (loopback). Plain text elsewhere hands the password to anyone on the
path, and for a compiler cache also the objects: whoever can change an entry puts code into
every wheel built from it (security review f1b4bec, N4: a swapped ccache entry made a
``return 42`` print 1337)."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

CLEARTEXT_SCHEMES = frozenset({"http", "redis", "git", "ftp"})
"""Schemes whose traffic is not encrypted (their TLS forms: https, rediss)."""


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback address (127.0.0.0/8, ::1): traffic never leaves the
    machine."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def cleartext_off_host(url: str) -> bool:
    """True when ``url`` is a plain-text scheme to a host other than this machine."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    return parts.scheme.lower() in CLEARTEXT_SCHEMES and not is_loopback(host)
