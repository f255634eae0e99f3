"""Container engines: docker (BuildKit/buildx), podman and buildah, each probed (is it installed,
does it answer, is it rootless?) and one chosen with a reason. The probes and the builds run
through a :class:`torchsmith.runner.Runner` (this machine's, or a backend's executor).

buildah runs daemonless with ``chroot`` isolation (no user namespaces needed). Its storage driver:
a store torchsmith makes under ``--storage-root`` uses the kernel's ``overlay`` (a layer is a diff,
not a whole copy of the image as with ``vfs``), and ``vfs`` where overlay cannot mount (inside
another container, on overlayfs); a store that exists keeps the driver it was made with; the
default store stays ``vfs`` (never converted)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

from torchsmith.errors import HostError
from torchsmith.runner import Runner

EngineName = Literal["docker", "podman", "buildah"]
ENGINES: tuple[EngineName, ...] = get_args(EngineName)
PROBE_TIMEOUT = 20.0


@dataclass(frozen=True)
class Storage:
    """Where podman/buildah keep images (None: their defaults)."""

    root: Path | None = None
    runroot: Path | None = None
    driver: str = "vfs"

    def with_driver(self, driver: str) -> Storage:
        return Storage(self.root, self.runroot, driver)

    def flags(self) -> list[str]:
        flags = ["--storage-driver", self.driver]
        if self.root is not None:
            flags += ["--root", str(self.root)]
        if self.runroot is not None:
            flags += ["--runroot", str(self.runroot)]
        return flags

    def transport(self, ref: str) -> str:
        """skopeo's name for ``ref`` in this store."""
        root = self.root or Path("/var/lib/containers/storage")
        runroot = self.runroot or Path("/run/containers/storage")
        return f"containers-storage:[{self.driver}@{root}+{runroot}]{ref}"


@dataclass(frozen=True)
class EngineProbe:
    name: EngineName
    path: str | None
    answers: bool = False
    version: str | None = None
    rootless: bool | None = None
    detail: str = ""
    buildx: bool = False
    storage: Storage | None = None  # buildah's: the store (and driver) it answered with

    def describe(self) -> str:
        if self.path is None:
            return f"{self.name}: not installed"
        if not self.answers:
            return f"{self.name} ({self.path}): does not answer: {self.detail}"
        mode = {True: "rootless", False: "as root", None: "mode unknown"}[self.rootless]
        store = f", {self.storage.driver} storage" if self.storage is not None else ""
        return f"{self.name} {self.version or '?'} ({self.path}): answers, {mode}{store}"


@dataclass(frozen=True)
class EngineChoice:
    probe: EngineProbe
    reason: str
    storage: Storage = field(default_factory=Storage)

    @property
    def name(self) -> EngineName:
        return self.probe.name


def _first_line(text: str) -> str:
    return next((ln.strip() for ln in text.splitlines() if ln.strip()), "")


def parse_buildah(version_out: str, info_out: str) -> tuple[str | None, bool | None]:
    """``buildah version`` (``Version:  1.28.2``), ``buildah info`` (JSON) → version, rootless."""
    lines = [ln for ln in version_out.splitlines() if ln.startswith("Version:")]
    version = lines[0].split(":", 1)[1].strip() if lines else None
    try:
        rootless = json.loads(info_out)["host"]["rootless"]
    except (ValueError, KeyError, TypeError):
        rootless = None
    return version, rootless if isinstance(rootless, bool) else None


def parse_podman(info_out: str) -> tuple[str | None, bool | None]:
    """``podman info --format json`` → version, rootless."""
    try:
        data = json.loads(info_out)
        return str(data["version"]["Version"]), bool(data["host"]["security"]["rootless"])
    except (ValueError, KeyError, TypeError):
        return None, None


def parse_docker(version_out: str) -> tuple[str | None, bool]:
    """``docker version --format '{{json .}}'`` → server version (None: no daemon), rootless."""
    try:
        data = json.loads(_first_line(version_out) or "{}")
    except ValueError:
        return None, False
    server = data.get("Server") or {}
    names = " ".join(str(c.get("Name", "")) for c in server.get("Components") or [])
    return (server.get("Version") or None), "rootless" in names.lower()


