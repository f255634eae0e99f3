"""Numbers a build report shows, computed from :class:`ReportInputs` (pure functions)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from torchsmith.report.inputs import ReportInputs
from torchsmith.report.ninja_log import NinjaEdge, busy_average

EdgeGroup = Literal["codegen", "compile", "cuda", "link"]
_LINKED = (".so", ".a", ".dylib", ".dll", ".exe")


def edge_group(edge: NinjaEdge) -> EdgeGroup:
    """What kind of work an edge was, from its first output's name."""
    first = edge.outputs[0]
    if first.endswith(".cu.o"):
        return "cuda"
    if first.endswith((".o", ".obj")):
        return "compile"
    if first.endswith(_LINKED) or ".so." in first or "/bin/" in first:
        return "link"
    return "codegen"


@dataclass(frozen=True)
class Utilisation:
    """How busy the job slots were: the mean number of ninja jobs running over the run's wall
    time, against the job limit the plan chose (None when the manifest is missing)."""

    wall: float
    busy_seconds: float
    mean_jobs: float
    job_limit: int | None

    @property
    def ratio(self) -> float | None:
        return self.mean_jobs / self.job_limit if self.job_limit else None


def utilisation(edges: Sequence[NinjaEdge], manifest: dict[str, Any] | None) -> Utilisation:
    wall = max(e.end for e in edges) - min(e.start for e in edges) if edges else 0.0
    return Utilisation(
        wall=wall,
        busy_seconds=sum(e.duration for e in edges),
        mean_jobs=busy_average(edges),
        job_limit=job_limit(manifest),
    )


def job_limit(manifest: dict[str, Any] | None) -> int | None:
    value = (((manifest or {}).get("plan") or {}).get("max_jobs") or {}).get("value")
    return int(value) if isinstance(value, int) else None


def seconds_by_group(edges: Sequence[NinjaEdge]) -> dict[str, float]:
    totals: dict[str, float] = {}
    for edge in edges:
        group = edge_group(edge)
        totals[group] = totals.get(group, 0.0) + edge.duration
    return dict(sorted(totals.items()))


def slowest(edges: Sequence[NinjaEdge], count: int = 20) -> list[NinjaEdge]:
    """The slowest translation units (compile and CUDA edges), slowest first."""
    units = [e for e in edges if edge_group(e) in ("compile", "cuda")]
    return sorted(units, key=lambda e: e.duration, reverse=True)[:count]


def stage_times(manifest: dict[str, Any] | None) -> dict[str, float]:
    """Seconds per stage over every run of the workspace (``stages_all_runs``: a resumed
    build's earlier runs too), else the manifest's own run's."""
    this_run = (manifest or {}).get("stages") or {}
    every_run = (manifest or {}).get("stages_all_runs") or {}
    if not isinstance(this_run, dict) or not isinstance(every_run, dict):
        return {}
    merged = {**this_run, **every_run}.items()  # a foreign manifest: non-numbers left out (N16)
    return {str(k): float(v) for k, v in merged if isinstance(v, (int, float))}


def cache_counts(manifest: dict[str, Any] | None) -> dict[str, Any] | None:
    """The compiler cache's counts of the compile (torchsmith reads the cache's statistics
    around it), or None when the manifest records none. The cache table and the cache advice
    both read this, so they never disagree."""
    record = dict((manifest or {}).get("compiler_cache") or {})
    counted = isinstance(record.get("hits"), int) and isinstance(record.get("misses"), int)
    return record if counted else None


def cache_by_stage(manifest: dict[str, Any] | None) -> dict[str, dict[str, Any] | None]:
    """Compiler-cache counts per stage: the compile's (a row of its own even when the stage
    list lacks it), None for the stages the cache is not measured around."""
    counts = cache_counts(manifest)
    rows: dict[str, dict[str, Any] | None] = dict.fromkeys(stage_times(manifest))
    if counts is not None or "compile" in rows:
        rows["compile"] = counts
    return rows


@dataclass(frozen=True)
class ReportData:
    inputs: ReportInputs
    utilisation: Utilisation
    by_group: dict[str, float]
    slowest: list[NinjaEdge]


def analyse(inputs: ReportInputs) -> ReportData:
    return ReportData(
        inputs=inputs,
        utilisation=utilisation(inputs.edges, inputs.manifest),
        by_group=seconds_by_group(inputs.edges),
        slowest=slowest(inputs.edges),
    )
