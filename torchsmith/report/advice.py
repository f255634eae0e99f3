"""What would make a build faster: rules over the report's numbers, each with its reason.

Every rule reads only what the manifest and ``.ninja_log`` hold and names those numbers in its
reason; a rule whose inputs are missing stays silent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from torchsmith.report.analysis import ReportData, cache_counts, edge_group
from torchsmith.report.ninja_log import NinjaEdge


@dataclass(frozen=True)
class Advice:
    rule: str
    what: str
    why: str


# Output path fragments of the objects a spec feature adds (PyTorch's CMake target layout:
# torch/csrc/distributed, third_party/<lib>, aten/src/ATen/native/<backend>).
FEATURE_PATHS: dict[str, tuple[str, ...]] = {
    "distributed": ("torch/csrc/distributed/", "/c10d/", "gloo", "tensorpipe"),
    "fbgemm": ("fbgemm", "FBGEMM"),
    "kineto": ("kineto",),
    "mkldnn": ("mkldnn", "onednn", "ideep"),
    "xnnpack": ("XNNPACK", "xnnpack"),
    "qnnpack": ("qnnpack",),
    "nnpack": ("NNPACK", "nnpack"),
    "tests": ("/test/", "_test.cpp", "_test.cc", "googletest", "benchmark"),
    "nccl": ("nccl",),
    "magma": ("magma",),
}
FEATURE_SHARE = 0.05
IDLE_RATIO = 0.75
MISS_RATE = 0.5


def _compile_seconds(edges: Sequence[NinjaEdge]) -> float:
    return sum(e.duration for e in edges if edge_group(e) in ("compile", "cuda"))


def _plan(data: ReportData) -> dict[str, Any]:
    return dict((data.inputs.manifest or {}).get("plan") or {})


def archs_rule(data: ReportData) -> list[Advice]:
    archs = list((_plan(data).get("archs") or {}).get("value") or [])
    cuda = sum(e.duration for e in data.inputs.edges if edge_group(e) == "cuda")
    total = _compile_seconds(data.inputs.edges)
    if len(archs) < 2 or cuda <= 0 or total <= 0:
        return []
    return [
        Advice(
            "fewer-archs",
            f"build only the CUDA archs you run on (now {len(archs)}: {', '.join(archs)})",
            f"CUDA objects took {cuda:.0f} s of {total:.0f} s of compiling ({cuda / total:.0%}); "
            "nvcc generates device code once per arch, so that part shrinks with the arch "
            "count (host compilation stays)",
        )
    ]


def _enabled_features(data: ReportData) -> list[str]:
    features = _plan(data).get("features") or {}
    return [n for n in FEATURE_PATHS if (features.get(n) or {}).get("value") is not False]


def _feature_seconds(edges: Sequence[NinjaEdge], name: str) -> float:
    marks = FEATURE_PATHS[name]
    return sum(e.duration for e in edges if any(m in e.outputs[0] for m in marks))


def features_rule(data: ReportData) -> list[Advice]:
    total = _compile_seconds(data.inputs.edges)
    advice = []
    for name in _enabled_features(data) if total > 0 else []:
        seconds = _feature_seconds(data.inputs.edges, name)
        if seconds / total >= FEATURE_SHARE:
            advice.append(
                Advice(
                    f"disable-{name}",
                    f"if you do not need {name}, set features.{name} = false",
                    f"its objects took {seconds:.0f} s of {total:.0f} s of compiling "
                    f"({seconds / total:.0%})",
                )
            )
    return advice


def cache_rule(data: ReportData) -> list[Advice]:
    record = (data.inputs.manifest or {}).get("compiler_cache") or {}
    counts = cache_counts(data.inputs.manifest) or {}  # what the cache table shows
    kind, hits, misses = record.get("kind"), counts.get("hits"), counts.get("misses")
    if data.inputs.manifest is not None and kind in (None, "none"):
        return [
            Advice(
                "no-cache",
                'turn a compiler cache on (cache = "ccache")',
                "this build ran without one, so every rebuild compiles everything again",
            )
        ]
    if not isinstance(hits, int) or not isinstance(misses, int) or hits + misses < 10:
        return []
    if hits / (hits + misses) >= MISS_RATE:
        return []
    return [
        Advice(
            "cache-misses",
            "share the compiler cache between builds and machines (the spec's cache section)",
            f"{kind} missed {misses} of {hits + misses} compilations "
            f"({misses / (hits + misses):.0%}); "
            "a cache filled by an earlier build of the same plan turns those into hits",
        )
    ]


def idle_rule(data: ReportData) -> list[Advice]:
    use = data.utilisation
    if use.ratio is None or use.wall <= 0 or use.ratio >= IDLE_RATIO:
        return []
    idle = (use.job_limit or 0) * use.wall - use.busy_seconds
    return [
        Advice(
            "idle-slots",
            "keep the job slots busy: build more targets in one run, or fewer serial steps",
            f"on average {use.mean_jobs:.2f} of {use.job_limit} jobs ran "
            f"({use.ratio:.0%}); {idle:.0f} slot-seconds idle over {use.wall:.0f} s",
        )
    ]


def long_pole_rule(data: ReportData) -> list[Advice]:
    if not data.slowest or data.utilisation.wall <= 0:
        return []
    top = data.slowest[0]
    share = top.duration / data.utilisation.wall
    if share < 0.2:
        return []
    return [
        Advice(
            "long-pole",
            f"start {top.outputs[0].rsplit('/', 1)[-1]} early or split it",
            f"one translation unit took {top.duration:.0f} s, {share:.0%} of the run's wall time",
        )
    ]


RULES: tuple[Callable[[ReportData], list[Advice]], ...] = (
    archs_rule,
    features_rule,
    cache_rule,
    idle_rule,
    long_pole_rule,
)


def advise(data: ReportData) -> list[Advice]:
    return [item for rule in RULES for item in rule(data)]
