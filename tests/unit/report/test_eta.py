"""The ETA's cost model (issue 15 part 6): at the start of a 1.13.1 build the pace of the cheap
c10 objects promised minutes for a build of hours. Replayed here: the real status lines of a
cold c10 build of Debian's 1.13.1 (tests/fixtures/build/ninja-c10-1.13.1.log), read as the first
edges of the whole build, whose edge count (1251) and duration are measured: about 74 min of
compiling in docs/debian-source-builds.md §1.6-1.7 and 2 h 2 min in issue 15."""

from __future__ import annotations

import lzma
from pathlib import Path

import pytest
import tomllib
from pydantic import ValidationError
from rich.console import Console

from torchsmith.report.costdata import build_run, cost_toml, group_sums
from torchsmith.report.eta import (
    CostEta,
    CostModel,
    Estimate,
    EtaSource,
    _model,
    cost_models,
    eta_for_plan,
    find_model,
    pace_estimate,
)
from torchsmith.report.ninja import NinjaStatus, parse_status
from torchsmith.report.ninja_log import parse_runs
from torchsmith.report.progress import PlainProgress, RichProgress, format_eta

C10_LOG = Path(__file__).parents[2] / "fixtures" / "build" / "ninja-c10-1.13.1.log"
REPORT_FIXTURE = Path(__file__).parents[2] / "fixtures" / "report" / "debian-1.13.1-cuda-partial"
FULL_LOG = C10_LOG.parents[1] / "report" / "debian-1.13.1-cpu-full" / "ninja_log.xz"


def FULL_LOG_TEXT() -> str:  # noqa: N802
    return lzma.decompress(FULL_LOG.read_bytes()).decode()


FULL_EDGES = 1251
MEASURED_REMAINING_MIN = (73.0, 121.0)  # 74 min / 2 h 2 min, less c10's minute


def _replayed() -> list[NinjaStatus]:
    statuses = [s for s in map(parse_status, C10_LOG.read_text().splitlines()) if s]
    return [
        NinjaStatus(s.finished, FULL_EDGES, s.elapsed, s.description) if s.total == 68 else s
        for s in statuses
    ]


def _last(source: EtaSource | None, statuses: list[NinjaStatus]) -> Estimate | None:
    estimate = None
    for status in statuses:
        estimate = source(status) if source else pace_estimate(status)
    return estimate


def test_the_cost_data_is_the_measured_build() -> None:
    """The shipped data is the .ninja_log of the documented full build (docs/benchmarks.md),
    kept as a fixture: regenerated from it, it is the same file."""
    model = find_model("1.13.1", "cpu")
    assert model is not None
    assert model.edges == FULL_EDGES
    sums = group_sums(build_run(parse_runs(FULL_LOG_TEXT())), model)
    assert [(s.group.name, s.objects, s.seconds) for s in sums if s.objects] == [
        (g.name, g.objects, g.seconds) for g in model.groups
    ]
    assert sum(g.objects for g in model.groups) == 1215  # 1021 torch_cpu + c10, torch_python…
    assert model.total == pytest.approx(7250.3, abs=0.5)
    assert "docs/benchmarks.md" in model.source
    assert [m.release for m in cost_models()] == ["1.13.1"]


def test_the_full_build_replayed_its_remaining_time_inside_the_range() -> None:
    """The whole 1.13.1 build (1254 edges, 3648 s of compiling at -j2) replayed edge by edge in
    the order they finished: the actual time left lies inside the shown range for >= 98 % of
    the edges, and from 10 % of the edges on for every one. (In-sample: the data
    is this build's; out of sample, the earlier hand-copied data overestimated this same build
    by 35-50 % with the actual time outside the range — docs/benchmarks.md.)"""
    run = sorted(build_run(parse_runs(FULL_LOG_TEXT())), key=lambda e: e.end)
    source = eta_for_plan("1.13.1", None, (), 2)
    end, outside = run[-1].end, []
    for i, edge in enumerate(run[:-1]):
        estimate = source(NinjaStatus(i + 1, len(run), edge.end, edge.outputs[0]))
        assert estimate is not None
        if not estimate.low - 1.0 <= end - edge.end <= estimate.high:  # 1 s: the final links
            outside.append(i + 1)
    assert len(outside) <= 0.02 * len(run), outside
    assert all(i < 0.1 * len(run) for i in outside), outside


def test_after_c10_the_pace_promises_minutes_and_the_cost_model_hours() -> None:
    statuses = _replayed()
    pace = _last(None, statuses)
    model = find_model("1.13.1", "cpu")
    assert model is not None
    cost = _last(EtaSource(model, jobs=2), statuses)
    assert pace is not None and cost is not None
    assert pace.seconds / 60 < 21  # the "21 minutes" kind of answer
    low, high = MEASURED_REMAINING_MIN
    assert low <= cost.seconds / 60 <= high
    # The range reaches the slower measured build; the faster one (74 min in all) sits at its
    # low edge (73.7 min): the replayed c10 run spent 40 s of wall time on c10 at -j2 (the notes
    # measured 19-43 s for the same cold c10 build), which the model reads as a slow machine.
    assert cost.high / 60 > high
    assert cost.low / 60 < 74.0


def test_the_range_narrows_as_work_is_done() -> None:
    model = find_model("1.13.1", "cpu")
    assert model is not None
    eta = CostEta(model, jobs=2)
    early = eta.spread()
    for status in _replayed():
        eta.update(status)
    assert eta.spread() < early
    eta.done_cost = model.total
    assert eta.spread() < 0.2  # at the end: the model's own error remains


