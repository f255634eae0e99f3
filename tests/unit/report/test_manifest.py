"""The build manifest: plan, source identity, toolchain, env, CMake cache values, stage times,
cache hit rate and a sha256 per artifact."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from torchsmith.cache import CacheStats
from torchsmith.plan_model import BuildPlan
from torchsmith.report.manifest import (
    ManifestInputs,
    artifact_record,
    build_manifest,
    cache_record,
    manifest_name,
    source_record,
)
from torchsmith.sources.base import SourceTree
from torchsmith.steps.artifacts import partial_artifacts
from torchsmith.steps.configure import cache_values_that_matter, parse_cmake_cache


@pytest.fixture
def plan(fixtures: Path) -> BuildPlan:
    text = (fixtures / "build" / "plan-debian-1.13.1-c10.json").read_text()
    return BuildPlan.model_validate_json(text)


def test_real_cmake_cache_values(fixtures: Path) -> None:
    text = (fixtures / "build" / "CMakeCache-debian-1.13.1-cpu.txt").read_text()
    values = cache_values_that_matter(parse_cmake_cache(text))
    assert values["CMAKE_BUILD_TYPE"] == "Release"
    assert values["USE_CUDA"] == "0"
    assert values["USE_SYSTEM_LIBS"] == "1"
    assert values["CMAKE_CXX_COMPILER_LAUNCHER"] == "ccache"
    assert values["CMAKE_CXX_COMPILER"] == "/usr/bin/g++-12"  # the plan said gcc-12
    assert not any(k.startswith("CMAKE_PROJECT") for k in values)
    assert "CMAKE_CACHEFILE_DIR" not in values  # INTERNAL entries are left out


def test_artifacts_of_a_partial_build(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "libc10.so").write_bytes(b"\x7fELF c10")
    (lib / "libother.so").write_bytes(b"other")
    obj = tmp_path / "caffe2" / "x.cpp.o"
    obj.parent.mkdir()
    obj.write_bytes(b"object")
    records = partial_artifacts(tmp_path, ["c10", "caffe2/x.cpp.o"])
    assert [(r["name"], r["target"]) for r in records] == [
        ("lib/libc10.so", "c10"),
        ("caffe2/x.cpp.o", "caffe2/x.cpp.o"),
    ]
    assert records[0]["sha256"] == hashlib.sha256(b"\x7fELF c10").hexdigest()
    assert records[0]["size"] == 8


def test_manifest_holds_everything(tmp_path: Path, plan: BuildPlan) -> None:
    wheel = tmp_path / "torch-1.13.1+cpu-cp311-cp311-linux_x86_64.whl"
    wheel.write_bytes(b"wheel")
    tree = SourceTree("debian", tmp_path / "src", "sha256:abc", "1.13.1+dfsg-4", owned=True)
    manifest = build_manifest(
        ManifestInputs(
            plan=plan,
            source=source_record(tree, tmp_path / "ws" / "src"),
            toolchain={"cmake": "cmake version 3.25.1"},
            env={"USE_CUDA": "0", "MAX_JOBS": "2"},
            cmake_cache={"CMAKE_BUILD_TYPE": "Release"},
            stages={"configure": 14.31, "compile": 20.0},
            stages_all_runs={"configure": 28.6, "compile": 20.0},
            ninja={"edges_run": 68, "edges_total": 68},
            compiler_cache=cache_record("ccache", CacheStats(hits=61, misses=6)),
            fixes=[{"id": "x", "status": "applied"}],
            artifacts=[artifact_record(wheel)],
            workspace=tmp_path / "ws",
        )
    )
    assert manifest["plan"] == plan.model_dump(mode="json")
    assert manifest["plan_hash"] == plan.plan_hash()
    assert manifest["kind"] == "partial" and manifest["targets"] == ["c10"]
    assert manifest["source"]["identity"] == "sha256:abc"
    assert manifest["stages"] == {"configure": 14.3, "compile": 20.0}
    assert manifest["stages_all_runs"] == {"configure": 28.6, "compile": 20.0}
    assert manifest["total_seconds"] == 34.3
    assert manifest["compiler_cache"] == {
        "kind": "ccache",
        "hits": 61,
        "misses": 6,
        "hit_rate": 0.9104,
    }
    assert manifest["artifacts"][0]["sha256"] == hashlib.sha256(b"wheel").hexdigest()
    assert manifest["env"] == {"MAX_JOBS": "2", "USE_CUDA": "0"}


def test_manifest_names(tmp_path: Path, plan: BuildPlan) -> None:
    wheel = tmp_path / "torch-1.13.1+cpu-cp311-cp311-linux_x86_64.whl"
    assert manifest_name(plan, wheel) == "torch-1.13.1+cpu-cp311-cp311-linux_x86_64.manifest.json"
    assert manifest_name(plan, None) == f"torchsmith-partial-{plan.plan_hash()}.manifest.json"


def test_cache_record_without_stats() -> None:
    assert cache_record("none", None)["hit_rate"] is None
