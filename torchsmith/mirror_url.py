"""Which transports a ``--git-mirror`` may use: one rule for the spec (checked at load, so `plan`,
`matrix` and `image` refuse what the fetch would) and for the fetch itself (``sources.git``)."""

from __future__ import annotations

from urllib.parse import urlsplit

from torchsmith.redact import redact_url

_MIRROR_SCHEMES = frozenset({"https", "ssh", "file"})
_PLAIN_TEXT = frozenset({"http", "git", "ftp"})


def mirror_refusal(mirror: str) -> tuple[str, str] | None:
    """None for a mirror git fetches over an encrypted or local transport, else (what, hint)."""
    scheme = urlsplit(mirror).scheme.lower() if "://" in mirror else ""
    if scheme in _MIRROR_SCHEMES or (not scheme and "::" not in mirror):
        return None
    if scheme in _PLAIN_TEXT:
        return (
            f"--git-mirror {redact_url(mirror)} uses plain-text {scheme}://",
            "anyone on the network path could change what is fetched (and read credentials): "
            "use an https://, ssh:// or file:// mirror",
        )
    transport = scheme or mirror.split("::", maxsplit=1)[0]
    return (
        f"--git-mirror {redact_url(mirror)}: transport {transport!r} is not supported",
        "use an https://, ssh:// or file:// URL, or a local path",
    )
