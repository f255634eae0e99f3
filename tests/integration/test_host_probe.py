"""The real host probe on this machine (the development box / CI: Debian 12 with gcc 12,
cmake, ninja, Python 3.11; CUDA 13.0's nvcc from NVIDIA's PyPI wheels, first on PATH) and, on
the GPU device machine, NVML. Takes about a second."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.resources import require_tool
from torchsmith.host import HostFacts, select_compiler, select_cuda, select_python
from torchsmith.host.probe import probe_host
from torchsmith.proc import HOST

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def facts_and_seconds() -> tuple[HostFacts, float]:
    start = time.monotonic()
    facts = probe_host(dict(os.environ), REPO, runner=HOST)
    return facts, time.monotonic() - start


def test_finds_the_build_tools_of_this_machine(facts_and_seconds: tuple[HostFacts, float]) -> None:
    facts, _ = facts_and_seconds
    gcc = select_compiler(facts, "gcc", max_major=12, min_major=12)
    assert gcc is not None and gcc.cxx is not None, facts
    assert {"cmake", "ninja"} <= set(facts.tools), facts.tools
    assert facts.tools["cmake"].version
    assert select_python(facts, "3.11") is not None
    assert facts.cores >= 1 and facts.ram_gib > 0 and facts.disk_free_gib > 0
    assert facts.glibc and facts.os_id


@pytest.mark.network  # nvcc_13: NVIDIA's PyPI wheels, once
def test_finds_nvcc_13_first_on_path(nvcc_13: Path) -> None:
    env = {**os.environ, "PATH": f"{nvcc_13.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    toolkit = select_cuda(probe_host(env, REPO, runner=HOST), "13.0")
    assert toolkit is not None
    assert Path(toolkit.nvcc).is_file() and Path(toolkit.root, "bin", "nvcc").is_file()


def test_probe_is_fast(facts_and_seconds: tuple[HostFacts, float]) -> None:
    _, seconds = facts_and_seconds
    assert seconds < 5, f"probe_host took {seconds:.2f} s"


def test_cli_json_round_trip() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "torchsmith", "host", "--json"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    data = json.loads(done.stdout)
    assert data["disk_path"] == str(REPO)
    assert any(c["family"] == "gcc" for c in data["compilers"])


@pytest.mark.gpu
def test_gpu_seen_through_nvml(facts_and_seconds: tuple[HostFacts, float]) -> None:
    require_tool("nvidia-smi", "a machine with an NVIDIA GPU and its driver")
    facts, _ = facts_and_seconds
    assert facts.gpus, facts
    assert facts.driver_version and facts.driver_cuda
    assert all(g.compute_capability for g in facts.gpus)
