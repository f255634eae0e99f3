"""An ETA from a cost model instead of the pace of the first objects.

The first objects of a PyTorch build (c10) are its cheapest: at 138/1251 edges of a 2-hour
1.13.1 build the pace said 21 minutes. Here every finished edge is weighed by the mean cost of
its group, measured in a real build of the same release (``report/data/cost-*.toml``: per-object
times from ``.ninja_log``); the machine's speed is the wall time so far over the weighed work
done, starting from "as fast as the measured machine" and trusting the data more as work is
done. The estimate comes with a range: the speed's statistical error (per-object times vary,
CV_OBJECTS) and the model's own (MODEL_ERROR). Releases without cost data fall back to the pace,
labelled as such: a lower bound early in a build, since the first objects are the cheap ones.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from torchsmith.report.ninja import NinjaStatus

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# Coefficient of variation of per-object compile times inside one group: 0.78 for the 67 c10
# objects of the real partial build in tests/fixtures/report/debian-1.13.1-cuda-partial.
CV_OBJECTS = 0.78
# Relative error of a whole-build estimate from one measured build: docs/debian-source-builds.md
# §0 gives 2.6.0's torch_cpu as about 70 min (65-80), -7 %/+14 %; the larger side is taken.
MODEL_ERROR = 0.15
# The same cold c10 build took 19-43 s on the measured machine (docs/debian-source-builds.md §0):
# half the log of that ratio is the machine's own noise, which fades as more of the work is done.
MACHINE_NOISE = 0.41
# Weight of "as fast as the measured machine" in the speed estimate: 60 job-seconds, at most a
# tenth of the work modelled (a partial build's data must not be outweighed by the prior).
PRIOR_JOB_SECONDS = 60.0
PRIOR_SHARE = 0.1


# What building a CMake target compiles, in the groups' `target` terms (torch_cpu links c10).
TARGET_NEEDS = {
    "c10": ("c10",),
    "torch_cpu": ("c10", "torch_cpu"),
    "all": ("c10", "torch_cpu", "all"),
}
OBJECT_SUFFIXES = (".o", ".obj")


@dataclass(frozen=True)
class CostGroup:
    name: str
    match: tuple[str, ...]
    objects: int
    seconds: float
    target: str = "all"

    @property
    def mean(self) -> float:
        return self.seconds / self.objects


@dataclass(frozen=True)
class CostModel:
    release: str
    accelerator: str
    edges: int
    groups: tuple[CostGroup, ...]
    source: str

    @property
    def total(self) -> float:
        return sum(g.seconds for g in self.groups)

    @property
    def dearest(self) -> float:
        return max(g.mean for g in self.groups)

    @property
    def cheapest(self) -> float:
        return min(g.mean for g in self.groups)

    def group(self, description: str) -> CostGroup | None:
        return next((g for g in self.groups if any(m in description for m in g.match)), None)

    def cost(self, description: str) -> float:
        """Job-seconds the edge cost in the measured build (its group's mean; the cheapest
        group's mean for codegen, links and what no group matches)."""
        group = self.group(description)
        return group.mean if group else self.cheapest

    def for_targets(self, targets: Sequence[str]) -> CostModel | None:
        """The part of the build that ``targets`` compile: whole groups for the CMake targets
        the data knows, one object at its group's mean for an object path; None as soon as a
        target is neither (no data: the caller falls back to the pace)."""
        picked: list[CostGroup] = []
        for target in targets:
            found = self._target_groups(target)
            if found is None:
                return None
            picked += [g for g in found if g not in picked or g.objects == 1]
        edges = sum(g.objects for g in picked)
        return replace(self, groups=tuple(picked), edges=edges) if picked else None

    def _target_groups(self, target: str) -> list[CostGroup] | None:
        if target in TARGET_NEEDS:
            return [g for g in self.groups if g.target in TARGET_NEEDS[target]]
        group = self.group(target) if target.endswith(OBJECT_SUFFIXES) else None
        if group is None:
            return None
        return [replace(group, objects=1, seconds=group.mean)]


class _GroupRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    match: tuple[str, ...]
    objects: int = Field(gt=0)
    seconds: float = Field(ge=0)
    target: Literal["c10", "torch_cpu", "all"]


class _CostFile(BaseModel):
    """A cost-data file as written (validated: a malformed file is a load error)."""

    model_config = ConfigDict(extra="forbid")
    release: str
    accelerator: str
    jobs: int = Field(gt=0)
    source: str = Field(min_length=1)
    edges: int = Field(gt=0)
    group: tuple[_GroupRecord, ...] = Field(min_length=1)


def _model(data: dict[str, object]) -> CostModel:
    record = _CostFile.model_validate(data)
    groups = tuple(CostGroup(g.name, g.match, g.objects, g.seconds, g.target) for g in record.group)
    return CostModel(record.release, record.accelerator, record.edges, groups, record.source)


@cache
def cost_models() -> tuple[CostModel, ...]:
    folder = resources.files("torchsmith.report") / "data"
    return tuple(
        _model(tomllib.loads(f.read_text(encoding="utf-8")))
        for f in sorted(folder.iterdir(), key=lambda p: p.name)
        if f.name.startswith("cost-") and f.name.endswith(".toml")
    )


def find_model(release: str | None, accelerator: str) -> CostModel | None:
    return next(
        (m for m in cost_models() if m.release == release and m.accelerator == accelerator), None
    )


@dataclass(frozen=True)
class Estimate:
    seconds: float
    low: float
    high: float
    basis: str


@dataclass
class CostEta:
    """Feeds on ninja's status lines (one per finished edge) and estimates the time left."""

    model: CostModel
    jobs: int
    done_cost: float = 0.0
    done_edges: int = 0
    measured_cost: float = 0.0  # weighed work since the first modelled object finished
    measured_from: float | None = None  # ninja's elapsed then (codegen before it is serial)
    _seen: set[tuple[int, int]] = field(default_factory=set)

    def update(self, status: NinjaStatus) -> Estimate | None:
        if (status.total, status.finished) not in self._seen:
            self._seen.add((status.total, status.finished))
            self._count(status)
        if status.elapsed is None:
            return None
        return self.estimate(status)

    def _count(self, status: NinjaStatus) -> None:
        cost = self.model.cost(status.description)
        self.done_cost += cost
        self.done_edges += 1
        if self.measured_from is not None:
            self.measured_cost += cost
        elif self.model.group(status.description) is not None and status.elapsed is not None:
            self.measured_from = status.elapsed

    def speed(self, elapsed: float) -> float:
        """Wall seconds × jobs per job-second of the measured machine (1.0: as fast)."""
        wall = elapsed - self.measured_from if self.measured_from is not None else 0.0
        prior = min(PRIOR_JOB_SECONDS, PRIOR_SHARE * self.model.total)
        return (wall * self.jobs + prior) / (self.measured_cost + prior)

    def spread(self) -> float:
        done_share = min(self.done_cost / self.model.total, 1.0)
        return math.sqrt(
            (CV_OBJECTS**2) / (self.done_edges + 1)
            + MODEL_ERROR**2
            + (MACHINE_NOISE * (1 - done_share)) ** 2
        )

    def remaining_cost(self, status: NinjaStatus) -> float:
        share = min(status.total / self.model.edges, 1.0)  # a resumed build has fewer edges
        floor = (status.total - status.finished) * self.model.cheapest
        return max(self.model.total * share - self.done_cost, floor)

    def estimate(self, status: NinjaStatus) -> Estimate:
        seconds = self.remaining_cost(status) * self.speed(status.elapsed or 0.0) / self.jobs
        spread = self.spread()
        basis = f"cost model: torch {self.model.release} {self.model.accelerator}"
        # The last objects of a build run with fewer jobs than the limit: the range's upper
        # end allows one of the dearest group's objects alone at the end.
        high = seconds * (1 + spread) + self.model.dearest
        return Estimate(seconds, seconds / (1 + spread), high, basis)


def pace_estimate(status: NinjaStatus) -> Estimate | None:
    """The average pace so far (no cost data): a lower bound early in a PyTorch build."""
    seconds = status.eta_seconds()
    if seconds is None:
        return None
    return Estimate(seconds, seconds, math.inf, "pace so far, no cost data for this build")


class EtaSource:
    """What a reporter asks for an ETA: the cost model when there is one, else the pace."""

    def __init__(self, model: CostModel | None = None, jobs: int = 1) -> None:
        self._cost = CostEta(model, max(jobs, 1)) if model else None

    def __call__(self, status: NinjaStatus) -> Estimate | None:
        if self._cost is not None:
            return self._cost.update(status)
        return pace_estimate(status)


def eta_for_plan(torch: str | None, cuda: str | None, targets: tuple[str, ...] | list[str],
                 jobs: int) -> EtaSource:  # fmt: skip
    """The cost model for a CPU build of a release with cost data (the targets' part of it for
    a partial build); the pace otherwise (CUDA objects are not in the measured data)."""
    model = find_model(torch, "cpu") if cuda is None else None
    if model is not None and targets:
        model = model.for_targets(targets)
    return EtaSource(model, jobs)
