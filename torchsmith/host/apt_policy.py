"""What this host's own apt lists can install, read from ``apt-cache policy PKG…``: a package
the lists do not know is missing from the output; one they know but cannot install has
``Candidate: (none)``. Nothing here is claimed without the host's own answer."""

from __future__ import annotations

import re

_HEAD = re.compile(r"^(\S+):$")
_CANDIDATE = re.compile(r"^\s+Candidate:\s*(\S+)")


def candidates(text: str) -> dict[str, str | None]:
    """``apt-cache policy`` output -> {package: candidate version, or None for '(none)'}."""
    found: dict[str, str | None] = {}
    package: str | None = None
    for line in text.splitlines():
        head = _HEAD.match(line)
        if head:
            package = head.group(1)
            found[package] = None
            continue
        candidate = _CANDIDATE.match(line)
        if candidate and package is not None:
            found[package] = None if candidate.group(1) == "(none)" else candidate.group(1)
    return found


def not_installable(text: str, packages: list[str]) -> list[str]:
    """The ``packages`` this host's apt lists have no installable candidate for."""
    known = candidates(text)
    return [name for name in packages if known.get(name) is None]
