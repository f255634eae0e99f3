"""Credentials out of everything torchsmith shows or stores.

A URL may carry a secret in its user-info (``https://user:token@host/``) or in a signed query
string (``?X-Amz-Signature=…``, ``?sig=…``, ``?token=…``). :func:`redact_url` replaces those parts
with ``***`` in every URL found in a string, leaving the rest byte for byte; what it returns is
stable when a token is rotated or a URL re-signed, so it can also feed hashes and cache keys.
:func:`redact_text` additionally masks given literal secrets (e.g. a password read elsewhere).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

MASK = "***"
_URL = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://[^\s'\"<>]+")
# Query parameters whose value is (or is part of) a credential; compared lower-cased.
_SECRET_PARAMS = frozenset(
    {
        "access_token",
        "api_key",
        "apikey",
        "auth",
        "key",
        "password",
        "passwd",
        "private_token",
        "secret",
        "sig",
        "signature",
        "token",
        "x-oss-signature",
        "awsaccesskeyid",
        "expires",
        "policy",
        "key-pair-id",
    }
)
# Whole families: AWS SigV4 (X-Amz-Signature, -Credential, -Security-Token, -Date…) and GCS.
_SECRET_PREFIXES = ("x-amz-", "x-goog-")


def _secret_param(name: str) -> bool:
    lowered = name.lower()
    return lowered in _SECRET_PARAMS or lowered.startswith(_SECRET_PREFIXES)


def _redact_query(query: str) -> str:
    parts = []
    for item in query.split("&"):
        name, eq, _ = item.partition("=")
        parts.append(f"{name}={MASK}" if eq and _secret_param(name) else item)
    return "&".join(parts)


def _split(url: str) -> tuple[str, str, str, str, str]:
    """(scheme://, authority, path, query, fragment) without any normalisation."""
    scheme, _, rest = url.partition("://")
    rest, hash_, fragment = rest.partition("#")
    rest, _, query = rest.partition("?")
    slash = rest.find("/")
    authority, path = (rest, "") if slash < 0 else (rest[:slash], rest[slash:])
    return f"{scheme}://", authority, path, query, hash_ + fragment


def _redact_one(url: str) -> str:
    scheme, authority, path, query, fragment = _split(url)
    if "@" in authority:
        authority = f"{MASK}@{authority.rpartition('@')[2]}"
    query_part = f"?{_redact_query(query)}" if query or "?" in url.split("#", 1)[0] else ""
    return f"{scheme}{authority}{path}{query_part}{fragment}"


def redact_url(url: str) -> str:
    """``url`` (or any text) with the user-info and signed query values of every URL masked."""
    return _URL.sub(lambda match: _redact_one(match[0]), url)


def url_secrets(url: str) -> list[str]:
    """The secret parts of ``url`` (user-info, its password, signed query values), longest
    first, for masking them in text that does not show them as a URL (a tool's messages)."""
    _, authority, _, query, _ = _split(url) if "://" in url else ("", "", "", "", "")
    found = []
    if "@" in authority:
        userinfo = authority.rpartition("@")[0]
        found += [userinfo, userinfo.partition(":")[2]]
    for item in query.split("&") if query else []:
        name, eq, value = item.partition("=")
        if eq and _secret_param(name):
            found.append(value)
    return sorted({s for s in found if len(s) >= 3}, key=len, reverse=True)


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every URL redacted and every one of ``secrets`` (non-empty) masked."""
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return redact_url(text)


def redact_data(data: Any) -> Any:
    """A copy of JSON-like ``data`` (dicts, lists, strings…) with every string redacted."""
    if isinstance(data, str):
        return redact_url(data)
    if isinstance(data, dict):
        return {key: redact_data(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [redact_data(value) for value in data]
    return data
