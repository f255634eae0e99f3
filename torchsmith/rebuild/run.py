"""``torchsmith rebuild``: the recorded request planned again (it must give the recorded
plan), built by the ordinary pipeline (:func:`torchsmith.steps.pipeline.run_build`) in a new
workspace with the recorded source and toolchain enforced, and each new wheel compared with the
recorded one (:mod:`torchsmith.attest.compare`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from torchsmith import kb as kbmod
from torchsmith.attest.compare import DiffTool, WheelComparison, compare
from torchsmith.backends import make_executor
from torchsmith.companions.facts import against_of
from torchsmith.errors import UsageError
from torchsmith.host.model import HostFacts
from torchsmith.plan import resolve
from torchsmith.planner.readiness import refuse_not_ready
from torchsmith.rebuild.plan_check import check_same_plan, read_manifest, recorded_of, request_of
from torchsmith.report.progress import Reporter
from torchsmith.runner import Runner
from torchsmith.steps.context import BuildOptions
from torchsmith.steps.pipeline import BuildResult, run_build
from torchsmith.writable import check_build_paths


@dataclass(frozen=True)
class RebuildRequest:
    manifest: Path
    cache_root: Path
    output_dir: Path
    allow_toolchain_drift: bool = False
    install_deps: bool = False
    verify: bool = True


@dataclass(frozen=True)
class Rebuilt:
    result: BuildResult
    wheels: list[WheelComparison]

    @property
    def identical(self) -> bool:
        return bool(self.wheels) and all(w.identical for w in self.wheels)


def _new_workspace(manifest: Mapping[str, Any], cache_root: Path) -> None:
    """A rebuild in the recorded build's own workspace would reuse its objects."""
    recorded = Path(str(manifest.get("workspace", ""))).resolve()
    if recorded.parent == cache_root / "builds":
        raise UsageError(
            f"--cache-root {cache_root} holds the recorded build's workspace ({recorded}): "
            "a rebuild there would reuse its objects",
            "give another --cache-root (an empty directory: the rebuild starts cold)",
        )


def new_wheels(result: BuildResult, output_dir: Path) -> list[Path]:
    names = [str(a.get("name", "")) for a in result.manifest.get("artifacts", [])]
    return [output_dir / n for n in names if n.endswith(".whl")]


def rebuild(
    req: RebuildRequest,
    host: HostFacts,
    env: Mapping[str, str],
    runner: Runner,
    *,
    reporter: Reporter,
    diff: DiffTool | None,
) -> Rebuilt:
    """Plan the recorded request, check it is the recorded plan, build it, compare."""
    manifest = read_manifest(req.manifest)
    _new_workspace(manifest, req.cache_root)
    resolved = request_of(manifest, req.output_dir)
    check_build_paths(str(req.output_dir), resolved.spec.cache.dir, req.cache_root)
    plan = resolve(resolved, kbmod.load(), host, against=against_of(resolved, env, runner))
    check_same_plan(plan, manifest, req.manifest)
    refuse_not_ready(plan)
    options = BuildOptions(
        cache_root=req.cache_root,
        output_dir=req.output_dir,
        install_deps=req.install_deps,
        verify=req.verify,
        request=manifest["request"],
        recorded=recorded_of(manifest, req.manifest, req.allow_toolchain_drift),
    )
    with make_executor(plan.backend, dict(env)) as executor:
        result = run_build(plan, options, executor, reporter, host)
    wheels = compare(manifest, req.manifest.parent, new_wheels(result, req.output_dir), diff)
    return Rebuilt(result, wheels)
