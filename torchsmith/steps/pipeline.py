"""The build: preflight, the workspace, then the plan's steps — exactly ``plan.steps``, in that
order, each looked up in :data:`STEPS` (the plan is executed as data). Every step resumes:
finished work is kept (stage markers, ninja's own state), so the same command after Ctrl-C or
SIGKILL picks up where it stopped."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

from typing_extensions import assert_never

from torchsmith.backends.base import Executor
from torchsmith.host.model import HostFacts
from torchsmith.plan_model import BuildPlan, StepName
from torchsmith.report.progress import Reporter
from torchsmith.steps import (
    attest,
    companion,
    compile,
    conda,
    configure,
    environment,
    fixes,
    install,
    outputs,
    package,
    repair,
    source,
    toolchain,
    verify,
)
from torchsmith.steps.context import BuildContext, BuildOptions
from torchsmith.steps.preflight import preflight
from torchsmith.steps.recorded import check_toolchain
from torchsmith.steps.state import BuildState
from torchsmith.workspace import prepare_workspace

StepFn = Callable[[BuildContext, BuildState], None]


def step_impl(name: StepName) -> StepFn:
    """The implementation of one planned step (exhaustive over :data:`StepName`)."""
    match name:
        case "fetch":
            return source.run_fetch
        case "copy":
            return source.run_copy
        case "toolchain":
            return toolchain.run
        case "environment":
            return environment.run
        case "fixes":
            return fixes.run
        case "configure":
            return configure.run
        case "compile":
            return compile.run
        case "package":
            return package.run
        case "repair":
            return repair.run
        case "verify":
            return verify.run
        case "publish":
            return outputs.run
        case "conda":
            return conda.run
        case "install":
            return install.run
        case "attest":
            return attest.run
        case _:
            assert_never(name)


STEPS: Mapping[str, StepFn] = {name: step_impl(name) for name in get_args(StepName)}
"""Every step the pipeline carries out (planner/support.py's PIPELINE is checked against it)."""
COMPANION_STEPS: Mapping[str, companion.SubjectStepFn] = companion.STEPS
"""The same steps with a companion as their subject (:mod:`torchsmith.steps.companion`)."""


@dataclass(frozen=True)
class BuildResult:
    manifest: dict[str, Any]
    manifest_paths: list[Path]
    wheel: Path | None
    workspace: Path
    log_dir: Path
    artifacts: list[dict[str, Any]] = field(default_factory=list)
    executed: list[str] = field(default_factory=list)


def execute(
    ctx: BuildContext,
    state: BuildState,
    steps: Mapping[str, StepFn] = STEPS,
    companion_steps: Mapping[str, companion.SubjectStepFn] = COMPANION_STEPS,
) -> None:
    """Run the plan's steps in order; ``state.executed`` records each one (its label:
    ``compile``, ``torchvision-compile``) as it starts."""
    for step in ctx.plan.steps:
        state.executed.append(step.label)
        if step.subject is None:
            steps[step.name](ctx, state)
        else:
            companion.run_step(ctx, state, step, companion_steps)


def run_build(
    plan: BuildPlan,
    options: BuildOptions,
    executor: Executor,
    reporter: Reporter,
    host: HostFacts,
    *,
    steps: Mapping[str, StepFn] = STEPS,
) -> BuildResult:
    """Build ``plan`` (made with ``host``'s facts): a wheel in the output directory, or the
    targets of a partial build."""
    env = executor.environment()
    tools = preflight(executor, plan, env, options.cache_root, options.install_deps)
    check_toolchain(options.recorded, tools.versions, reporter.message)  # rebuild
    workspace = prepare_workspace(options.cache_root, plan, tools.versions, reporter.message)
    ctx = BuildContext(plan, workspace, executor, reporter, options, host)
    state = BuildState(tools=tools, base_env=dict(env))
    try:
        execute(ctx, state, steps)
    finally:
        workspace.release()  # the next run of this plan (in this process too) may build here
        if state.benv is not None:  # sccache's socket and cluster config (token) go with it
            state.benv.cache.release()
    published = state.published[0] if state.published else None
    return BuildResult(
        state.manifest,
        state.manifest_paths,
        published,
        workspace.root,
        workspace.logs,
        state.artifacts,
        state.executed,
    )
