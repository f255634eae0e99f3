"""The `verify` step: the finished wheel is inspected against the plan and smoke-tested in a
fresh venv (torchsmith.verify); a mismatch fails the build with every difference named."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from torchsmith.report.ninja import NinjaStatus
from torchsmith.report.progress import Reporter
from torchsmith.steps.context import BuildContext
from torchsmith.steps.state import BuildEnv, BuildState
from torchsmith.verify import verify_artifact
from torchsmith.verify.smoke import SmokeOptions

STAGE = "verify"


class _Within:
    """The verifier's own stages (inspect, smoke) as messages inside the build's ``verify``
    stage, so its 20-50 s of smoke tests are not silent."""

    def __init__(self, outer: Reporter, stage: str) -> None:
        self.outer, self.stage = outer, stage

    def stage_started(self, name: str, what: str) -> None:
        self.outer.message(f"{self.stage}: {name} — {what}")

    def stage_finished(self, name: str, seconds: float, note: str = "") -> None:
        self.outer.message(f"{self.stage}: {name} {note or 'done'} in {seconds:.1f} s")

    def ninja(self, status: NinjaStatus) -> None:
        self.outer.ninja(status)

    def message(self, text: str) -> None:
        self.outer.message(f"{self.stage}: {text}")

    def close(self) -> None:
        """The build's reporter is closed by the build."""


def verify_wheel(
    ctx: BuildContext, wheel: Path, benv: BuildEnv, base_python: str
) -> dict[str, Any]:
    """Inspect + smoke-test ``wheel``; raises VerifyError on any mismatch."""
    with ctx.stage(STAGE, f"{wheel.name} against the plan, smoke tests"):
        smoke = SmokeOptions(
            python=base_python,
            workdir=ctx.workspace.root / "verify",
            runner=ctx.executor,
            # the Debian route's wheel needs the system python3-* modules (numpy, yaml)
            mode="venv-system" if ctx.plan.source.system_python else "venv",
        )
        reporter = _Within(ctx.reporter, STAGE)
        verdict = verify_artifact(
            wheel, ctx.plan, benv.env, runner=ctx.executor, smoke=smoke, reporter=reporter
        )
        verdict.raise_if_failed()
    return {
        "passed": True,
        "checks": len(verdict.checks) + len(verdict.smoke),
        "warnings": [f"{c.name}: {c.detail}" for c in verdict.warnings],
    }


def run(ctx: BuildContext, state: BuildState) -> None:
    """Step ``verify`` (``--no-verify`` keeps it in the plan and says that it was skipped)."""
    if not ctx.options.verify:
        ctx.reporter.message("verify: skipped (--no-verify); the wheel is published unverified")
        return
    state.verified = verify_wheel(ctx, state.need_wheel(), state.need_benv(), state.tools.python)
