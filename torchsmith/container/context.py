"""The build context ``torchsmith image`` writes: ``Dockerfile``, ``.dockerignore``,
``torchsmith/manifest.json`` (the plan, its hash, the base image and why), the patch fixes with a
small applier that runs on any Python 3 the image has, and (training images from existing wheels)
``wheels/``. Everything a plain ``docker build`` on another machine needs, nothing secret."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from torchsmith import atomic
from torchsmith.container.dockerfile import DockerfileInput, render
from torchsmith.container.planning import ImagePlan
from torchsmith.errors import UsageError
from torchsmith.redact import redact_data

DOCKERIGNORE = "*\n!torchsmith/\n!wheels/\n"
# Runs under the image's Python before anything is installed: Python 3.5 syntax (no f-strings).
APPLY_FIXES = '''"""torchsmith's patch fixes (generated; idempotent)."""
import io
import json
import sys

for fix in json.load(io.open(sys.argv[1], encoding="utf-8")):
    for edit in fix["edits"]:
        with io.open(edit["path"], encoding="utf-8") as handle:
            text = handle.read()
        if edit["replace"] in text and edit["find"] not in text:
            continue
        if text.count(edit["find"]) != 1:
            message = "fix {}: {!r} is not in {} exactly once"
            sys.exit(message.format(fix["id"], edit["find"], edit["path"]))
        with io.open(edit["path"], "w", encoding="utf-8") as handle:
            handle.write(text.replace(edit["find"], edit["replace"]))
    print("fix {} applied".format(fix["id"]))
'''


def manifest(image_plan: ImagePlan) -> dict[str, Any]:
    plan = image_plan.plan
    data: dict[str, Any] = {
        "generated_by": "torchsmith image",
        "plan_hash": plan.plan_hash(),
        "base_image": image_plan.base.image,
        "base_reason": image_plan.base.reason,
        "base_os": image_plan.base.os.model_dump(mode="json", exclude={"sources", "notes"}),
        "images": [
            {"name": i.spec.name, "uid": i.uid, "gid": i.gid, "tz": i.spec.tz, "user": i.spec.user}
            for i in image_plan.images
        ],
        "plan": plan.model_dump(mode="json"),
    }
    return dict(redact_data(data))


def _fixes(image_plan: ImagePlan) -> list[dict[str, Any]]:
    patches = [f for f in image_plan.plan.fixes if f.action == "patch"]
    return [{"id": f.id, "edits": f.edits} for f in patches]


def _copy_wheels(wheels: Path, dest: Path) -> None:
    found = sorted(wheels.glob("*.whl"))
    if not found:
        raise UsageError(f"no wheels in {wheels}", "give a directory holding *.whl files")
    dest.mkdir(parents=True, exist_ok=True)
    for wheel in found:
        shutil.copy2(wheel, dest / wheel.name)


def write_context(
    image_plan: ImagePlan, uv_image: str, out: Path, wheels: Path | None = None
) -> Path:
    """Write the build context into ``out`` (created); returns the Dockerfile's path."""
    data = DockerfileInput(
        image_plan.plan,
        image_plan.base,
        uv_image,
        image_plan.images,
        prebuilt_wheels=wheels is not None,
    )
    meta = out / "torchsmith"
    meta.mkdir(parents=True, exist_ok=True)
    text = json.dumps(manifest(image_plan), indent=2, sort_keys=True) + "\n"
    atomic.write_text(meta / "manifest.json", text)
    fixes = _fixes(image_plan)
    if fixes:
        atomic.write_text(meta / "fixes.json", json.dumps(fixes, indent=2) + "\n")
        atomic.write_text(meta / "apply_fixes.py", APPLY_FIXES)
    if wheels is not None:
        _copy_wheels(wheels, out / "wheels")
    atomic.write_text(out / ".dockerignore", DOCKERIGNORE)
    dockerfile = out / "Dockerfile"
    atomic.write_text(dockerfile, render(data))
    return dockerfile
