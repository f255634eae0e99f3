"""Step ``publish``: the wheel into the output directory, atomically, with the build's manifest
(plan, source identity, toolchain versions, environment, CMake cache values, stage times, cache
hits, sha256s); for a partial build (``--target``) the manifest of the targets' files."""

from __future__ import annotations

from typing import Any

from torchsmith.cache import launcher_env_keys
from torchsmith.doctor import warnings_that_changed_result
from torchsmith.doctor.context import context_from
from torchsmith.doctor.ruledb import load_rules
from torchsmith.plan_model import BuildPlan
from torchsmith.report.manifest import (
    ManifestInputs,
    artifact_record,
    build_manifest,
    manifest_name,
    peak_child_rss_mib,
    source_record,
)
from torchsmith.steps.artifacts import partial_artifacts
from torchsmith.steps.configure import read_cmake_cache
from torchsmith.steps.context import BuildContext, effective_env
from torchsmith.steps.publish import publish_file, publish_manifest, remove_stale_temporaries
from torchsmith.steps.state import BuildState, build_dir

STAGE = "publish"


def result_warnings(ctx: BuildContext) -> list[str]:
    """Warnings in the configure/compile logs that mean a feature was quietly switched off —
    not one the plan switched off itself (issue 28 item 9: a --cpu build ended with warnings
    about cuDNN and MAGMA it never asked for)."""
    context = context_from(ctx.plan.model_dump(mode="json"))
    found: list[str] = []
    for stage in ("configure", "compile"):
        log = ctx.log(stage)
        if log.is_file():
            found += [
                f"{w.title}: {w.fix}"
                for w in warnings_that_changed_result(log, context)
                if warning_applies(w.rule_id, ctx.plan)
            ]
    return list(dict.fromkeys(found))


_CUDA_ONLY = frozenset({"cuda", "cuda-archs", "cudnn", "nccl", "magma"})


def warning_applies(rule_id: str, plan: BuildPlan) -> bool:
    """A feature warning applies unless the plan turned that feature off, or the feature is a
    CUDA one and this is a CPU build (the rule's ``feature``, doctor/rules/feature_off.toml)."""
    feature = {r.id: r.feature for r in load_rules()}.get(rule_id)
    if feature is None:
        return True
    if feature in _CUDA_ONLY and plan.cuda.value is None:
        return False
    asked = plan.features.get(feature)
    return asked is None or asked.value is not False


def _ninja(state: BuildState) -> dict[str, Any]:
    compiled = state.need_compiled()
    return {
        "targets": compiled.targets,
        "edges_run": compiled.edges_run,
        "edges_total": compiled.edges_total,
        "seconds_by_kind": compiled.seconds_by_kind,
    }


def manifest_of(ctx: BuildContext, state: BuildState) -> dict[str, Any]:
    benv, tree = state.need_benv(), state.need_tree()
    keys = set(benv.set_keys) - {"PATH"}
    keys |= set(launcher_env_keys(benv.env))
    return build_manifest(
        ManifestInputs(
            plan=ctx.plan,
            source=source_record(state.need_fetched(), tree),
            toolchain=state.tools.versions,
            env=effective_env(benv.env, keys),
            cmake_cache=read_cmake_cache(tree),
            stages=ctx.timings,
            stages_all_runs=ctx.workspace.timings(),
            ninja=_ninja(state),
            compiler_cache=benv.cache.record(state.need_compiled().cache),
            fixes=state.fixes,
            artifacts=state.artifacts,
            workspace=ctx.workspace.root,
            toolkit=state.toolkit.record if state.toolkit else None,
            verify=state.verified,
            repair=state.repaired,
            result_warnings=result_warnings(ctx),
            executed_steps=list(state.executed),
            peak_rss_mib=peak_child_rss_mib() if ctx.plan.backend == "local" else None,
            cpu=state.need_compiled().cpu,
            request=ctx.options.request,
        )
    )


def _partial(ctx: BuildContext, state: BuildState) -> None:
    state.artifacts = partial_artifacts(build_dir(state.need_tree()), list(ctx.plan.targets))
    with ctx.stage(STAGE, f"manifest of {', '.join(ctx.plan.targets)}"):
        state.manifest = manifest_of(ctx, state)
        name = manifest_name(ctx.plan, None)
        dirs = [ctx.workspace.root, ctx.options.output_dir]
        state.manifest_paths = publish_manifest(state.manifest, dirs, name)


def _wheel(ctx: BuildContext, state: BuildState) -> None:
    wheel, out = state.need_wheel(), ctx.options.output_dir
    with ctx.stage(STAGE, f"{wheel.name} → {out}"):
        out.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(out)
        state.artifacts = [artifact_record(wheel)]
        state.published = [publish_file(wheel, out, plan_hash=ctx.plan.plan_hash())]
        state.manifest = manifest_of(ctx, state)
        name = manifest_name(ctx.plan, wheel)
        state.manifest_paths = publish_manifest(state.manifest, [out, ctx.workspace.root], name)


def run(ctx: BuildContext, state: BuildState) -> None:
    """Step ``publish``."""
    if ctx.partial:
        _partial(ctx, state)
    else:
        _wheel(ctx, state)