def _probe_docker(runner: Runner, path: str, env: Mapping[str, str]) -> EngineProbe:
    done = runner.capture(
        [path, "version", "--format", "{{json .}}"], env=env, timeout=PROBE_TIMEOUT
    )
    version, rootless = parse_docker(done.stdout)
    if done.returncode != 0 or version is None:
        why = _first_line(done.stderr) or f"exit {done.returncode}"
        return EngineProbe("docker", path, detail=why)
    buildx = runner.capture([path, "buildx", "version"], env=env, timeout=PROBE_TIMEOUT)
    return EngineProbe("docker", path, True, version, rootless, buildx=buildx.returncode == 0)


def _probe_podman(runner: Runner, path: str, env: Mapping[str, str]) -> EngineProbe:
    done = runner.capture([path, "info", "--format", "json"], env=env, timeout=PROBE_TIMEOUT)
    version, rootless = parse_podman(done.stdout)
    if done.returncode != 0 or version is None:
        return EngineProbe("podman", path, detail=_first_line(done.stderr) or "no info")
    return EngineProbe("podman", path, True, version, rootless)


def _probe_buildah(
    runner: Runner, path: str, env: Mapping[str, str], storage: Storage
) -> EngineProbe:
    version_out = runner.capture([path, "version"], env=env, timeout=PROBE_TIMEOUT)
    info = runner.capture([path, *storage.flags(), "info"], env=env, timeout=PROBE_TIMEOUT)
    if info.returncode != 0 and storage.driver == "overlay" and storage.root is not None:
        storage = storage.with_driver("vfs")  # overlay cannot mount here (e.g. on overlayfs)
        info = runner.capture([path, *storage.flags(), "info"], env=env, timeout=PROBE_TIMEOUT)
    version, rootless = parse_buildah(version_out.stdout, info.stdout)
    if info.returncode != 0 or version is None:
        return EngineProbe("buildah", path, detail=_first_line(info.stderr) or "no info")
    return EngineProbe("buildah", path, True, version, rootless, storage=storage)


def probe_engines(
    runner: Runner,
    env: Mapping[str, str],
    which: Mapping[EngineName, str | None],
    storage: Storage | None = None,
) -> list[EngineProbe]:
    """Every engine, in order of preference; ``which`` maps each to its path (None: absent)."""
    probes = []
    for name in ENGINES:
        path = which.get(name)
        try:
            probes.append(_probe(runner, name, path, env, storage or Storage()))
        except (OSError, subprocess.TimeoutExpired) as exc:  # a hung daemon, a broken binary
            probes.append(EngineProbe(name, path, detail=str(exc)))
    return probes


def _probe(
    runner: Runner, name: EngineName, path: str | None, env: Mapping[str, str], storage: Storage
) -> EngineProbe:
    if path is None:
        return EngineProbe(name, None)
    if name == "docker":
        return _probe_docker(runner, path, env)
    if name == "podman":
        return _probe_podman(runner, path, env)
    return _probe_buildah(runner, path, env, storage)


def choose_engine(
    probes: Sequence[EngineProbe], wanted: str, storage: Storage | None = None
) -> EngineChoice:
    """The asked engine if it answers, else (``auto``) the first that answers: docker, podman,
    buildah. :class:`HostError` naming every engine's state when none can build."""
    usable = [p for p in probes if p.answers and wanted in {"auto", p.name}]
    if usable:
        probe = usable[0]
        skipped = [p.describe() for p in probes if p is not probe and wanted == "auto"]
        reason = "asked" if wanted != "auto" else "the first engine that answers"
        if skipped:
            reason += f" ({'; '.join(skipped)})"
        return EngineChoice(probe, reason, probe.storage or storage or Storage())
    states = "\n".join(f"  {p.describe()}" for p in probes if wanted in {"auto", p.name})
    raise HostError(
        f"no container engine answers ({'any' if wanted == 'auto' else wanted}):\n{states}",
        "start the Docker daemon (`sudo systemctl start docker`) or install podman or buildah "
        "(Debian: apt-get install buildah); `torchsmith image --dockerfile-only -o DIR` writes "
        "the build context without any engine",
    )
