"""Prove that an artifact holds what was asked: inspect it, diff the inspection against the
plan, then run smoke tests in a fresh environment. The build pipeline calls
:func:`verify_artifact` as its last step and :meth:`Verdict.raise_if_failed` on the result."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from torchsmith.errors import UsageError
from torchsmith.inspect.installed import inspect_installed
from torchsmith.inspect.model import Inspection
from torchsmith.inspect.wheel import inspect_wheel
from torchsmith.plan_model import BuildPlan
from torchsmith.verify.compare import compare
from torchsmith.verify.expect import Expectations, from_plan, load_plan
from torchsmith.verify.model import Check, Verdict
from torchsmith.verify.smoke import SmokeOptions, run_smoke

__all__ = [
    "Check",
    "Expectations",
    "SmokeOptions",
    "Verdict",
    "load_plan",
    "verify_artifact",
    "verify_inspection",
]


def verify_inspection(inspection: Inspection, plan: BuildPlan | Expectations) -> list[Check]:
    """The static checks only (no process is started)."""
    expected = plan if isinstance(plan, Expectations) else from_plan(plan)
    return compare(inspection, expected)


def verify_artifact(
    wheel: Path | None,
    plan: BuildPlan | Expectations,
    env: Mapping[str, str],
    *,
    python: str | None = None,
    smoke: SmokeOptions | None = None,
) -> Verdict:
    """Inspect ``wheel`` (or, with ``wheel=None``, the torch that ``python`` imports), diff it
    against ``plan``, and run the smoke tests when ``smoke`` is given. Never raises for a
    mismatch: call :meth:`Verdict.raise_if_failed`."""
    if wheel is not None:
        inspection = inspect_wheel(wheel)
    elif python is not None:
        inspection = inspect_installed(python, env)
    else:
        raise UsageError("verify needs a wheel or an interpreter (--python)")
    checks = verify_inspection(inspection, plan)
    smoke_checks = run_smoke(wheel, smoke, env) if smoke is not None else []
    return Verdict(
        artifact=str(wheel or inspection.location),
        checks=checks,
        smoke=smoke_checks,
        inspection=inspection,
    )
