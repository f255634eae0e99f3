"""``torchsmith matrix``: a build matrix as CI-engine files (GitHub Actions, buildx bake).

Every combination is planned before anything is written: a combination the planner refuses
refuses the whole matrix (an emitted job would fail hours later otherwise)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from torchsmith.errors import PlanError, Problem
from torchsmith.host.model import HostFacts
from torchsmith.kb import KnowledgeBase
from torchsmith.matrix.bake import render_bake
from torchsmith.matrix.combinations import Combination, combinations
from torchsmith.matrix.github import render_workflow
from torchsmith.matrix.model import MatrixSpec, load_matrix
from torchsmith.plan import resolve
from torchsmith.planner.readiness import refuse_not_ready

Emit = Literal["github-actions", "bake"]


def check_plans(combos: Sequence[Combination], kb: KnowledgeBase, host: HostFacts) -> None:
    """Plan every combination; one PlanError naming each refused combination's conflicts."""
    problems: list[Problem] = []
    for combo in combos:
        try:
            refuse_not_ready(resolve(combo.spec, kb, host))  # a job would fail on it too
        except PlanError as exc:
            problems += [
                Problem(f"combination {combo.id}: {p.what}", p.fix, p.field) for p in exc.problems
            ]
    if problems:
        raise PlanError(problems, "change the matrix's base or axes; nothing was written")


def render(matrix: MatrixSpec, combos: Sequence[Combination], emit: Emit) -> str:
    if emit == "github-actions":
        return render_workflow(matrix, combos)
    return render_bake(matrix, combos)


def default_output(matrix: MatrixSpec, emit: Emit) -> Path:
    if emit == "github-actions":
        return Path(".github") / "workflows" / f"torchsmith-{matrix.name}.yml"
    return Path("docker-bake.hcl")


__all__ = [
    "Combination",
    "Emit",
    "MatrixSpec",
    "check_plans",
    "combinations",
    "default_output",
    "load_matrix",
    "render",
]
