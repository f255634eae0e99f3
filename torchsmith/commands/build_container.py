"""`torchsmith build --backend docker`: the build planned against the base image's facts, then run
by torchsmith inside a working container of that image (:mod:`torchsmith.container.inside`);
the manifest gains the container's record (engine, image, the image's facts)."""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.markup import escape

from torchsmith import kb as kbmod
from torchsmith.backends import make_executor
from torchsmith.backends.base import Executor
from torchsmith.commands.spec_args import load_host
from torchsmith.console import out, print_json, shown
from torchsmith.container import incoming, inside, routes
from torchsmith.container.build import engine_choice
from torchsmith.container.engines import EngineChoice
from torchsmith.container.images import load_images
from torchsmith.container.planning import ContainerPlan
from torchsmith.errors import BuildError
from torchsmith.spec_sources import ResolvedSpec
from torchsmith.steps.publish import publish_manifest

RUNS = {
    "working-container": "torchsmith runs this plan inside a working container of the image "
    "(`torchsmith build --backend docker`)",
    "dockerfile": "the generated Dockerfile's build stage runs this plan with torchsmith "
    "inside the image (`torchsmith image`)",
}


def plan_of(args: argparse.Namespace, rs: ResolvedSpec) -> ContainerPlan:
    """The base image and the plan the torchsmith inside will make (its refusals too)."""
    return routes.for_working_container(rs, kbmod.load(), load_images(), load_host(args))


def print_container_plan(args: argparse.Namespace, rs: ResolvedSpec) -> int:
    """`torchsmith plan --backend docker`: the one container plan, by the route the spec asks
    for (images: `torchsmith image`), step for step what the build inside runs."""
    from torchsmith.report.plan_json import plan_json, shown
    from torchsmith.report.plan_view import print_plan

    ids = (os.getuid(), os.getgid())
    cp = routes.for_spec(rs, kbmod.load(), load_images(), load_host(args), ids)
    runs = "dockerfile" if routes.wants_images(rs.spec) else "working-container"
    base = {"base_image": cp.base.image, "base_reason": cp.base.reason, "runs": runs}
    if args.json:
        print_json({**plan_json(cp.plan), "container": base})
        return 0
    print_plan(shown(cp.plan))
    out.print(f"[bold]base image[/]: {escape(cp.base.image)} ({escape(cp.base.reason)})")
    out.print(f"[bold]runs[/]: {RUNS[runs]}")
    for image in cp.images:
        ids_text = f"uid {image.uid} gid {image.gid} ({image.reason})"
        out.print(f"[bold]image {image.spec.name}[/]: TZ {image.spec.tz}, user {image.spec.user}, "
                  f"{escape(ids_text)}")  # fmt: skip
    return 0


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


def _inner(args: argparse.Namespace, into: Path, cache_root: Path) -> list[str]:
    """The build inside publishes into ``into`` (container/incoming.py), not the output dir."""
    return inside.inner_build(cache_root, into, True, not args.no_verify)


def build_in_container(args: argparse.Namespace, rs: ResolvedSpec, cache_root: Path) -> int:
    env = dict(os.environ)
    ip = plan_of(args, rs)
    engine = engine_choice(ip.engine, env, args.storage_root)
    inside.check(rs.spec, engine)
    output_dir = Path(rs.spec.output_dir).expanduser().resolve()
    for folder in (cache_root, output_dir):
        folder.mkdir(parents=True, exist_ok=True)
    log = cache_root / "containers" / "container-setup.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    out.print(f"[bold]base image[/]: {escape(ip.base.image)} ({escape(ip.base.reason)})")
    out.print(f"[bold]engine[/]: {escape(engine.probe.describe())} — {escape(engine.reason)}")
    start = time.time()
    into = incoming.make_incoming(output_dir)  # mounted instead of the output directory
    try:
        with make_executor("local", env) as ex:
            container = _start(ex, engine, ip.base.image, args.pull, env)
            session = working_session(engine, container, (cache_root, into), env)
            try:
                measured = _run_inside(ex, session, args, rs=rs, ip=ip, paths=(cache_root, into))
            finally:
                ex.run(session.remove_argv(), env=env, log_path=log, check=False)
                session.release()  # an environment file a failed engine call left
        incoming.move_out(into, output_dir)
    finally:
        incoming.discard(into)
    return _finish(args, _record(ip, engine, measured), output_dir, start)


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
    ex: Executor,
    s: inside.Session,
    args: argparse.Namespace,
    *,
    rs: ResolvedSpec,
    ip: ContainerPlan,
    paths: tuple[Path, Path],
) -> dict[str, str]:
    """Prepare the container, run the build in it (``paths``: the cache root, the directory it
    publishes into); the image's measured /etc/os-release."""
    cache_root, into = paths
    env = dict(os.environ)
    out.print(f"==> container {s.container}: tools from the image's suite, torchsmith")
    log = cache_root / "containers" / "container-setup.log"
    _prepare(ex, s, env, log, ip.plan.compiler.value)
    release = ex.capture(s.run_argv(["cat", "/etc/os-release"]), env=env, timeout=60)
    out.print("==> build inside the container")
    env = {**inside.spec_env(rs), inside.IN_CONTAINER: "buildah"}
    argv = s.run_argv(_inner(args, into, cache_root), env)
    done = ex.run(argv, env=env, on_line=lambda line: out.print(shown(line)), check=False)
    if done.returncode != 0:
        raise BuildError(
            f"the build inside the container failed (exit {done.returncode}); its own error "
            "is printed above",
            "fix what it names, then run the same command again: the workspace and the "
            f"compiler cache live on this machine under {cache_root}, so it resumes",
        )
    return os_release(release.stdout)


def _finish(
    args: argparse.Namespace, record: dict[str, Any], output_dir: Path, start: float
) -> int:
    manifest = _newest_manifest(output_dir, start)
    if manifest is None:
        raise BuildError(
            f"the build inside the container wrote no manifest into {output_dir}",
            "see the output above; report this as a torchsmith bug if it succeeded",
        )
    data = _add_record(manifest, record)
    if args.json:
        print_json(data)
    else:
        out.print(f"[bold]manifest[/]: {escape(str(manifest))} (with the container's record)")
    return 0