def test_codegen_before_the_first_object_is_not_taken_as_compile_speed() -> None:
    model = find_model("1.13.1", "cpu")
    assert model is not None
    eta = CostEta(model, jobs=2)
    for status in _replayed()[:4]:  # ATen codegen and the first c10 object
        eta.update(status)
    assert eta.measured_from == pytest.approx(11.012)  # [1/68 11.012s] the first c10 object
    assert eta.speed(11.012) == pytest.approx(1.0)


def test_cuda_unknown_releases_and_unknown_targets_use_the_pace_and_say_so() -> None:
    status = NinjaStatus(30, 120, 60.0, "Building CXX object c10/CMakeFiles/c10.dir/x.cpp.o")
    for source in (
        eta_for_plan("1.13.1", "11.8", (), 2),
        eta_for_plan("2.6.0", None, (), 2),
        eta_for_plan("1.13.1", None, ("c10", "torch_python"), 2),  # no group says torch_python
    ):
        assert format_eta(source(status)) == "ETA ≥ 3:00 (pace)"
    whole = eta_for_plan("1.13.1", None, (), 2)(status)
    assert whole is not None and whole.basis == "cost model: torch 1.13.1 cpu"


def test_a_partial_build_is_modelled_by_its_targets() -> None:
    model = find_model("1.13.1", "cpu")
    assert model is not None
    # the CI's Debian partial build: c10 and two torch_cpu objects
    part = model.for_targets(
        ["c10", "caffe2/CMakeFiles/torch_cpu.dir/__/aten/src/ATen/Utils.cpp.o",
         "caffe2/CMakeFiles/torch_cpu.dir/__/aten/src/ATen/native/cpu/FillKernel.cpp.AVX2.cpp.o"]
    )  # fmt: skip
    assert part is not None
    assert part.edges == 69
    assert part.total == pytest.approx(39.8 + 2488.3 / 390 + 854.4 / 156)
    torch_cpu = model.for_targets(["torch_cpu"])
    assert torch_cpu is not None and torch_cpu.edges == 1088


def test_the_real_c10_build_its_remaining_time_inside_the_range() -> None:
    """The real c10 log as what it was, a partial build of c10 (68 edges, 51.0 s): the
    remaining time lies in the range early on, and the estimate beats the pace until the
    serial link at the end."""
    source = eta_for_plan("1.13.1", None, ("c10",), 2)
    end = 51.037
    for status in (s for s in map(parse_status, C10_LOG.read_text().splitlines()) if s):
        estimate = source(status)
        if status.total != 68 or status.finished not in (3, 5, 10, 20, 34, 50):
            continue
        assert estimate is not None and status.elapsed is not None
        actual = end - status.elapsed
        pace = status.eta_seconds()
        assert pace is not None
        assert abs(estimate.seconds - actual) < abs(pace - actual)
        if status.finished <= 20:
            assert estimate.low <= actual <= estimate.high


def test_the_eta_shows_its_range() -> None:
    assert format_eta(Estimate(6330.0, 4400.0, 9200.0, "x")) == "ETA 1:45:30 (1:13:20–2:33:20)"
    assert format_eta(Estimate(0.0, 0.0, 0.0, "x")) == "ETA 0:00"


def test_cost_data_from_a_real_ninja_log_reads_back_as_a_model(tmp_path: Path) -> None:
    """The real partial build's .ninja_log (Debian 1.13.1, c10_cuda + FillKernel.cu, -j2):
    its 67 c10 objects are c10's group, as in the 1.13.1 data (67 objects there too)."""
    text = lzma.decompress((REPORT_FIXTURE / "ninja_log.xz").read_bytes()).decode()
    template = find_model("1.13.1", "cpu")
    assert template is not None
    sums = {s.group.name: s for s in group_sums(parse_runs(text)[0], template)}
    assert sums["c10"].objects == 67
    assert sums["c10"].seconds == pytest.approx(47.4, abs=0.1)
    model = CostModel("1.13.1", "cuda-partial", 109, template.groups, "the fixture")
    data = tomllib.loads(cost_toml(model, list(sums.values()), jobs=2))
    assert (data["group"][0]["name"], data["group"][0]["objects"]) == ("c10", 67)
    assert _model(data).groups[0].target == "c10"  # the written file loads as cost data


@pytest.mark.parametrize("terminal", [False, True])
def test_the_build_display_shows_the_cost_models_range(terminal: bool) -> None:
    model = find_model("1.13.1", "cpu")
    assert model is not None
    console = Console(record=True, width=200, force_terminal=terminal)
    eta = EtaSource(model, jobs=2)
    progress = RichProgress(console, eta) if terminal else PlainProgress(console, 0.0, eta)
    progress.stage_started("compile", "all")
    for status in _replayed():
        progress.ninja(status)
    progress.close()
    text = console.export_text()
    assert "ETA 1:24:17 (58:22–2:02:05)" in text  # after c10: what the model says, with its range


def test_a_cost_file_without_a_source_or_groups_does_not_load() -> None:
    good = tomllib.loads(
        (Path(__file__).parents[3] / "torchsmith/report/data/cost-1.13.1-cpu.toml").read_text()
    )
    assert _model(good).release == "1.13.1"
    for broken in ({**good, "source": ""}, {**good, "group": []}, {**good, "extra": 1}):
        with pytest.raises(ValidationError):
            _model(broken)
