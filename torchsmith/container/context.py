"""The build context ``torchsmith image`` writes: ``Dockerfile``, ``.dockerignore``,
``torchsmith/manifest.json`` (the plan, its hash, the base image and why), this torchsmith
(``torchsmith/lib/torchsmith``, its package directory, and ``torchsmith/requirements.txt``, its
runtime requirements) that the build stage runs, and (training images from existing wheels)
``wheels/``. Everything a plain ``docker build`` on another machine needs, nothing secret. The
fixes, the fetch and every other step are torchsmith's own, run inside: no second copy here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from torchsmith import atomic
from torchsmith.container import inside
from torchsmith.container.dockerfile import DockerfileInput, render
from torchsmith.container.planning import ContainerPlan
from torchsmith.container.prebuilt import check_prebuilt
from torchsmith.errors import UsageError
from torchsmith.plan_model import BuildPlan
from torchsmith.redact import redact_data

DOCKERIGNORE = "*\n!torchsmith/\n!wheels/\n**/__pycache__\n"


def manifest(cp: ContainerPlan) -> dict[str, Any]:
    plan = cp.plan
    data: dict[str, Any] = {
        "generated_by": "torchsmith image",
        "plan_hash": plan.plan_hash(),
        "base_image": cp.base.image,
        "base_reason": cp.base.reason,
        "base_os": cp.base.os.model_dump(mode="json", exclude={"sources", "notes"}),
        "images": [
            {"name": i.spec.name, "uid": i.uid, "gid": i.gid, "tz": i.spec.tz, "user": i.spec.user}
            for i in cp.images
        ],
        "plan": plan.model_dump(mode="json"),
        "base_recipe": cp.base.recipe.record() if cp.base.recipe else None,
    }
    return dict(redact_data(data))


def _copy_wheels(wheels: Path, dest: Path, plan: BuildPlan) -> None:
    found = sorted(wheels.glob("*.whl"))
    if not found:
        raise UsageError(f"no wheels in {wheels}", "give a directory holding *.whl files")
    check_prebuilt(found, plan.torch.value, plan.python.value)  # before anything is copied
    dest.mkdir(parents=True, exist_ok=True)
    for wheel in found:
        shutil.copy2(wheel, dest / wheel.name)


def _copy_torchsmith(meta: Path) -> None:
    """This torchsmith, as the build stage runs it (a fresh copy: nothing stale stays)."""
    lib = meta / "lib" / "torchsmith"
    if lib.exists():
        shutil.rmtree(lib)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(inside.package_dir(), lib, ignore=ignore)
    atomic.write_text(meta / "requirements.txt", "\n".join(inside.requirements()) + "\n")


def write_context(cp: ContainerPlan, uv_image: str, out: Path, wheels: Path | None = None) -> Path:
    """Write the build context into ``out`` (created); returns the Dockerfile's path."""
    data = DockerfileInput(
        cp.plan,
        cp.base,
        uv_image,
        cp.images,
        prebuilt_wheels=wheels is not None,
        inside_env=cp.inside_env,
    )
    text = render(data)  # first: a value it refuses leaves nothing half-written
    meta = out / "torchsmith"
    meta.mkdir(parents=True, exist_ok=True)
    text_manifest = json.dumps(manifest(cp), indent=2, sort_keys=True) + "\n"
    atomic.write_text(meta / "manifest.json", text_manifest)
    if wheels is None:
        _copy_torchsmith(meta)
    else:
        _copy_wheels(wheels, out / "wheels", cp.plan)
    atomic.write_text(out / ".dockerignore", DOCKERIGNORE)
    dockerfile = out / "Dockerfile"
    atomic.write_text(dockerfile, text)
    return dockerfile
