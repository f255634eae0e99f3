"""The verdict: every check with what was expected and what was found."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from torchsmith.errors import VerifyError
from torchsmith.inspect.model import Inspection


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Check(_Frozen):
    name: str
    ok: bool | None = Field(description="None: could not be checked (skipped)")
    expected: str = ""
    actual: str = ""
    detail: str = ""
    seconds: float | None = None
    severity: Literal["error", "warning"] = Field(
        "error", description="a 'warning' check that is not ok is reported, not a failure"
    )


class Verdict(_Frozen):
    artifact: str
    checks: list[Check]
    smoke: list[Check]
    inspection: Inspection

    @property
    def failures(self) -> list[Check]:
        return [c for c in [*self.checks, *self.smoke] if c.ok is False and c.severity == "error"]

    @property
    def warnings(self) -> list[Check]:
        return [c for c in [*self.checks, *self.smoke] if c.ok is False and c.severity == "warning"]

    @property
    def passed(self) -> bool:
        return not self.failures

    def raise_if_failed(self) -> None:
        """Raise :class:`VerifyError` naming every difference."""
        if self.passed:
            return
        lines = [
            f"{c.name}: {c.detail or f'expected {c.expected}, found {c.actual}'}"
            for c in self.failures
        ]
        raise VerifyError(
            f"{self.artifact} does not hold what was asked:\n  - " + "\n  - ".join(lines),
            "rebuild with the plan's settings, or fix the plan if the artifact is right",
        )
