"""The remote cache's secret: from an environment variable (its value handed in by the caller,
never read from ``os.environ`` here) or a file only its owner can read. The value lives in a
:class:`CacheSecret` whose ``repr``/``str`` never show it; it reaches only the compiler cache's
environment, never argv (world-readable in ``/proc/*/cmdline``), logs or the manifest."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from torchsmith.errors import UsageError
from torchsmith.plan_types import CachePlan


@dataclass(frozen=True)
class CacheSecret:
    _value: str = field(repr=False)
    source: str

    def reveal(self) -> str:
        return self._value

    def __str__(self) -> str:
        return f"<secret from {self.source}>"


def read_secret(setup: CachePlan, env: Mapping[str, str]) -> CacheSecret | None:
    """The secret the plan names (``None`` when it names none)."""
    if setup.credentials_env:
        return _from_env(setup.credentials_env, env)
    if setup.credentials_file:
        return _from_file(Path(setup.credentials_file).expanduser())
    return None


def _from_env(name: str, env: Mapping[str, str]) -> CacheSecret:
    value = env.get(name, "").strip()
    if not value:
        raise UsageError(
            f"cache.credentials_env {name}: the environment variable {name} is not set or empty",
            f"export {name}=<password> in the shell that runs torchsmith",
        )
    return CacheSecret(value, f"environment variable {name}")


def _from_file(path: Path) -> CacheSecret:
    try:
        info = path.lstat()
    except OSError as exc:
        raise UsageError(
            f"cache.credentials_file {path}: {exc.strerror}", "give a file holding the password"
        ) from None
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
        raise UsageError(
            f"cache.credentials_file {path} is not a regular file of this user",
            "keep the password in a file you own (chmod 600)",
        )
    if info.st_mode & 0o077:
        raise UsageError(
            f"cache.credentials_file {path} has mode {stat.S_IMODE(info.st_mode):04o}: "
            "others can read it",
            f"chmod 600 {path}, and consider changing the password",
        )
    text = path.read_text(encoding="utf-8").strip()
    if not text:
        raise UsageError(f"cache.credentials_file {path} is empty", "write the password into it")
    return CacheSecret(text, f"file {path}")
