"""Running the generated Dockerfile with the chosen engine, through an executor (a
:class:`torchsmith.runner.Runner`): the training images into the engine's store, the export
stage's wheels into the output directory, an image as an OCI archive (skopeo)."""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from torchsmith.container.engines import (
    ENGINES,
    EngineChoice,
    Storage,
    choose_engine,
    probe_engines,
)
from torchsmith.proc import HOST
from torchsmith.runner import Completed, LineCallback, Runner

Pull = Literal["missing", "never", "always"]


@dataclass(frozen=True)
class Build:
    """One ``docker build``-like run of one stage."""

    context: Path
    target: str
    tag: str | None = None
    output_dir: Path | None = None
    pull: Pull = "missing"


def _docker(choice: EngineChoice, b: Build) -> list[str]:
    head = ["buildx", "build"] if choice.probe.buildx else ["build"]
    argv = [choice.probe.path or "docker", *head]
    if b.pull == "always":
        argv.append("--pull")
    if b.tag is not None and choice.probe.buildx:
        argv.append("--load")
    return argv


def _podman(choice: EngineChoice, b: Build) -> list[str]:
    return [choice.probe.path or "podman", "build", f"--pull={b.pull}"]


def _buildah(choice: EngineChoice, b: Build) -> list[str]:
    path = choice.probe.path or "buildah"
    # chroot isolation and the vfs driver: no user namespaces or overlay mounts needed;
    # the docker format keeps SHELL (the OCI image format has no place for it)
    base = [path, *choice.storage.flags(), "build", "--isolation", "chroot", "--format", "docker"]
    return [*base, f"--pull={b.pull}"]


def build_argv(choice: EngineChoice, b: Build) -> list[str]:
    """The engine's command for ``b`` (Dockerfile read from the context)."""
    match choice.name:
        case "docker":
            argv = _docker(choice, b)
        case "podman":
            argv = _podman(choice, b)
        case "buildah":
            argv = _buildah(choice, b)
    argv += ["-f", str(b.context / "Dockerfile"), "--target", b.target]
    if b.tag is not None:
        argv += ["-t", b.tag]
    if b.output_dir is not None:
        argv += ["--output", f"type=local,dest={b.output_dir}"]
    return [*argv, str(b.context)]


def build_env(choice: EngineChoice, env: Mapping[str, str]) -> dict[str, str]:
    """The environment of an engine command: BuildKit on for docker (cache mounts need it)."""
    result = dict(env)
    if choice.name == "docker":
        result["DOCKER_BUILDKIT"] = "1"
    return result


def local_ref(choice: EngineChoice, tag: str) -> str:
    """The name the engine stored ``tag`` under (podman/buildah prefix ``localhost/``)."""
    if choice.name == "docker" or "/" in tag.split(":", 1)[0]:
        return tag
    return f"localhost/{tag}"


def oci_archive_argv(skopeo: str, choice: EngineChoice, tag: str, archive: Path) -> list[str]:
    """skopeo copying the image ``tag`` from the engine's store into an OCI archive."""
    ref = local_ref(choice, tag if ":" in tag else f"{tag}:latest")
    source = f"docker-daemon:{ref}" if choice.name == "docker" else choice.storage.transport(ref)
    name = ref.rsplit("/", 1)[-1]
    return [skopeo, "copy", "--quiet", source, f"oci-archive:{archive}:{name}"]


def run_builds(
    runner: Runner,
    *,
    choice: EngineChoice,
    builds: Sequence[Build],
    env: Mapping[str, str],
    log_dir: Path,
    on_line: LineCallback | None = None,
) -> list[Completed]:
    """Run every build in order, each logged to ``log_dir/image-TARGET.log``."""
    done = []
    for b in builds:
        log = log_dir / f"image-{b.target}.log"
        argv = build_argv(choice, b)
        done.append(runner.run(argv, env=build_env(choice, env), log_path=log, on_line=on_line))
    return done


def storage_under(root: Path | None) -> Storage:
    """buildah's image store under ``root`` (``--storage-root``), else the default (vfs)."""
    if root is None:
        return Storage()
    return Storage(root=root / "root", runroot=root / "run", driver=store_driver(root / "root"))


def store_driver(root: Path) -> str:
    """The driver a store under ``root`` was made with (containers/storage keeps each driver's
    images in ``<driver>-images``): never converted. A new store: ``overlay`` (a layer is a
    diff; vfs copies the whole image per layer and per ``buildah from``: the training images'
    test took 691 s with vfs, 556 s with overlay, docs/testing.md); the buildah probe falls
    back to vfs where overlay cannot mount."""
    for driver in ("overlay", "vfs"):
        if (root / f"{driver}-images").is_dir():
            return driver
    return "overlay"


def engine_choice(wanted: str, env: Mapping[str, str], root: Path | None) -> EngineChoice:
    """Probe docker, podman and buildah here; the asked (or first answering) one."""
    storage = storage_under(root)
    which = {name: shutil.which(name, path=env.get("PATH")) for name in ENGINES}
    probes = probe_engines(HOST, env, which, storage)
    return choose_engine(probes, wanted, storage)
