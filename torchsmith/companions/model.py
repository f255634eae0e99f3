"""The data of a companion build, as the plan holds it: defined with the plan
(:mod:`torchsmith.plan_types`), re-exported here for the companion modules."""

from torchsmith.plan_types import (
    CompanionBuild,
    CompanionBuildPlan,
    EnvValue,
    OwnSource,
    TorchFacts,
)

__all__ = ["CompanionBuild", "CompanionBuildPlan", "EnvValue", "OwnSource", "TorchFacts"]
