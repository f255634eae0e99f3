"""Distributed compiling through sccache-dist (a scheduler and build servers; sccache 0.16).

The client reads its cluster from a config file only (``SCCACHE_CONF``: ``[dist]
scheduler_url`` and ``[dist.auth] token``; https://github.com/mozilla/sccache/blob/v0.16.0/
docs/DistributedQuickstart.md), so torchsmith writes one, mode 600, into the build's private
directory; the token comes from the variable the spec names, never from the spec itself.
``sccache --dist-status`` says whether the scheduler answers
(``{"SchedulerStatus": [URL, {"num_servers": 2, "num_cpus": 4, …}]}``) or not
(``{"NotConnected": [URL, "enabled, not connected, will retry in 30.0s"]}``); when it does not,
the build compiles locally with the local job count and says so.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from torchsmith.errors import UsageError

CONF_NAME = "dist-client.toml"


@dataclass(frozen=True)
class DistStatus:
    reachable: bool
    servers: int = 0
    cpus: int = 0
    detail: str = ""


def cluster_token(name: str | None, env: Mapping[str, str]) -> str:
    """The client token from the variable ``name`` of ``env`` (the build's base environment)."""
    value = env.get(name, "").strip() if name else ""
    if not value:
        raise UsageError(
            f"cache.cluster_token_env {name}: the environment variable is not set or empty",
            f"export {name}=<the scheduler's client token> in the shell that runs torchsmith",
        )
    return value


def _toml_string(text: str) -> str:
    return json.dumps(text)  # a JSON string is a valid TOML basic string


def client_config(scheduler: str, toolchains: Path, token: str) -> str:
    return (
        "[dist]\n"
        f"scheduler_url = {_toml_string(scheduler)}\n"
        "toolchains = []\n"
        f"cache_dir = {_toml_string(str(toolchains))}\n"
        "[dist.auth]\n"
        'type = "token"\n'
        f"token = {_toml_string(token)}\n"
    )


def write_private(path: Path, text: str) -> Path:
    """``text`` into ``path``, readable by its owner only from the first byte on."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    return path


def parse_dist_status(text: str) -> DistStatus:
    """Read ``sccache --dist-status`` (one JSON object keyed by the state)."""
    try:
        data = json.loads(text.strip().splitlines()[-1]) if text.strip() else {}
    except json.JSONDecodeError:
        return DistStatus(False, detail=text.strip()[-200:])
    if not isinstance(data, dict) or not data:
        return DistStatus(False, detail="no status")
    state, value = next(iter(data.items()))
    if state != "SchedulerStatus":
        return DistStatus(False, detail=f"{state}: {value}")
    info = value[1] if isinstance(value, list) and len(value) > 1 else {}
    servers, cpus = int(info.get("num_servers", 0)), int(info.get("num_cpus", 0))
    return DistStatus(servers > 0, servers, cpus, f"{servers} servers, {cpus} CPUs")


FORWARDED_NAMES = frozenset(
    {
        "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TZ", "TMPDIR",
        "PWD", "LD_LIBRARY_PATH", "LIBRARY_PATH", "CPATH", "C_INCLUDE_PATH",
        "CPLUS_INCLUDE_PATH", "PKG_CONFIG_PATH", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS",
    }
)  # fmt: skip
"""The variables of the caller's environment a build with a cluster keeps (besides the plan's
own and :data:`FORWARDED_PREFIXES`): sccache-dist sends each compile's whole environment to
the build server, whose bubblewrap builder puts every variable on its command line (``bwrap
--setenv NAME VALUE``), readable by the server's local users — found by the canary scan of
tests/integration/test_cache_shared.py. An allow-list: a credential in any other variable
never leaves this machine."""
FORWARDED_PREFIXES = ("LC_", "CUDA", "CUDNN_", "NCCL_", "NVCC_")
"""Families kept too: the locale, and the CUDA toolkit's, cuDNN's and NCCL's variables (the
toolkit step's CUDA_HOME, CUDA_PATH, CUDACXX, CUDA_TOOLKIT_ROOT_DIR, ...)."""


def forwarded_env(env: Mapping[str, str], own: frozenset[str]) -> dict[str, str]:
    """``env`` as a build with a cluster compiles with: the plan's own variables (``own``) and
    the allow-listed ones of the caller's environment."""
    keep = own | FORWARDED_NAMES
    return {k: v for k, v in env.items() if k in keep or k.startswith(FORWARDED_PREFIXES)}
