"""The report shows the compile (issue 26 item 4): from the real .ninja_log of a whole 1.13.1
CPU build (tests/fixtures/report/README.md) it takes the run that compiled, not setup.py's
trailing 1-edge install run; a resumed build's runs are all shown; and the cache table and the
cache advice read the same counts, so they never contradict each other."""

from __future__ import annotations

import json
import lzma
from pathlib import Path
from typing import Any

import pytest

from torchsmith.report.advice import advise
from torchsmith.report.analysis import analyse, edge_group, stage_times
from torchsmith.report.build_report import write_report
from torchsmith.report.inputs import load_inputs
from torchsmith.report.ninja_log import building_runs, end_to_end, is_utility, parse_runs

FIXTURES = Path(__file__).parents[2] / "fixtures" / "report"
FULL = FIXTURES / "debian-1.13.1-cpu-full" / "ninja_log.xz"
PARTIAL_MANIFEST = FIXTURES / "debian-1.13.1-cuda-partial" / "manifest.json"


def full_log() -> str:
    return lzma.decompress(FULL.read_bytes()).decode()


def workspace_with(tmp_path: Path, log: str, manifest: dict[str, Any] | None = None) -> Path:
    ws = tmp_path / "ws"
    (ws / "src" / "build").mkdir(parents=True)
    (ws / "src" / "build" / ".ninja_log").write_text(log)
    if manifest is not None:
        (ws / "torchsmith-x.manifest.json").write_text(json.dumps(manifest))
    return ws


def compile_edges(edges: list[Any]) -> int:
    return sum(1 for e in edges if edge_group(e) in ("compile", "cuda"))


def test_the_full_build_log_ends_with_setup_pys_one_edge_install_run() -> None:
    runs = parse_runs(full_log())
    assert [len(r) for r in runs] == [1254, 1]
    assert runs[1][0].outputs == ("CMakeFiles/install.util",) and is_utility(runs[1][0])


def test_the_report_of_the_full_build_shows_its_compile(tmp_path: Path) -> None:
    inputs = load_inputs(workspace_with(tmp_path, full_log()))
    assert (inputs.runs_in_log, inputs.runs_shown) == (2, 1)
    assert compile_edges(inputs.edges) >= 1200
    page = write_report(workspace_with(tmp_path / "b", full_log())).html.read_text()
    assert "<td>compile edges shown (C++ and CUDA objects)</td><td>1231</td>" in page
    assert "2: 1 that built shown, 1 that only ran CMake&#x27;s install left out" in page
    assert 'id="timeline"' in page
    assert "<td>stages of every run of the workspace</td><td>not recorded (no manifest)" in page


def test_a_resumed_build_shows_every_run_that_built_end_to_end(tmp_path: Path) -> None:
    stopped = "0\t40000\t1\ta.o\t1\n0\t50000\t1\tb.o\t2\n"  # run 1: stopped after 50 s
    resumed = "0\t30000\t1\tc.o\t3\n30000\t31000\t1\tlib/libtorch.so\t4\n"  # run 2
    install = "0\t1000\t1\tCMakeFiles/install.util\t5\n"
    inputs = load_inputs(workspace_with(tmp_path, f"# ninja log v5\n{stopped}{resumed}{install}"))
    assert (inputs.runs_in_log, inputs.runs_shown) == (3, 2)
    assert [(e.outputs[0], e.start, e.end) for e in inputs.edges] == [
        ("a.o", 0.0, 40.0), ("b.o", 0.0, 50.0), ("c.o", 50.0, 80.0),
        ("lib/libtorch.so", 80.0, 81.0),
    ]  # fmt: skip


def test_end_to_end_keeps_one_run_as_ninja_timed_it() -> None:
    run = parse_runs("# ninja log v5\n5\t100\t1\ta.o\th\n")
    assert end_to_end(run)[0].start == 0.005


def test_a_log_of_only_install_runs_keeps_its_last_run() -> None:
    runs = parse_runs("# ninja log v5\n0\t9\t1\tCMakeFiles/install.util\th\n")
    assert building_runs(runs) == runs


def resumed_manifest(cache: dict[str, Any]) -> dict[str, Any]:
    """A resumed build's manifest: this run only verified and published; the compile ran in
    an earlier run of the workspace (the torchvision report of the new-user trial)."""
    data: dict[str, Any] = json.loads(PARTIAL_MANIFEST.read_text())
    data["stages"] = {"verify": 60.5, "publish": 19.5}
    data["stages_all_runs"] = {"configure": 18.7, "compile": 63.1, "verify": 60.5, "publish": 19.5}
    data["compiler_cache"] = cache
    return data


def test_a_resumed_builds_stage_times_cover_every_run() -> None:
    stages = stage_times(resumed_manifest({"kind": "ccache"}))
    assert stages == {"verify": 60.5, "publish": 19.5, "configure": 18.7, "compile": 63.1}


@pytest.mark.parametrize(
    ("cache", "row", "advised"),
    [
        ({"kind": "ccache", "hits": 0, "misses": 43},
         "<td>compile</td><td>ccache</td><td>0</td><td>not recorded</td><td>not recorded</td>"
         "<td>43</td>", True),
        ({"kind": "ccache"}, "", False),  # no counts, no compile stage listed: no compile row
    ],
)  # fmt: skip
def test_the_cache_table_and_the_cache_advice_agree(
    tmp_path: Path, cache: dict[str, Any], row: str, advised: bool
) -> None:
    """A resumed build's compile counts show in the table whenever the advice quotes them."""
    manifest = resumed_manifest(cache)
    manifest["stages_all_runs"].pop("compile")  # even with no compile stage listed
    ws = workspace_with(tmp_path, full_log(), manifest)
    page = write_report(ws).html.read_text()
    table = page[page.index("Compiler cache per stage") :]
    assert row in table if row else "<td>compile</td>" not in table
    assert "<td>verify</td><td>ccache</td><td>not measured</td>" in table
    advice = {a.rule: a for a in advise(analyse(load_inputs(ws)))}
    assert ("cache-misses" in advice) is advised
    if advised:
        assert "missed 43 of 43" in advice["cache-misses"].why


def test_no_compile_counts_recorded_is_said_in_the_compile_row(tmp_path: Path) -> None:
    ws = workspace_with(tmp_path, full_log(), resumed_manifest({"kind": "ccache"}))
    table = write_report(ws).html.read_text().split("Compiler cache per stage")[1]
    assert "<td>compile</td><td>ccache</td><td>not recorded</td>" in table
