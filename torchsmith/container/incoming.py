"""What the build inside a container may write on the host: a fresh, empty directory, not the
output directory itself.

buildah's chroot isolation is no boundary for root, and the base image's code runs there
(apt, pip, the build), so every host path mounted read-write is the container's to change:
``--output-dir ~`` mounted the whole home (security review f1b4bec, N10). The build inside now
publishes into ``<output>/.torchsmith-incoming-XXXX`` (made 0700, unpredictable name); the
torchsmith outside then moves what it finds there into the output directory by the publish
rules — an artifact of another plan is never replaced, conda packages are added to the channel
and it is re-indexed — and removes the directory.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from torchsmith.publish.conda_channel import add_to_channel
from torchsmith.steps.conda import CHANNEL
from torchsmith.steps.publish import publish_file, publish_manifest, recorded_plan

PREFIX = ".torchsmith-incoming-"
MANIFEST = ".manifest.json"
CONDA = (".conda", ".tar.bz2")


def make_incoming(output_dir: Path) -> Path:
    """A new, empty directory for one container build, inside ``output_dir``."""
    output_dir.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=PREFIX, dir=output_dir))


def _files(incoming: Path) -> list[Path]:
    found = [p for p in incoming.iterdir() if p.is_file() and not p.is_symlink()]
    return sorted(found, key=lambda p: (p.name.endswith(MANIFEST), p.name))  # manifests last


def _move_file(path: Path, output_dir: Path) -> str:
    if path.name.endswith(MANIFEST):
        data = json.loads(path.read_text(encoding="utf-8"))
        return publish_manifest(data, [output_dir], path.name)[0].name
    return publish_file(path, output_dir, plan_hash=recorded_plan(path)).name


def _move_channel(incoming: Path, output_dir: Path) -> list[str]:
    packages = sorted(p for p in (incoming / CHANNEL).glob("*/*") if p.name.endswith(CONDA))
    return [add_to_channel(p, output_dir / CHANNEL).artifact for p in packages]


def move_out(incoming: Path, output_dir: Path) -> list[str]:
    """Everything the build inside published, into ``output_dir`` (the names); ``incoming``
    removed."""
    try:
        moved = [_move_file(p, output_dir) for p in _files(incoming)]
        if (incoming / CHANNEL).is_dir():
            moved += _move_channel(incoming, output_dir)
        return moved
    finally:
        discard(incoming)


def discard(incoming: Path) -> None:
    """Remove an incoming directory (only one this module made: checked by its name)."""
    if incoming.name.startswith(PREFIX) and not incoming.is_symlink():
        shutil.rmtree(incoming, ignore_errors=True)
