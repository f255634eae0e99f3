"""A companion's ``publish`` and ``conda`` steps. Publishing puts its wheel into the output
directory, atomically, and writes the manifest again with every companion published so far:
for companions built against a given torch (``--against``) their own manifest
(``companions-<plan hash>.manifest.json``), in one run with torch the torch build's manifest,
which gains them (one manifest for all the wheels). ``conda`` makes the companion's conda
package (named by its distribution, depending on ``pytorch ==X`` as its Requires-Dist pins)
into the same channel as torch's, ``OUTPUT/conda-channel``."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from torchsmith.errors import InternalError
from torchsmith.packaging import conda
from torchsmith.planner.reproducible import EPOCH, companion_build_epoch
from torchsmith.publish.conda_channel import add_to_channel
from torchsmith.report.manifest import artifact_record
from torchsmith.steps.companion.run import CompanionRun, Made, companion, need, need_run, root
from torchsmith.steps.conda import CHANNEL, variant
from torchsmith.steps.context import BuildContext
from torchsmith.steps.publish import publish_file, publish_manifest
from torchsmith.steps.state import BuildState


def record(comp_env: dict[str, str], made: Made, name: str, version: str) -> dict[str, Any]:
    final = need(made.published, "the published wheel", "publish")
    return {
        "name": name,
        "version": version,
        "source": made.source,
        "env": comp_env,
        "compiler_cache": made.compiler_cache,
        "repair": made.repair,
        "verify": made.verify,
        "artifact": artifact_record(final),
    }


def total_cache(kind: str, records: list[dict[str, Any]]) -> dict[str, Any]:
    hits = sum(int(r.get("hits") or 0) for r in records)
    misses = sum(int(r.get("misses") or 0) for r in records)
    rate = round(hits / (hits + misses), 4) if hits + misses else None
    return {"kind": kind, "hits": hits, "misses": misses, "hit_rate": rate}


def _own_manifest(ctx: BuildContext, state: BuildState, run: CompanionRun) -> None:
    """Companions against a given torch: their own manifest."""
    records = list(run.records.values())
    torch = [run.env.source.wheel] if run.env.source.wheel else []
    state.artifacts = [artifact_record(w) for w in torch] + [r["artifact"] for r in records]
    state.published = torch + [m.published for m in run.made.values() if m.published]
    caches = [r["compiler_cache"] for r in records]
    state.manifest = {
        "schema_version": 1,
        "kind": "companions",
        "plan_hash": ctx.plan.plan_hash(),
        "plan": ctx.plan.model_dump(mode="json"),
        "source": {"kind": "against", "version": run.plan.torch.version},
        "torch": {**run.plan.torch.model_dump(mode="json"), "in_build_env": run.env.torch},
        "companions": records,
        "stages": {k: round(v, 1) for k, v in ctx.timings.items()},
        "total_seconds": round(sum(ctx.timings.values()), 1),
        "compiler_cache": total_cache(run.env.cache.kind, caches),
        "artifacts": state.artifacts,
        "executed_steps": list(state.executed),
        "workspace": str(ctx.workspace.root),
        **({"request": dict(ctx.options.request)} if ctx.options.request else {}),
    }
    name = f"companions-{ctx.plan.plan_hash()}.manifest.json"
    dirs = [ctx.options.output_dir, ctx.workspace.root]
    state.manifest_paths = publish_manifest(state.manifest, dirs, name)


def add_to_torch_manifest(ctx: BuildContext, state: BuildState, run: CompanionRun) -> None:
    """One run: the torch build's manifest gains the companions (records, artifacts, stage
    times) and is published again under its own name — one manifest for all the wheels."""
    if not state.manifest_paths:
        raise InternalError(
            "a companion was published before the torch's manifest",
            "the plan's steps are out of order; report this as a torchsmith bug",
        )
    torch_artifacts = [a for a in state.artifacts if a.get("companion") is None]
    ours = [{**r["artifact"], "companion": name} for name, r in run.records.items()]
    state.artifacts = torch_artifacts + ours
    state.published = [p for p in state.published if p not in _companion_wheels(run)]
    state.published += _companion_wheels(run)
    manifest = dict(state.manifest)
    manifest["companions"] = list(run.records.values())
    manifest["companions_torch_in_build_env"] = run.env.torch
    manifest["artifacts"] = state.artifacts
    manifest["stages"] = {k: round(v, 1) for k, v in ctx.timings.items()}
    manifest["executed_steps"] = list(state.executed)
    state.manifest = manifest
    dirs = [ctx.options.output_dir, ctx.workspace.root]
    state.manifest_paths = publish_manifest(manifest, dirs, state.manifest_paths[0].name)


def _companion_wheels(run: CompanionRun) -> list[Path]:
    return [m.published for m in run.made.values() if m.published is not None]


def run_publish(ctx: BuildContext, state: BuildState, subject: str) -> None:
    """Step ``publish`` of companion ``subject``."""
    run = need_run(state)
    comp, made = companion(run.plan, subject), run.of(subject)
    wheel, out = need(made.wheel, "the companion's wheel", "compile"), ctx.options.output_dir
    with ctx.stage(f"{subject}-publish", f"{wheel.name} → {out}"):
        out.mkdir(parents=True, exist_ok=True)
        made.published = publish_file(wheel, out, plan_hash=ctx.plan.plan_hash())
        env = {v.name: v.value for v in comp.env}
        env[EPOCH] = str(companion_build_epoch(ctx.plan, comp, made.source))  # as resolved
        run.records[subject] = record(env, made, comp.name, comp.version)
        if run.plan.torch.kind == "build":
            add_to_torch_manifest(ctx, state, run)
        else:
            _own_manifest(ctx, state, run)


def run_conda(ctx: BuildContext, state: BuildState, subject: str) -> None:
    """Step ``conda`` of companion ``subject``: its published wheel as a conda package."""
    run = need_run(state)
    wheel = need(run.of(subject).published, "the published wheel", "publish")
    python = run.plan.torch.python or ctx.plan.python.value
    if python is None:
        raise InternalError("the conda step has no Python version", "report this as a bug")
    cuda, cudnn = variant(ctx, state) if run.plan.cuda else (None, None)
    package = conda.package_for(wheel, python, conda.build_string(python, cuda, cudnn))
    channel = ctx.options.output_dir / CHANNEL
    work = root(ctx) / subject / "conda"
    with ctx.stage(f"{subject}-conda", f"{package.filename} into the channel {channel}"):
        shutil.rmtree(work, ignore_errors=True)
        conda.stage_wheel(wheel, work / "files", python)
        made = conda.assemble(work / "files", work / "out", package)
        done = add_to_channel(made, channel)
    ctx.reporter.message(f"{subject}-conda: {done.artifact} {done.outcome} ({channel})")
