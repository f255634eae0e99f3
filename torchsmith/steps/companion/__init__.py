"""A companion's steps: each companion of the plan (torchvision, torchaudio) built against
exactly its torch — the wheel ``--against`` names, the torch an ``--against python:PATH``
interpreter imports, or (one run) the torch wheel this build has just published — through the
plan's own steps with the companion as their subject (``PlanStep.subject``), in the order the
planner emits them (:mod:`torchsmith.planner.companion_steps`):

``environment`` (:mod:`.env`), ``fetch`` and ``compile`` (:mod:`.build`), ``repair``
(:mod:`.repair`), ``verify`` (:mod:`.check`), ``publish`` and ``conda`` (:mod:`.outputs`).

Each step has its own stage, log (``<workspace>/logs/torchvision-compile.log``) and marker, so
rerunning the same command resumes at the step that did not finish. A failure names the
companion, its step and its log. Only what is companion-specific lives here: a venv holding the
exact torch (``--no-deps``), torch's libraries left external at repair, the torch pin checked.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import get_args

from typing_extensions import assert_never

from torchsmith.errors import BuildError, InternalError, InterruptError, ToolError, TorchsmithError
from torchsmith.plan_model import PlanStep, StepName
from torchsmith.steps.companion import build, check, env, outputs, repair
from torchsmith.steps.companion.run import companion, plan_of
from torchsmith.steps.context import BuildContext
from torchsmith.steps.state import BuildState

SubjectStepFn = Callable[[BuildContext, BuildState, str], None]


def _not_a_companion_step(name: StepName) -> SubjectStepFn:
    def refuse(ctx: BuildContext, state: BuildState, subject: str) -> None:
        raise InternalError(
            f"the plan has a {name!r} step for companion {subject}, which has no such step",
            "report this as a torchsmith bug",
        )

    return refuse


def step_impl(name: StepName) -> SubjectStepFn:
    """The implementation of a companion's step (exhaustive over :data:`StepName`)."""
    match name:
        case "environment":
            return env.run
        case "fetch":
            return build.run_fetch
        case "compile":
            return build.run_compile
        case "repair":
            return repair.run
        case "verify":
            return check.run
        case "publish":
            return outputs.run_publish
        case "conda":
            return outputs.run_conda
        case "copy" | "toolchain" | "fixes" | "configure" | "package" | "install" | "attest":
            return _not_a_companion_step(name)
        case _:
            assert_never(name)


STEPS: Mapping[str, SubjectStepFn] = {name: step_impl(name) for name in get_args(StepName)}
"""Every companion step the pipeline carries out, by step name."""


def run_step(
    ctx: BuildContext, state: BuildState, step: PlanStep, steps: Mapping[str, SubjectStepFn]
) -> None:
    """Run one companion step; a failure names the companion, its step and its log."""
    subject = step.subject or ""
    try:
        steps[step.name](ctx, state, subject)
    except (InternalError, InterruptError):
        raise
    except TorchsmithError as exc:
        raise failure(ctx, step, exc, state) from exc


def failure(
    ctx: BuildContext, step: PlanStep, exc: TorchsmithError, state: BuildState
) -> BuildError:
    comp = companion(plan_of(ctx), step.subject or "")
    log = getattr(exc, "log_path", None) or str(ctx.log(step.label))
    torch = state.companions.published_torch if state.companions else None
    kept = f"The torch wheel is kept ({torch}); " if torch else ""
    return BuildError(
        f"companion {comp.name} {comp.version} failed in step {step.label}: {exc.message}",
        f"log: {log}. {kept}rerunning the same command resumes at {step.label}. {exc.hint}".strip(),
        log_path=log,
        excerpt=exc.excerpt if isinstance(exc, ToolError) else (),
        returncode=exc.returncode if isinstance(exc, ToolError) else None,
    )
