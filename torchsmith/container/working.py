"""`torchsmith build --backend docker`: the build planned against the base image's facts, then run
by torchsmith inside a working container of that image (:mod:`torchsmith.container.inside`);
the manifest gains the container's record (engine, image, the image's facts).

Nothing here prints: what the user sees goes through a :class:`Messages` (any
:class:`torchsmith.report.progress.Reporter` is one); the command prints the rest from what
:func:`prepare` and :func:`build` return."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from torchsmith import kb as kbmod
from torchsmith.backends import make_executor
from torchsmith.backends.base import Executor
from torchsmith.container import incoming, inside, routes
from torchsmith.container.build import engine_choice
from torchsmith.container.engines import EngineChoice
from torchsmith.container.images import load_images
from torchsmith.container.planning import ContainerPlan
from torchsmith.errors import BuildError
from torchsmith.host.model import HostFacts
from torchsmith.spec_sources import ResolvedSpec
from torchsmith.steps.publish import publish_manifest


class Messages(Protocol):
    """Where the progress lines and the build inside's own output go (one line each)."""

    def message(self, text: str) -> None: ...


@dataclass(frozen=True)
class Working:
    """What the build will run: the container plan and the engine that runs it."""

    plan: ContainerPlan
    engine: EngineChoice


@dataclass(frozen=True)
class Built:
    """The manifest the build inside wrote (moved out), with the container's record added."""

    manifest: Path
    data: dict[str, Any]


def plan_of(rs: ResolvedSpec, host: HostFacts) -> ContainerPlan:
    """The base image and the plan the torchsmith inside will make (its refusals too)."""
    return routes.for_working_container(rs, kbmod.load(), load_images(), host)


def prepare(
    rs: ResolvedSpec, host: HostFacts, env: Mapping[str, str], storage_root: Path | None
) -> Working:
    """The plan and the engine, checked (before anything starts)."""
    ip = plan_of(rs, host)
    engine = engine_choice(ip.engine, env, storage_root)
    inside.check(rs.spec, engine)
    return Working(ip, engine)


def _start(ex: Executor, engine: EngineChoice, image: str, pull: str, env: Any) -> str:
    done = ex.capture(inside.from_argv(engine, image, pull), env=env, timeout=1800)
    if done.returncode != 0:
        raise BuildError(
            f"buildah cannot start a container of {image}: {done.stderr.strip()[-400:]}",
            "check the image name (--base-image) and --pull; `buildah images` lists the store",
        )
    return done.stdout.strip().splitlines()[-1]


def _prepare(
    ex: Executor, s: inside.Session, env: Mapping[str, str], log: Path, compiler: str | None
) -> None:
    trust = inside.CAS.is_dir() and any(inside.CAS.iterdir())
    if trust:  # the host's local CAs (a TLS-inspecting proxy): apt and pip inside trust them
        ex.run(s.copy_argv(inside.CAS, str(inside.CAS)), env=env, log_path=log)
    for command in inside.setup_commands(trust, compiler):
        ex.run(s.run_argv(command), env=env, log_path=log)
    ex.run(s.copy_argv(inside.package_dir(), f"{inside.LIB}/torchsmith"), env=env, log_path=log)


def _newest_manifest(folder: Path, since: float) -> Path | None:
    found = [p for p in folder.glob("*.manifest.json") if p.stat().st_mtime >= since - 1]
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


def os_release(text: str) -> dict[str, str]:
    """ID, VERSION_ID, VERSION_CODENAME and PRETTY_NAME of an /etc/os-release."""
    keys = ("ID", "VERSION_ID", "VERSION_CODENAME", "PRETTY_NAME")
    pairs = (line.split("=", 1) for line in text.splitlines() if "=" in line)
    return {k: v.strip().strip('"') for k, v in pairs if k in keys}


def _record(ip: ContainerPlan, engine: EngineChoice, measured: dict[str, str]) -> dict[str, Any]:
    os_image = ip.base.os
    return {
        "engine": engine.probe.describe(),
        "base_image": ip.base.image,
        "base_reason": ip.base.reason,
        "os_release": measured,
        "planned_for": {
            "os": os_image.codename,
            "gcc": os_image.gcc,
            "python": os_image.python,
            "glibc": os_image.glibc,
        },
        "how": "torchsmith ran the pipeline inside a working container of the image "
        "(buildah run, chroot isolation); cache root and output directory mounted; the "
        "toolchain section is what it found there",
    }


