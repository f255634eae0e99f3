"""The build, stage by stage: preflight → workspace → fetch → environment → fixes → configure
→ compile → package → publish. Every stage resumes: finished work is kept (stage markers,
ninja's own state), so the same command after Ctrl-C or SIGKILL picks up where it stopped."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from torchsmith.backends.base import Executor
from torchsmith.cache import launcher_env_keys
from torchsmith.doctor import warnings_that_changed_result
from torchsmith.doctor.context import context_from
from torchsmith.plan_model import BuildPlan
from torchsmith.report.manifest import (
    ManifestInputs,
    artifact_record,
    build_manifest,
    cache_record,
    manifest_name,
    source_record,
)
from torchsmith.report.progress import Reporter
from torchsmith.steps.artifacts import partial_artifacts
from torchsmith.steps.compile import CompileResult, compile_targets
from torchsmith.steps.configure import build_dir, configure, read_cmake_cache
from torchsmith.steps.context import BuildContext, BuildOptions, effective_env
from torchsmith.steps.environment import BuildEnv, prepare_environment
from torchsmith.steps.fixes import apply_fixes
from torchsmith.steps.package import make_wheel
from torchsmith.steps.preflight import Toolchain, preflight
from torchsmith.steps.publish import publish_file, publish_manifest, remove_stale_temporaries
from torchsmith.steps.source import build_tree, fetch
from torchsmith.steps.toolchain import provision
from torchsmith.steps.verify import verify_wheel
from torchsmith.workspace import prepare_workspace


@dataclass(frozen=True)
class BuildResult:
    manifest: dict[str, Any]
    manifest_paths: list[Path]
    wheel: Path | None
    workspace: Path
    log_dir: Path
    artifacts: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class _Built:
    tree: Path
    source: dict[str, Any]
    fixes: list[dict[str, str]]
    benv: BuildEnv
    compiled: CompileResult
    toolkit: dict[str, Any] | None


def _build(ctx: BuildContext, tools: Toolchain) -> _Built:
    base = ctx.executor.environment()
    fetched = fetch(ctx, base)
    tree = build_tree(ctx, fetched)
    toolkit = provision(ctx, base)
    benv = prepare_environment(ctx, tools, tree, toolkit.env)
    # after the environment: fix commands (e.g. `python -m pip install "numpy<2"`) act on it
    fixes = apply_fixes(ctx, tree, benv.env, fetched.details)
    configure(ctx, tree, benv)
    compiled = compile_targets(ctx, tree, benv)
    return _Built(tree, source_record(fetched, tree), fixes, benv, compiled, toolkit.record)


def _manifest(
    ctx: BuildContext,
    tools: Toolchain,
    built: _Built,
    artifacts: list[dict[str, Any]],
    verified: dict[str, Any] | None = None,
) -> dict[str, Any]:
    keys = set(built.benv.set_keys) - {"PATH"}
    keys |= set(launcher_env_keys(built.benv.env))
    ninja = {
        "targets": built.compiled.targets,
        "edges_run": built.compiled.edges_run,
        "edges_total": built.compiled.edges_total,
        "seconds_by_kind": built.compiled.seconds_by_kind,
    }
    return build_manifest(
        ManifestInputs(
            plan=ctx.plan,
            source=built.source,
            toolchain=tools.versions,
            env=effective_env(built.benv.env, keys),
            cmake_cache=read_cmake_cache(built.tree),
            stages=ctx.timings,
            stages_all_runs=ctx.workspace.timings(),
            ninja=ninja,
            compiler_cache=cache_record(built.benv.cache.kind, built.compiled.cache),
            fixes=built.fixes,
            artifacts=artifacts,
            workspace=ctx.workspace.root,
            toolkit=built.toolkit,
            verify=verified,
            result_warnings=result_warnings(ctx),
        )
    )


def result_warnings(ctx: BuildContext) -> list[str]:
    """Warnings in the configure/compile logs that mean a feature was quietly switched off."""
    context = context_from(ctx.plan.model_dump(mode="json"))
    found: list[str] = []
    for stage in ("configure", "compile"):
        log = ctx.log(stage)
        if log.is_file():
            found += [f"{w.title}: {w.fix}" for w in warnings_that_changed_result(log, context)]
    return list(dict.fromkeys(found))


def _finish_partial(ctx: BuildContext, tools: Toolchain, built: _Built) -> BuildResult:
    artifacts = partial_artifacts(build_dir(built.tree), list(ctx.plan.targets))
    manifest = _manifest(ctx, tools, built, artifacts)
    name = manifest_name(ctx.plan, None)
    paths = publish_manifest(manifest, [ctx.workspace.root, ctx.options.output_dir], name)
    return BuildResult(manifest, paths, None, ctx.workspace.root, ctx.workspace.logs, artifacts)


def _finish_wheel(ctx: BuildContext, tools: Toolchain, built: _Built) -> BuildResult:
    wheel = make_wheel(ctx, built.tree, built.benv)
    verified = verify_wheel(ctx, wheel, built.benv, tools.python) if ctx.options.verify else None
    out = ctx.options.output_dir
    with ctx.stage("publish", f"{wheel.name} → {out}"):
        out.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(out)
        artifacts = [artifact_record(wheel)]
        published = publish_file(wheel, out)
        manifest = _manifest(ctx, tools, built, artifacts, verified)
        name = manifest_name(ctx.plan, wheel)
        paths = publish_manifest(manifest, [out, ctx.workspace.root], name)
    return BuildResult(
        manifest, paths, published, ctx.workspace.root, ctx.workspace.logs, artifacts
    )


def run_build(
    plan: BuildPlan, options: BuildOptions, executor: Executor, reporter: Reporter
) -> BuildResult:
    """Build ``plan``: a wheel in the output directory, or the targets of a partial build."""
    env = executor.environment()
    tools = preflight(executor, plan, env, options.cache_root, options.install_deps)
    workspace = prepare_workspace(options.cache_root, plan, tools.versions, reporter.message)
    ctx = BuildContext(plan, workspace, executor, reporter, options)
    built = _build(ctx, tools)
    if ctx.partial:
        return _finish_partial(ctx, tools, built)
    return _finish_wheel(ctx, tools, built)
