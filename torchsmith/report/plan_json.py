"""The plan as ``torchsmith plan --json`` prints it: URL credentials redacted. No rich here
(:mod:`torchsmith.report.plan_view` draws the tables a person reads), so ``--json`` starts fast."""

from __future__ import annotations

from typing import Any

from torchsmith.plan_model import BuildPlan
from torchsmith.redact import redact_data


def plan_json(plan: BuildPlan) -> dict[str, Any]:
    """The plan as printed: URL credentials redacted (the hash does not depend on them)."""
    data: dict[str, Any] = redact_data(plan.model_dump(mode="json"))
    data["plan_hash"] = plan.plan_hash()
    data["ready"] = plan.ready  # the machine's answer (``readiness``), apart from the plan's
    return data


def shown(plan: BuildPlan) -> BuildPlan:
    """``plan`` with URL credentials redacted, for printing."""
    return BuildPlan.model_validate(redact_data(plan.model_dump(mode="json")))
