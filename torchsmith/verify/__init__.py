"""Prove that an artifact holds what was asked: inspect it, diff the inspection against the
plan, then run smoke tests in a fresh environment. The build pipeline calls
:func:`verify_artifact` as its last step and :meth:`Verdict.raise_if_failed` on the result."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from torchsmith.errors import UsageError
from torchsmith.inspect.installed import inspect_installed
from torchsmith.inspect.model import Inspection
from torchsmith.inspect.wheel import inspect_wheel
from torchsmith.plan_model import BuildPlan
from torchsmith.runner import Runner
from torchsmith.verify.compare import compare
from torchsmith.verify.expect import Expectations, from_plan, load_plan
from torchsmith.verify.model import Check, Verdict
from torchsmith.verify.smoke import SmokeOptions, run_smoke

if TYPE_CHECKING:
    from torchsmith.report.progress import Reporter

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
    runner: Runner,
    python: str | None = None,
    smoke: SmokeOptions | None = None,
    reporter: Reporter | None = None,
) -> Verdict:
    """Inspect ``wheel`` (or, with ``wheel=None``, the torch that ``python`` imports), diff it
    against ``plan``, and run the smoke tests when ``smoke`` is given. Never raises for a
    mismatch: call :meth:`Verdict.raise_if_failed`. ``reporter`` hears the stages (inspect,
    smoke) and each smoke step and result as it happens."""
    if wheel is None and python is None:
        raise UsageError(
            "verify needs a wheel or an interpreter (--python); an empty path names neither",
            "torchsmith verify path/to/torch-….whl --plan FILE, or --python /path/to/python",
        )
    with _stage(reporter, "inspect", str(wheel or f"the torch {python} imports")):
        heard = reporter.message if reporter is not None else None
        inspection = (
            inspect_wheel(wheel, say=heard)
            if wheel
            else inspect_installed(str(python), env, runner)
        )
    checks = verify_inspection(inspection, plan)
    smoke_checks: list[Check] = []
    if smoke is not None:
        with _stage(reporter, "smoke", f"smoke tests ({smoke.mode})"):
            say = reporter.message if reporter is not None else _silent
            smoke_checks = run_smoke(wheel, smoke, env, say)
    return Verdict(
        artifact=str(wheel or inspection.location),
        checks=checks,
        smoke=smoke_checks,
        inspection=inspection,
    )


def _silent(_text: str) -> None:
    return None


@contextmanager
def _stage(reporter: Reporter | None, name: str, what: str) -> Iterator[None]:
    if reporter is None:
        yield
        return
    reporter.stage_started(name, what)
    start = time.monotonic()
    note = "failed"
    try:
        yield
        note = ""
    finally:
        reporter.stage_finished(name, time.monotonic() - start, note)
