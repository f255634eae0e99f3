"""The `verify` step: the finished wheel is inspected against the plan and smoke-tested in a
fresh venv (torchsmith.verify); a mismatch fails the build with every difference named."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from torchsmith.steps.context import BuildContext
from torchsmith.steps.state import BuildEnv, BuildState
from torchsmith.verify import verify_artifact
from torchsmith.verify.smoke import SmokeOptions

STAGE = "verify"


def verify_wheel(
    ctx: BuildContext, wheel: Path, benv: BuildEnv, base_python: str
) -> dict[str, Any]:
    """Inspect + smoke-test ``wheel``; raises VerifyError on any mismatch."""
    with ctx.stage(STAGE, f"{wheel.name} against the plan, smoke tests"):
        smoke = SmokeOptions(
            python=base_python,
            workdir=ctx.workspace.root / "verify",
            # the Debian route's wheel needs the system python3-* modules (numpy, yaml)
            mode="venv-system" if ctx.plan.source.kind == "debian" else "venv",
        )
        verdict = verify_artifact(wheel, ctx.plan, benv.env, smoke=smoke)
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
