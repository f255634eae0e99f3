"""Where torchsmith keeps what it caches for the user: the one rule (``TORCHSMITH_CACHE_ROOT``,
else ``$XDG_CACHE_HOME/torchsmith``, else ``~/.cache/torchsmith``), on the floor so that a host
probe can name its cache file without importing the workspace machinery."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from torchsmith.errors import UsageError


def default_cache_root(env: Mapping[str, str]) -> Path:
    """TORCHSMITH_CACHE_ROOT, else $XDG_CACHE_HOME/torchsmith, else ~/.cache/torchsmith. A
    variable lives across directories, so a relative one would name another cache in each: it is
    refused (trial E03: taken against the working directory without a word), and a relative
    XDG_CACHE_HOME is ignored as the XDG Base Directory Specification says ("All paths set in
    these environment variables must be absolute ... consider the path invalid and ignore it")."""
    value = env.get("TORCHSMITH_CACHE_ROOT")
    if value is not None and value.strip().lower() != "none":
        root = Path(value).expanduser()
        if not root.is_absolute():
            raise UsageError(
                f"TORCHSMITH_CACHE_ROOT={value!r} is not an absolute path: a variable holds in "
                "every directory, so a relative one would be another cache in each",
                f"give an absolute path (e.g. TORCHSMITH_CACHE_ROOT=$PWD/{value.strip()}), "
                "pass --cache-root, or unset it",
            )
        return root
    xdg = Path(env.get("XDG_CACHE_HOME") or "")
    return (xdg if xdg.is_absolute() else Path.home() / ".cache") / "torchsmith"
