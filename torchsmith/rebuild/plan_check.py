"""``torchsmith rebuild MANIFEST``, the parts before the build: the request the manifest
recorded turned back into a spec, the plan made from it checked against the recorded plan (the
same hash, or the keys that differ), and what the build must match (:class:`Recorded`: the
source identity, the toolchain versions). The build itself is the ordinary pipeline."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from torchsmith.errors import PlanError, Problem, UsageError
from torchsmith.plan_model import HASH_EXCLUDES, BuildPlan, hash_plan_data
from torchsmith.spec import BuildSpec
from torchsmith.spec_sources import Origin, ResolvedSpec
from torchsmith.steps.recorded import Recorded

_HINT = "give the manifest.json `torchsmith build` wrote beside the wheel"


def read_manifest(path: Path) -> dict[str, Any]:
    """The manifest, with the plan and request a rebuild needs (:class:`UsageError` if not)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise UsageError(f"{path}: not a readable manifest ({exc})", _HINT) from exc
    if not isinstance(data, dict) or not isinstance(data.get("plan"), dict):
        raise UsageError(f"{path}: no recorded plan (not a build manifest)", _HINT)
    if not isinstance(data.get("request"), dict):
        raise UsageError(
            f"{path}: no recorded request (written before torchsmith recorded it)",
            "build it once more with the same command: its new manifest can be rebuilt",
        )
    return data


def request_of(manifest: Mapping[str, Any], output_dir: Path) -> ResolvedSpec:
    """The recorded request as a spec, publishing into ``output_dir`` instead."""
    request = manifest["request"]
    values = {**request.get("spec", {}), "output_dir": str(output_dir)}
    try:
        spec = BuildSpec.model_validate(values)
    except ValidationError as exc:
        raise UsageError(
            f"the recorded request is not a spec this torchsmith accepts: {exc.errors()[0]['msg']}",
            "rebuild with the torchsmith version the manifest names",
        ) from exc
    origins: dict[str, Origin] = dict(request.get("origins", {}))
    return ResolvedSpec(spec, origins)


def plan_differences(plan: BuildPlan, recorded: Mapping[str, Any]) -> list[str]:
    """The hashed plan keys whose values differ from the recorded plan's."""
    ours = plan.model_dump(mode="json")
    keys = sorted((set(ours) | set(recorded)) - HASH_EXCLUDES)
    return [k for k in keys if ours.get(k) != recorded.get(k)]


def check_same_plan(plan: BuildPlan, manifest: Mapping[str, Any], path: Path) -> None:
    """The plan made now is the recorded one (:class:`PlanError` naming the keys that differ)."""
    recorded = manifest["plan"]
    if plan.plan_hash() == hash_plan_data(dict(recorded)):
        return
    keys = plan_differences(plan, recorded) or ["(values hashed differently)"]
    raise PlanError(
        [
            Problem(
                f"the recorded request plans differently here (plan {plan.plan_hash()}, "
                f"{path.name} records {hash_plan_data(dict(recorded))}): {', '.join(keys)}",
                "rebuild on a machine like the recorded one (see `torchsmith plan --json` for "
                "each decision's reason), or name the differing values in a new build",
            )
        ],
        "nothing was built",
    )


def _epoch(source: Any) -> int | None:
    """The source's recorded SOURCE_DATE_EPOCH (manifests before it: None)."""
    epoch = source.get("epoch") if isinstance(source, dict) else None
    return int(epoch) if isinstance(epoch, int) else None


def recorded_of(manifest: Mapping[str, Any], path: Path, allow_drift: bool) -> Recorded:
    source = manifest.get("source", {})
    identity = source.get("identity") if isinstance(source, dict) else None
    toolchain = manifest.get("toolchain", {})
    return Recorded(
        manifest=path.name,
        source_identity=str(identity) if identity else None,
        epoch=_epoch(source),
        toolchain={str(k): str(v) for k, v in toolchain.items()}
        if isinstance(toolchain, dict)
        else {},
        allow_drift=allow_drift,
    )
