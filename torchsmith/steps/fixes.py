"""Step "fixes": apply the plan's known fixes to the build tree, each reported with its reason.

Patches go through :func:`torchsmith.steps.edits.apply_edits` (checked with a dry run first,
idempotent); commands (e.g. regenerating a header with the system's flatc, copying a header from
another Debian version's packaging) run in the tree, their ``{debian_extra:…}`` placeholders
filled from the source tree's details. The step records what it applied in the workspace, so a
resumed build does not re-run commands whose output ninja would see as changed (a rewritten
header means recompiling everything that includes it).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from torchsmith.errors import PlanError, Problem
from torchsmith.plan_model import PlannedFix
from torchsmith.steps.context import BuildContext
from torchsmith.steps.edits import apply_edits
from torchsmith.steps.state import BuildState

if sys.version_info >= (3, 11):
    from typing import assert_never
else:  # pragma: no cover (pydantic requires typing_extensions)
    from typing_extensions import assert_never

STAGE = "fixes"


def _apply_patch(tree: Path, fix: PlannedFix) -> str:
    lines = apply_edits(tree, fix)  # checks every edit before writing any file
    return "; ".join(lines) or "nothing to edit"


def _run_command(
    ctx: BuildContext,
    tree: Path,
    fix: PlannedFix,
    env: Mapping[str, str],
    details: Mapping[str, str],
) -> str:
    from torchsmith.sources import expand_placeholders

    argv = expand_placeholders(fix.command, details)
    ctx.executor.run(argv, env=env, cwd=tree, log_path=ctx.log(STAGE))
    return "ran " + " ".join(fix.command)


def _apply_one(
    ctx: BuildContext,
    tree: Path,
    fix: PlannedFix,
    env: Mapping[str, str],
    details: Mapping[str, str],
) -> str:
    match fix.action:
        case "env":
            return "environment: " + " ".join(f"{k}={v}" for k, v in fix.env.items())
        case "patch":
            return _apply_patch(tree, fix)
        case "command":
            return _run_command(ctx, tree, fix, env, details)
        case "refuse":
            raise PlanError([Problem(f"{fix.title}: {fix.explanation}")])
        case unknown:
            assert_never(unknown)


def apply_fixes(
    ctx: BuildContext, tree: Path, env: Mapping[str, str], details: Mapping[str, str]
) -> list[dict[str, str]]:
    """Apply every planned fix once per build tree; the record of what was done."""
    if ctx.workspace.is_done(STAGE):
        return list(ctx.workspace.read_marker(STAGE).get("fixes", []))
    applied = []
    with ctx.stage(STAGE, ", ".join(f.id for f in ctx.plan.fixes) or "none needed"):
        for fix in ctx.plan.fixes:
            status = _apply_one(ctx, tree, fix, env, details)
            ctx.reporter.message(f"fix {fix.id}: {fix.title} — {status} ({fix.source})")
            record = {"id": fix.id, "title": fix.title, "status": status, "why": fix.explanation}
            applied.append(record)
    ctx.workspace.mark_done(STAGE, {"fixes": applied})
    return applied


def run(ctx: BuildContext, state: BuildState) -> None:
    """Step ``fixes``: after ``environment``, so fix commands act on the build's Python."""
    details = state.need_fetched().details
    state.fixes = apply_fixes(ctx, state.need_tree(), state.need_benv().env, details)
