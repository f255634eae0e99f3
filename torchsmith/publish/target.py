"""``--to`` of ``torchsmith publish``: ``pypi-index:URL``, ``conda-channel:DIR``,
``oci:REGISTRY/REPO:TAG`` or ``wheel-dir:DIR``, parsed and checked before anything is read or
sent."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from torchsmith.errors import UsageError
from torchsmith.redact import redact_url, url_secrets
from torchsmith.transport import is_loopback

Kind = Literal["pypi-index", "conda-channel", "oci", "wheel-dir"]
KINDS: tuple[Kind, ...] = ("pypi-index", "conda-channel", "oci", "wheel-dir")
NOT_YET: dict[str, str] = {}


@dataclass(frozen=True)
class Target:
    kind: Kind
    where: str
    """The upload URL, channel directory or image reference, as given."""

    def shown(self) -> str:
        return f"{self.kind}:{redact_url(self.where)}"


def parse_target(text: str) -> Target:
    kind, sep, where = text.partition(":")
    if not sep or kind not in KINDS or not where:
        raise UsageError(
            f"--to {redact_url(text)!r}: not a publish target",
            "pypi-index:https://HOST/legacy/ (the upload URL), conda-channel:DIR, "
            "oci:REGISTRY/REPO:TAG or wheel-dir:DIR (wheels with their SBOM and provenance)",
        )
    if kind in NOT_YET:
        raise UsageError(
            f"--to {kind}: {NOT_YET[kind]}",
            "publish wheels (pypi-index:URL) or conda packages (conda-channel:DIR)",
        )
    target = Target(kind, where)
    if kind == "pypi-index":
        check_upload_url(where)
    if kind == "oci" and url_secrets(f"https://{where}"):
        raise UsageError("oci: the reference carries a credential", "use --token-env and friends")
    return target


def check_upload_url(url: str) -> None:
    """No credential inside the URL (argv is world-readable) and no token in clear text off
    this machine: http only to a loopback address."""
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise UsageError(
            f"pypi-index:{redact_url(url)}: not an http(s) URL",
            "give the index's upload URL, e.g. https://upload.pypi.org/legacy/",
        )
    if url_secrets(url):
        raise UsageError(
            f"pypi-index:{redact_url(url)}: the URL carries a credential, and a command line is "
            "readable by every user of this machine (/proc/*/cmdline)",
            "drop it from the URL and pass it with --token-env VAR, --token-file FILE (mode 600) "
            "or --keyring; rotate the token that was on the command line",
        )
    if parts.scheme == "http" and not is_loopback(parts.hostname):
        raise UsageError(
            f"pypi-index:{url}: plain http would send the token in clear text",
            "use the index's https:// URL",
        )


def check_index_url(url: str) -> None:
    """``--index-url``: an http(s) URL with no credential in it. It is read anonymously unless
    it shares the upload URL's origin (publish/scoped.py), so plain http costs no secret."""
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.hostname or url_secrets(url):
        raise UsageError(
            f"--index-url {redact_url(url)}: not an http(s) URL, or it carries a credential",
            "give the simple index's URL (https://HOST/simple/) with no user-info or token; "
            "rotate a token that was on the command line",
        )


def channel_dir(target: Target) -> Path:
    return Path(target.where).expanduser()
