"""The build manifest: everything needed to know what a build was and to repeat it.

Pure functions: :func:`build_manifest` assembles the JSON document from what the steps
recorded; nothing here runs a command.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from torchsmith import __version__
from torchsmith.cache import CacheStats
from torchsmith.hashing import sha256_file
from torchsmith.plan_model import BuildPlan
from torchsmith.redact import redact_data
from torchsmith.sources.base import SourceTree

MANIFEST_SCHEMA = 1
PEAK_RSS_WHAT = (
    "the largest resident set of one process torchsmith ran and waited for, in any stage "
    "(getrusage RUSAGE_CHILDREN ru_maxrss); parallel jobs together may have used more"
)


def peak_child_rss_mib() -> float:
    """ru_maxrss of the children waited for so far (Linux counts it in KiB), in MiB."""
    return round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1)


def artifact_record(path: Path, name: str | None = None) -> dict[str, Any]:
    return {"name": name or path.name, "size": path.stat().st_size, "sha256": sha256_file(path)}


def cache_record(kind: str, stats: CacheStats | None) -> dict[str, Any]:
    if stats is None:
        return {"kind": kind, "hits": None, "misses": None, "hit_rate": None}
    rate = None if stats.hit_rate is None else round(stats.hit_rate, 4)
    return {"kind": kind, "hits": stats.hits, "misses": stats.misses, "hit_rate": rate}


def source_record(tree: SourceTree, build_tree: Path) -> dict[str, Any]:
    return {
        "kind": tree.kind,
        "version": tree.version,
        "identity": tree.identity,
        **tree.epoch_record(),
        "fetched_to": str(tree.root),
        "built_in": str(build_tree),
        "details": dict(tree.details),
    }


@dataclass(frozen=True)
class ManifestInputs:
    """What the steps recorded, gathered for the manifest."""

    plan: BuildPlan
    source: dict[str, Any]
    toolchain: Mapping[str, str]
    env: Mapping[str, str]
    cmake_cache: Mapping[str, str]
    stages: Mapping[str, float]
    stages_all_runs: Mapping[str, float]
    ninja: Mapping[str, Any]
    compiler_cache: Mapping[str, Any]
    fixes: Sequence[Mapping[str, str]]
    artifacts: Sequence[Mapping[str, Any]]
    workspace: Path
    toolkit: Mapping[str, Any] | None = None
    verify: Mapping[str, Any] | None = None
    repair: Mapping[str, Any] | None = None
    result_warnings: Sequence[str] = ()
    executed_steps: Sequence[str] = ()
    peak_rss_mib: float | None = None
    cpu: Mapping[str, Any] | None = None
    request: Mapping[str, Any] | None = None


def build_manifest(inputs: ManifestInputs) -> dict[str, Any]:
    """The manifest document; every string in it has URL credentials redacted (it is
    published next to the wheel)."""
    manifest: dict[str, Any] = redact_data(_document(inputs))
    return manifest


def _document(inputs: ManifestInputs) -> dict[str, Any]:
    plan = inputs.plan
    return {
        "schema_version": MANIFEST_SCHEMA,
        "kind": "partial" if plan.targets else "wheel",
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "torchsmith": __version__,
        "plan_hash": plan.plan_hash(),
        "plan": plan.model_dump(mode="json"),
        "targets": list(plan.targets),
        "source": dict(inputs.source),
        "toolchain": dict(sorted(inputs.toolchain.items())),
        "env": dict(sorted(inputs.env.items())),
        "cmake_cache": dict(sorted(inputs.cmake_cache.items())),
        "stages": {k: round(v, 1) for k, v in inputs.stages.items()},
        "stages_all_runs": dict(inputs.stages_all_runs),
        "total_seconds": round(sum(inputs.stages.values()), 1),
        "ninja": dict(inputs.ninja),
        "compiler_cache": dict(inputs.compiler_cache),
        "fixes": [dict(f) for f in inputs.fixes],
        "artifacts": [dict(a) for a in inputs.artifacts],
        "workspace": str(inputs.workspace),
        "toolkit": dict(inputs.toolkit) if inputs.toolkit else None,
        "verify": dict(inputs.verify) if inputs.verify else None,
        "repair": dict(inputs.repair) if inputs.repair else None,
        "result_warnings": list(inputs.result_warnings),
        "executed_steps": list(inputs.executed_steps),
        **({"request": dict(inputs.request)} if inputs.request else {}),
        "resources": {
            "peak_process_rss_mib": inputs.peak_rss_mib,
            "what": PEAK_RSS_WHAT if inputs.peak_rss_mib is not None else "not recorded",
            "cpu_during_compile": dict(inputs.cpu) if inputs.cpu else None,
        },
    }


def manifest_name(plan: BuildPlan, wheel: Path | None) -> str:
    """``<wheel name without .whl>.manifest.json``, or one named by the plan for partial builds."""
    if wheel is not None:
        return wheel.name.removesuffix(".whl") + ".manifest.json"
    return f"torchsmith-partial-{plan.plan_hash()}.manifest.json"
