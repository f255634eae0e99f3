"""Credentials out of everything torchsmith shows or stores: one redaction, by allow-list.

A URL may carry a secret in its user-info (``https://user:token@host/``) or in its query string
(``?X-Amz-Signature=…``, ``?token=…``, ``?client_secret=…``, or a name nobody can foresee).
:func:`redact_url` masks the user-info and every query value whose name is not in
:data:`SHOWN_PARAMS` (names known to hold no secret: ``v``, ``ref``, ``format``…), in every URL
found in a string, leaving the rest byte for byte; a scheme-less ``user:password@host`` (a
proxy or an endpoint written without ``http://``) is masked too. What it returns is stable when
a token is rotated, so it may feed hashes, but never a cache key alone: two URLs that differ
only in a masked value redact alike (key by a hash of the URL itself).

:func:`url_secrets` names the parts that are certainly secret (user-info, values of parameters
whose name says so), for refusing a URL that carries a credential and for masking those values
in text that does not show them as a URL; :func:`redact_text` also masks given literal secrets.
A token in a URL's *path* (``https://host/<token>/simple/``) cannot be told from a name and is
shown: give such indexes their token by ``--token-env`` and friends.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

MASK = "***"
_URL = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://[^\s'\"<>]+")
SHOWN_PARAMS = frozenset(
    {
        "v",
        "sv",
        "version",
        "ref",
        "rev",
        "branch",
        "tag",
        "format",
        "arch",
        "platform",
        "os",
        "python",
        "filename",
        "name",
        "path",
        "subdirectory",
        "egg",
        "raw",
        "download",
        "type",
        "archive",
        "page",
        "per_page",
    }
)
"""Query parameters whose values may be shown (compared lower-cased); every other value is
masked (an allow-list: a deny-list of secret names missed access_key, client_secret, jwt…)."""

_SECRET_WORDS = ("token", "secret", "key", "sig", "pass", "auth", "credential", "jwt", "policy")
"""A parameter whose name holds one of these is certainly a credential (:func:`url_secrets`)."""
_SECRET_PREFIXES = ("x-amz-", "x-goog-", "x-oss-")
_BARE_USERINFO = re.compile(r"(?<![\w/@:.%+-])[\w.%+-]+:[^\s:@/'\"<>]+@(?=[A-Za-z0-9.\[-])")


def _secret_param(name: str) -> bool:
    lowered = name.lower()
    return lowered.startswith(_SECRET_PREFIXES) or any(w in lowered for w in _SECRET_WORDS)


def _shown_param(name: str) -> bool:
    return name.lower() in SHOWN_PARAMS


def _redact_query(query: str) -> str:
    parts = []
    for item in query.split("&"):
        name, eq, _ = item.partition("=")
        parts.append(f"{name}={MASK}" if eq and not _shown_param(name) else item)
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
    """``url`` (or any text) with the user-info and every query value not known to be harmless
    masked, in every URL, and a scheme-less ``user:password@host`` masked too."""
    text = _URL.sub(lambda match: _redact_one(match[0]), url)
    return _BARE_USERINFO.sub(f"{MASK}@", text)


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
