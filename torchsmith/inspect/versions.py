"""Symbol-version floors (``GLIBC_2.28``...) and the manylinux policy of wheel tags."""

from __future__ import annotations

import re
from collections.abc import Iterable

_VERSIONED = re.compile(r"^([A-Z]+)_(\d+(?:\.\d+)*)$")
# PEP 600 (https://peps.python.org/pep-0600/): manylinux_X_Y needs glibc <= X.Y; the legacy
# aliases map to manylinux_2_5 / _2_12 / _2_17 (PEP 600, "Legacy manylinux tags").
_LEGACY = {"manylinux1": "2.5", "manylinux2010": "2.12", "manylinux2014": "2.17"}
_MANYLINUX = re.compile(r"manylinux_(\d+)_(\d+)_")


def as_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def floor(needs: Iterable[str], prefix: str) -> str | None:
    """The newest ``PREFIX_x.y`` version among ``needs`` ('GLIBC' -> '2.28')."""
    found = []
    for need in needs:
        match = _VERSIONED.match(need)
        if match and match.group(1) == prefix:
            found.append(match.group(2))
    return max(found, key=as_tuple) if found else None


def newest(versions: Iterable[str | None]) -> str | None:
    present = [v for v in versions if v]
    return max(present, key=as_tuple) if present else None


def manylinux_glibc(tags: Iterable[str]) -> str | None:
    """The oldest glibc any manylinux platform tag of the wheel claims to run on. Every tag is a
    claim (pip installs ``manylinux_2_17.manylinux_2_28`` on a glibc 2.17 system), so the wheel
    is honest only if its libraries run on the oldest of them."""
    allowed = []
    for tag in tags:
        platform = tag.rsplit("-", 1)[-1]
        for part in platform.split("."):
            match = _MANYLINUX.match(part)
            if match:
                allowed.append(f"{match.group(1)}.{match.group(2)}")
            for legacy, glibc in _LEGACY.items():
                if part.startswith(legacy + "_"):
                    allowed.append(glibc)
    return min(allowed, key=as_tuple) if allowed else None
