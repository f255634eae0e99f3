"""The build report from a real partial build: Debian pytorch 1.13.1 (c10_cuda + one CUDA
kernel, CUDA 11.8, -j2), its .ninja_log and manifest recorded (tests/fixtures/report/README.md)."""

from __future__ import annotations

import itertools
import json
import lzma
import shutil
from pathlib import Path

import pytest

from torchsmith.cli import main
from torchsmith.errors import UsageError
from torchsmith.report.advice import advise
from torchsmith.report.analysis import ReportData, analyse, edge_group
from torchsmith.report.build_report import report_line, write_report
from torchsmith.report.inputs import ReportInputs, load_inputs
from torchsmith.report.manifest import PEAK_RSS_WHAT, peak_child_rss_mib
from torchsmith.report.ninja_log import (
    NinjaEdge,
    assign_slots,
    chrome_trace,
    concurrency,
    parse_runs,
)

REAL = Path(__file__).parents[2] / "fixtures" / "report" / "debian-1.13.1-cuda-partial"


def real_log() -> str:
    return lzma.decompress((REAL / "ninja_log.xz").read_bytes()).decode()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src" / "build").mkdir(parents=True)
    (ws / "src" / "build" / ".ninja_log").write_text(real_log())
    shutil.copy(REAL / "manifest.json", ws / "torchsmith-partial-c1247971a69cdfd1.manifest.json")
    return ws


def test_the_real_log_is_one_run_of_109_edges_as_the_compile_log_counts() -> None:
    runs = parse_runs(real_log())
    assert len(runs) == 1
    # compile.log: 3 status lines of a first [N/4] pass + 106 of the targets' [N/106]
    assert len(runs[0]) == 109
    codegen = max(runs[0], key=lambda e: len(e.outputs))
    assert codegen.outputs[0] == "aten/src/ATen/CPUFunctions.h"
    assert len(codegen.outputs) == 13192
    cuda = [e for e in runs[0] if edge_group(e) == "cuda"]
    assert [e.outputs[0].rsplit("/", 1)[-1] for e in cuda] == ["FillKernel.cu.o"]


def test_slots_never_overlap_and_respect_the_job_limit() -> None:
    edges = parse_runs(real_log())[0]
    slots = assign_slots(edges)
    assert max(slots) + 1 == 2  # -j2
    for slot in set(slots):
        lane = sorted((e.start, e.end) for e, s in zip(edges, slots, strict=True) if s == slot)
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(lane))
    assert max(n for _, n in concurrency(edges)) == 2


def test_chrome_trace_has_one_complete_event_per_edge() -> None:
    edges = parse_runs(real_log())[0]
    trace = chrome_trace(edges)
    events = trace["traceEvents"]
    assert len(events) == 109
    assert {e["ph"] for e in events} == {"X"}
    fill = next(e for e in events if e["name"].endswith("FillKernel.cu.o"))
    assert fill["dur"] > 10_000_000  # the CUDA kernel took > 10 s
    assert len(json.dumps(trace)) < 200_000  # the 13192 header outputs are cut to 20


def test_a_new_run_starts_when_end_times_go_back() -> None:
    text = "# ninja log v5\n0\t100\t1\ta.o\tx\n50\t200\t1\tb.o\ty\n0\t30\t2\tc.o\tz\n"
    runs = parse_runs(text)
    assert [[e.outputs[0] for e in run] for run in runs] == [["a.o", "b.o"], ["c.o"]]


def test_something_else_than_a_ninja_log_is_refused() -> None:
    with pytest.raises(UsageError, match=r"not a \.ninja_log"):
        parse_runs("[1/4 3.783s] Generating ATen headers\n")


def test_the_advice_names_archs_cache_misses_and_the_long_pole(workspace: Path) -> None:
    advice = {a.rule: a for a in advise(analyse(load_inputs(workspace)))}
    assert set(advice) == {"fewer-archs", "cache-misses", "long-pole"}
    assert "8.6, 9.0" in advice["fewer-archs"].what
    assert "missed 75 of 75" in advice["cache-misses"].why
    assert "FillKernel.cu.o" in advice["long-pole"].what


def test_the_report_is_self_contained_and_escapes_the_log(workspace: Path) -> None:
    log = workspace / "src" / "build" / ".ninja_log"
    log.write_text(log.read_text() + "70000\t70001\t1\t</script><script>alert(1)</script>.o\th\n")
    written = write_report(workspace)
    page = written.html.read_text()
    assert written.html == workspace / "report" / "build-report.html"
    assert "</script><script>alert(1)" not in page
    assert 'id="timeline"' in page
    assert "<script src=" not in page  # plotly.js is inlined, nothing is fetched
    assert "peak RAM" in page  # what is not recorded is said
    assert written.trace is not None
    assert json.loads(written.trace.read_text())["traceEvents"]


