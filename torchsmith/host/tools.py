"""Build and container tools: path on PATH and the version ``--version`` prints."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from torchsmith.host import parse
from torchsmith.host._run import ProbeError, parallel, query, which
from torchsmith.host.model import Tool
from torchsmith.runner import Runner

TOOL_NAMES = (
    "cmake", "ninja", "make", "ccache", "sccache", "patchelf", "docker", "buildah",
    "apptainer", "git", "uv", "redis-server",
)  # fmt: skip


def probe_tool(
    name: str, path: Path, env: Mapping[str, str], runner: Runner
) -> tuple[Tool, list[str]]:
    try:
        text = query([path, "--version"], env, runner, cacheable=True)
    except ProbeError as exc:
        return Tool(name=name, path=str(path), version=None), [exc.message]
    version = parse.first_version(text)
    warnings = [] if version else [f"{path}: cannot read a version from `--version`"]
    if name == "docker":
        warnings += _docker_daemon(path, version, env, runner)
    return Tool(name=name, path=str(path), version=version), warnings


def _docker_daemon(
    path: Path, version: str | None, env: Mapping[str, str], runner: Runner
) -> list[str]:
    """A docker client without a daemon that answers cannot run a container build."""
    try:
        query([path, "version", "--format", "{{.Server.Version}}"], env, runner, timeout=5)
    except ProbeError as exc:
        return [
            f"docker {version or ''} is installed, but its daemon does not answer: {exc.message}"
        ]
    return []


def probe_tools(
    env: Mapping[str, str], runner: Runner, names: tuple[str, ...] = TOOL_NAMES
) -> tuple[dict[str, Tool], list[str]]:
    found = [(n, p) for n, p in ((n, which(n, env)) for n in names) if p is not None]
    results = parallel(lambda item: probe_tool(item[0], item[1], env, runner), found)
    return {t.name: t for t, _ in results}, [w for _, warns in results for w in warns]
