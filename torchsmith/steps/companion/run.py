"""What a companion's steps share within one run: the torch they are built against (as the
environment step found it) and, per companion, what its earlier steps made. The environment
step makes it; every later step of a companion reads it through :func:`need_run`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from torchsmith.cache import CompilerCache
from torchsmith.companions.torchsource import TorchSource
from torchsmith.errors import InternalError
from torchsmith.plan_types import CompanionBuild, CompanionBuildPlan
from torchsmith.steps.context import BuildContext
from torchsmith.steps.state import BuildState


@dataclass(frozen=True)
class Env:
    """The companions' build environment."""

    python: Path
    base: dict[str, str]
    cache: CompilerCache
    cache_bin: Path | None
    torch: dict[str, Any]
    source: TorchSource
    """The torch every venv gets: the published wheel, or --against python:'s own."""
    cuda_env: dict[str, str]
    """The companions' CUDA variables known only once the toolkit is provisioned."""
    toolkit: dict[str, Any] | None = None
    made: dict[str, Path] = field(default_factory=dict)
    """What this run has made once for all companions (the smoke venv)."""


@dataclass
class Made:
    """What one companion's steps have made so far (each step fills its part)."""

    source: dict[str, Any] = field(default_factory=dict)
    built: Path | None = None
    """The wheel ``pip wheel`` made (compile)."""
    compiler_cache: dict[str, Any] = field(default_factory=dict)
    wheel: Path | None = None
    """The wheel the later steps take: the repaired one once repair ran."""
    repair: dict[str, Any] | None = None
    verify: dict[str, Any] | None = None
    published: Path | None = None


@dataclass
class CompanionRun:
    """The companions' part of one build run."""

    plan: CompanionBuildPlan
    """The plan's companions, with the torch they are built against on disk."""
    env: Env
    published_torch: Path | None
    made: dict[str, Made] = field(default_factory=dict)
    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Each published companion's manifest record, in build order."""

    def of(self, name: str) -> Made:
        return self.made.setdefault(name, Made())


def plan_of(ctx: BuildContext) -> CompanionBuildPlan:
    build = ctx.plan.companion_build
    if build is None:
        raise InternalError(
            "a companion's step ran for a plan without companions to build",
            "report this as a torchsmith bug",
        )
    return build


def companion(plan: CompanionBuildPlan, name: str) -> CompanionBuild:
    for comp in plan.builds:
        if comp.name == name:
            return comp
    raise InternalError(
        f"a step names the companion {name!r}, which the plan does not build",
        "report this as a torchsmith bug",
    )


def need_run(state: BuildState) -> CompanionRun:
    if state.companions is None:
        raise InternalError(
            "a companion's step ran before its environment step",
            "the plan's steps are out of order; report this as a torchsmith bug",
        )
    return state.companions


def need(value: Path | None, what: str, step: str) -> Path:
    if value is None:
        raise InternalError(
            f"{what} is needed before the companion's {step!r} step ran",
            "the plan's steps are out of order; report this as a torchsmith bug",
        )
    return value


def root(ctx: BuildContext) -> Path:
    """Where the companions' venvs and trees live in the workspace."""
    return ctx.workspace.root / "companions"