def test_a_manifest_alone_still_gives_stage_times(tmp_path: Path) -> None:
    manifest = tmp_path / "m.manifest.json"
    data = json.loads((REAL / "manifest.json").read_text())
    data["workspace"] = str(tmp_path / "gone")
    data["source"]["built_in"] = str(tmp_path / "gone" / "src")
    manifest.write_text(json.dumps(data))
    written = write_report(manifest)
    assert written.trace is None
    assert any(".ninja_log" in m for m in written.missing)
    assert 'id="stages"' in written.html.read_text()


def test_a_folder_without_build_records_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"neither a build manifest nor a \.ninja_log"):
        load_inputs(tmp_path)


def test_build_ends_with_the_report_path_or_why_there_is_none(
    workspace: Path, tmp_path: Path
) -> None:
    assert report_line(workspace) == f"report: {workspace / 'report' / 'build-report.html'}"
    assert report_line(tmp_path / "empty").startswith("report: not written (")


def test_the_cache_table_says_what_the_manifest_did_not_record(workspace: Path) -> None:
    page = write_report(workspace).html.read_text()
    table = page[page.index("Compiler cache per stage") :]
    # compile: ccache 0 hits / 75 misses; this manifest predates local/remote hit counts
    assert (
        "<td>compile</td><td>ccache</td><td>0</td>"
        "<td>not recorded</td><td>not recorded</td><td>75</td>" in table
    )
    assert "<td>configure</td><td>ccache</td><td>not measured</td>" in table


def _data(edges: list[NinjaEdge], plan: dict[str, object]) -> ReportData:
    inputs = ReportInputs({"plan": plan, "stages": {}}, edges, 1, 1, None, None)
    return analyse(inputs)


def test_an_enabled_feature_that_costs_a_lot_is_named_and_a_disabled_one_is_not() -> None:
    edges = [
        NinjaEdge(
            0, 30, ("caffe2/CMakeFiles/torch_cpu.dir/__/torch/csrc/distributed/c10d/a.o",), "a"
        ),
        NinjaEdge(0, 70, ("caffe2/CMakeFiles/torch_cpu.dir/__/aten/src/ATen/b.o",), "b"),
    ]
    on = {"features": {"distributed": {"value": True}}, "max_jobs": {"value": 2}}
    advice = {a.rule: a for a in advise(_data(edges, on))}
    assert "its objects took 30 s of 100 s of compiling (30%)" in advice["disable-distributed"].why
    off = {"features": {"distributed": {"value": False}}, "max_jobs": {"value": 2}}
    assert "disable-distributed" not in {a.rule for a in advise(_data(edges, off))}


def test_idle_job_slots_are_named_with_the_numbers() -> None:
    edges = [NinjaEdge(0, 100, ("a.o",), "a"), NinjaEdge(0, 10, ("b.o",), "b")]
    advice = {a.rule: a for a in advise(_data(edges, {"max_jobs": {"value": 4}}))}
    assert "on average 1.10 of 4 jobs ran (28%); 290 slot-seconds idle" in advice["idle-slots"].why


def test_peak_ram_is_shown_when_the_manifest_records_it(workspace: Path) -> None:
    page = write_report(workspace).html.read_text()
    assert "<td>peak RAM of one process</td><td>not recorded</td>" in page  # older manifest
    manifest = next(workspace.glob("*.manifest.json"))
    data = json.loads(manifest.read_text())
    data["resources"] = {"peak_process_rss_mib": 1740.5, "what": PEAK_RSS_WHAT}
    manifest.write_text(json.dumps(data))
    written = write_report(workspace)
    assert "<td>peak RAM of one process</td><td>1,740 MiB</td>" in written.html.read_text()
    assert any("only the largest single process" in m for m in written.missing)


def test_the_peak_is_read_from_the_processes_waited_for() -> None:
    # the unit-test guard starts no process: what this test process has waited for so far
    assert peak_child_rss_mib() >= 0.0


def test_the_report_command_prints_where_it_wrote_and_the_advice(
    workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(workspace), "--output", str(tmp_path / "r"), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["html"] == str(tmp_path / "r" / "build-report.html")
    assert printed["trace"] == str(tmp_path / "r" / "build-trace.json")
    assert [a["rule"] for a in printed["advice"]] == ["fewer-archs", "cache-misses", "long-pole"]
    assert main(["report", str(tmp_path / "nothing-here")]) == 2
