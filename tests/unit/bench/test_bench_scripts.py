"""The bench scripts' own logic (issue 26): what they read and write, without running a build.
The scripts live in bench/ (not a package): loaded from their files."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[3] / "bench"


def load(name: str) -> ModuleType:
    sys.path.insert(0, str(BENCH))  # the scripts import bench/_measured.py
    try:
        spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCH))


def test_a_partial_builds_manifest_is_found_after_target(tmp_path: Path) -> None:
    """bench_full_rebuild.py crashed after a --target build: it looked for torch-*.manifest."""
    full_rebuild = load("bench_full_rebuild")
    (tmp_path / "torchsmith-partial-abc.manifest.json").write_text("{}")
    assert full_rebuild.published_manifest(tmp_path).name == "torchsmith-partial-abc.manifest.json"
    (tmp_path / "torch-1.13.1-cp311-cp311-linux_x86_64.manifest.json").write_text("{}")
    assert full_rebuild.published_manifest(tmp_path).name.startswith("torch-1.13.1")


def test_no_manifest_is_a_clear_exit(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="expected one manifest"):
        load("bench_full_rebuild").published_manifest(tmp_path)


def test_a_resumed_builds_row_sums_every_run_and_leaves_companions_out() -> None:
    manifest = {
        "torchsmith": "0.1.0",
        "stages": {"verify": 12.0},
        "stages_all_runs": {"compile": 100.0, "verify": 12.0, "torchvision": 50.0},
        "compiler_cache": {"hits": 3, "misses": 1},
    }
    row = load("bench_full_rebuild").summary("warm", manifest, None)
    assert row["stages_total_s"] == 112.0 and row["ccache_hits"] == 3


def test_a_rows_cost_carries_cpu_and_load_and_the_ratios_grade_cpu_and_wall() -> None:
    """On a shared, loaded machine wall time alone misleads: each row has its CPU seconds too."""
    bench = load("bench_full_rebuild")
    manifest = {"stages": {"compile": 3600.0, "verify": 12.0}}
    cost = {"wall": 8000.0, "cpu": 7000.0, "load_before": [3.0, 2.0, 1.0], "load_after": [2.0] * 3}
    cold = bench.summary("cold", manifest, cost)
    assert (cold["cpu_s"], cold["wall_s"], cold["load_before"]) == (7000.0, 8000.0, [3.0, 2.0, 1.0])
    warm = bench.summary(
        "warm", {"stages": {"compile": 36.12}}, {**cost, "wall": 80.0, "cpu": 70.0}
    )
    assert bench.ratios(warm, cold) == {
        "ratio_to_cold": 0.01,
        "ratio_cpu": 0.01,
        "ratio_wall": 0.01,
    }


def test_a_composed_cold_row_has_no_cpu_ratio() -> None:
    bench = load("bench_full_rebuild")
    cold = bench.summary("cold", {"stages": {"compile": 100.0}}, None)
    warm = bench.summary("warm", {"stages": {"compile": 2.0}}, {"wall": 3.0, "cpu": 2.5,
                         "load_before": [0.0] * 3, "load_after": [0.0] * 3})  # fmt: skip
    assert bench.ratios(warm, cold) == {
        "ratio_to_cold": 0.02,
        "ratio_cpu": None,
        "ratio_wall": None,
    }


def test_children_cpu_is_a_non_negative_number() -> None:
    assert load("bench_full_rebuild").children_cpu() >= 0.0


def test_the_plan_bench_asks_for_a_plan_torchsmith_makes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """bench_plan.py exited 1: its request (companions from git) is refused since f1b4bec."""
    from tests.unit.planner.kb import ci_host
    from torchsmith.cli import main

    facts = tmp_path / "host.json"
    facts.write_text(ci_host().model_dump_json())
    assert main([*load("bench_plan").PLAN, "--host-facts", str(facts)]) == 0
    assert json.loads(capsys.readouterr().out)["plan_hash"]


def test_measured_json_has_commit_machine_load_and_the_median(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    measured = load("_measured")
    stats = measured.summary([0.3, 0.1, 0.2, 0.9, 0.25])
    assert (stats["n"], stats["median"], stats["min"]) == (5, 0.25, 0.1)
    monkeypatch.setattr(measured, "MEASURED", tmp_path)
    at = {"sha": "f" * 40, "dirty": False}
    path = measured.write("x", {"a": stats}, [0.5, 0.4, 0.3], at)
    data = json.loads(path.read_text())
    assert data["commit"] == at and data["machine"]["cpus"] and len(data["load_after"]) == 3


def test_the_reproducible_bench_names_the_members_that_differ(tmp_path: Path) -> None:
    """bench_reproducible.py: two runs in other paths and time zones; a difference is named."""
    import zipfile

    bench = load("bench_reproducible")
    (root_a, tz_a), (root_b, tz_b) = bench.RUNS
    assert root_a.count("/") != root_b.count("/") and tz_a != tz_b
    for name, when in (("a", (2025, 1, 29, 0, 0, 0)), ("b", (2026, 11, 27, 8, 30, 0))):
        with zipfile.ZipFile(tmp_path / f"{name}.whl", "w") as zf:
            zf.writestr(zipfile.ZipInfo("pkg/a.py", when), b"x")
            zf.writestr(zipfile.ZipInfo("pkg/b.py", (2025, 1, 29, 0, 0, 0)), b"y")
    [diff] = bench.differing_members(tmp_path / "a.whl", tmp_path / "b.whl")
    assert diff.startswith("pkg/a.py: ") and "2026" in diff
    assert bench.differing_members(tmp_path / "a.whl", tmp_path / "a.whl") == []


def test_the_sample_is_every_nth_object_of_the_whole_builds_log() -> None:
    """--sample 10: a partial build labelled as one, its Python share near the whole build's."""
    bench = load("bench_full_rebuild")
    every = bench.sample_targets(1)
    assert len(every) == 1231 and all(t.endswith(".o") for t in every)
    sample = bench.sample_targets(10)
    assert sample == every[::10] and len(sample) == 124
    assert sample[0] == "c10/CMakeFiles/c10.dir/core/AutogradState.cpp.o"
    assert sum("torch_python.dir" in t for t in sample) == 12


def test_n_pythons_adds_every_other_python_to_the_cold_run() -> None:
    bench = load("bench_full_rebuild")
    cold = {"run": "cold", "cpu_s": 100.0, "stages_total_s": 50.0, "wall_s": 60.0}
    rows = [
        {"run": "warm", "cpu_s": 5.0, "stages_total_s": 5.0, "wall_s": 5.0},
        {"run": "python 3.10", "cpu_s": 20.0, "stages_total_s": 10.0, "wall_s": 12.0},
        {"run": "python 3.9", "cpu_s": 10.0, "stages_total_s": 5.0, "wall_s": 6.0},
    ]
    assert bench.n_pythons(cold, rows) == {
        "pythons": 3, "by_cpu": 1.3, "by_stages": 1.3, "by_wall": 1.3,
    }  # fmt: skip
    assert bench.n_pythons(cold, rows[:1]) is None
    composed = {**cold, "cpu_s": None, "wall_s": None}
    assert bench.n_pythons(composed, rows)["by_cpu"] is None