def _add_record(manifest_path: Path, record: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(manifest_path.read_text(encoding="utf-8"))
    data["container"] = record
    dirs = [manifest_path.parent]
    workspace = Path(str(data.get("workspace", "")))
    if (workspace / manifest_path.name).is_file():
        dirs.append(workspace)
    publish_manifest(data, dirs, manifest_path.name)
    return data


def inner_argv(into: Path, cache_root: Path, verify: bool) -> list[str]:
    """The build inside publishes into ``into`` (container/incoming.py), not the output dir."""
    return inside.inner_build(cache_root, into, True, verify)


@dataclass(frozen=True)
class _Run:
    """One build's settings: where it lives, the base image's pull policy, verify or not."""

    rs: ResolvedSpec
    cache_root: Path
    pull: str
    verify: bool
    say: Messages


def build(
    w: Working, rs: ResolvedSpec, cache_root: Path, *, pull: str, verify: bool, say: Messages
) -> Built:
    """Run the build inside a working container; its artifacts land in the spec's output
    directory (through a fresh incoming directory) and its manifest gains the record."""
    env = dict(os.environ)
    output_dir = Path(rs.spec.output_dir).expanduser().resolve()
    for folder in (cache_root, output_dir):
        folder.mkdir(parents=True, exist_ok=True)
    (cache_root / "containers").mkdir(parents=True, exist_ok=True)
    run = _Run(rs, cache_root, pull, verify, say)
    start = time.time()
    into = incoming.make_incoming(output_dir)  # mounted instead of the output directory
    try:
        with make_executor("local", env) as ex:
            measured = _in_session(ex, w, run, into, env)
        incoming.move_out(into, output_dir)
    finally:
        incoming.discard(into)
    return _finish(_record(w.plan, w.engine, measured), output_dir, start)


def _in_session(
    ex: Executor, w: Working, run: _Run, into: Path, env: Mapping[str, str]
) -> dict[str, str]:
    """Start the container, run the build in it, always remove it."""
    log = run.cache_root / "containers" / "container-setup.log"
    container = _start(ex, w.engine, w.plan.base.image, run.pull, env)
    session = working_session(w.engine, container, (run.cache_root, into), env)
    try:
        return _run_inside(ex, session, run, ip=w.plan, into=into)
    finally:
        ex.run(session.remove_argv(), env=env, log_path=log, check=False)
        session.release()  # an environment file a failed engine call left


def working_session(
    engine: EngineChoice, container: str, mounts: tuple[Path, Path], env: Mapping[str, str]
) -> inside.Session:
    """The working container with the cache root and the incoming directory mounted (never
    the output directory itself: container/incoming.py), its environment by file."""
    own = (("PYTHONPATH", inside.LIB), *_trust_env(), *inside.proxy_env(env).items())
    return inside.Session(inside.buildah_head(engine), container, mounts, own)


def _trust_env() -> tuple[tuple[str, str], ...]:
    if inside.CAS.is_dir() and any(inside.CAS.iterdir()):
        return (("PIP_CERT", "/etc/ssl/certs/ca-certificates.crt"),)
    return ()


def _run_inside(
    ex: Executor, s: inside.Session, run: _Run, *, ip: ContainerPlan, into: Path
) -> dict[str, str]:
    """Prepare the container, run the build in it (publishing into ``into``); the image's
    measured /etc/os-release."""
    cache_root = run.cache_root
    env = dict(os.environ)
    run.say.message(f"==> container {s.container}: tools from the image's suite, torchsmith")
    log = cache_root / "containers" / "container-setup.log"
    _prepare(ex, s, env, log, ip.plan.compiler.value)
    release = ex.capture(s.run_argv(["cat", "/etc/os-release"]), env=env, timeout=60)
    run.say.message("==> build inside the container")
    env = {**inside.spec_env(run.rs), inside.IN_CONTAINER: "buildah"}
    argv = s.run_argv(inner_argv(into, cache_root, run.verify), env)
    done = ex.run(argv, env=env, on_line=run.say.message, check=False)
    if done.returncode != 0:
        raise BuildError(
            f"the build inside the container failed (exit {done.returncode}); its own error "
            "is printed above",
            "fix what it names, then run the same command again: the workspace and the "
            f"compiler cache live on this machine under {cache_root}, so it resumes",
        )
    return os_release(release.stdout)


def _finish(record: dict[str, Any], output_dir: Path, start: float) -> Built:
    manifest = _newest_manifest(output_dir, start)
    if manifest is None:
        raise BuildError(
            f"the build inside the container wrote no manifest into {output_dir}",
            "see the output above; report this as a torchsmith bug if it succeeded",
        )
    return Built(manifest, _add_record(manifest, record))
