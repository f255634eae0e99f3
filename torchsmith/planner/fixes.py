"""Known fixes that apply to the planned combination; refusals become plan problems."""

from __future__ import annotations

from collections.abc import Callable

from torchsmith.fixes import applicable_fixes
from torchsmith.kb.models import Fix
from torchsmith.plan_model import PlannedFix
from torchsmith.planner.context import Ctx


def _planned(fix: Fix) -> PlannedFix:
    source = fix.sources.get("*") or next(iter(fix.sources.values()), "")
    return PlannedFix(
        id=fix.id,
        title=fix.title,
        action=fix.action,
        env=dict(fix.env),
        edits=[e.model_dump() for e in fix.edits],
        command=list(fix.command),
        explanation=fix.explanation,
        source=source,
    )


def _applicable(ctx: Ctx, cuda: str | None, gcc: str | None, python: str | None) -> list[Fix]:
    if ctx.release is None:
        return []
    return applicable_fixes(
        ctx.kb,
        torch=ctx.release.torch,
        cuda=cuda,
        gcc=gcc,
        python=python,
        source_kind=ctx.spec.source.split(":")[0],
    )


def gcc_refusal(ctx: Ctx, cuda: str | None) -> Callable[[int], Fix | None]:
    """A predicate for the compiler choice: the refusing fix a gcc major would trigger."""

    def refused(major: int) -> Fix | None:
        found = _applicable(ctx, cuda, str(major), None)
        return next((f for f in found if f.action == "refuse" and f.applies.gcc), None)

    return refused


def resolve_fixes(
    ctx: Ctx, cuda: str | None, compiler: str, python: str | None
) -> list[PlannedFix]:
    gcc = compiler.split("-")[1] if compiler.startswith("gcc-") else None
    planned = []
    for fix in _applicable(ctx, cuda, gcc, python):
        if fix.action == "refuse":
            ctx.problem(f"{fix.title}: {fix.explanation}", fix.advice, "torch")
        else:
            planned.append(_planned(fix))
    return planned
