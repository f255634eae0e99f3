"""Snapshot tests: each seed scenario's spec (examples/) planned against the real knowledge base
and a host-facts file recorded on the CI machine kind (tests/fixtures/plan/host-ci.json, written
by `torchsmith host --json`). Update after a deliberate change with
``TORCHSMITH_UPDATE_SNAPSHOTS=1 pytest tests/unit/planner/test_seeds.py``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from torchsmith import kb
from torchsmith.host.model import HostFacts
from torchsmith.plan import BuildPlan, resolve
from torchsmith.planner.support import KNOWLEDGE_ONLY
from torchsmith.spec_sources import resolve_spec

ROOT = Path(__file__).resolve().parents[3]
SNAPSHOTS = ROOT / "tests" / "fixtures" / "plan" / "snapshots"
HOST = ROOT / "tests" / "fixtures" / "plan" / "host-ci.json"
SEEDS = sorted((ROOT / "examples").glob("seed-*.toml"))


def _plan(spec_file: Path) -> BuildPlan:
    """What the planner knows of the seed (the snapshot), whatever the pipeline runs today."""
    host = HostFacts.model_validate_json(HOST.read_text())
    return resolve(resolve_spec(file=spec_file), kb.load(), host, can=KNOWLEDGE_ONLY)


@pytest.mark.parametrize("spec_file", SEEDS, ids=[p.stem for p in SEEDS])
def test_seed_plan_matches_snapshot(spec_file: Path) -> None:
    plan = _plan(spec_file)
    data = plan.model_dump(mode="json")
    snapshot = SNAPSHOTS / f"{spec_file.stem}.json"
    if os.environ.get("TORCHSMITH_UPDATE_SNAPSHOTS"):
        snapshot.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    if not snapshot.exists():
        pytest.fail(f"no snapshot {snapshot.name}: run with TORCHSMITH_UPDATE_SNAPSHOTS=1, review")
    assert data == json.loads(snapshot.read_text())


def test_seed_000_reproduces_the_seed() -> None:
    plan = _plan(ROOT / "examples" / "seed-000-gpu-virtualisation.toml")
    env = plan.env_dict()
    assert plan.torch.value == "1.1.0" and plan.python.value == "3.5"
    assert [(c.name, c.version) for c in plan.companions] == [("torchvision", "0.3.0")]
    assert plan.cuda.value == "9.0"
    assert env["TORCH_CUDA_ARCH_LIST"] == "3.5;6.0;6.1;7.0+PTX"
    for name in ("NO_TEST", "NO_FBGEMM", "NO_MIOPEN", "NO_MKLDNN", "NO_NNPACK", "NO_QNNPACK"):
        assert env[name] == "1", name
    assert env["USE_NCCL"] == "1" and env["USE_SYSTEM_NCCL"] == "1"
    assert plan.linking["cuda"].value == "dynamic" and plan.linking["nccl"].value == "dynamic"
    assert plan.frontend.value == "setup.py"
    # the seed's system NCCL, in the three names torch 1.1's tools/setup_helpers/nccl.py reads
    assert env["NCCL_ROOT_DIR"] == "/usr" and env["NCCL_INCLUDE_DIR"] == "/usr/include"
    assert env["NCCL_LIB_DIR"] == "/usr/lib/x86_64-linux-gnu"


def test_seed_004_applies_the_three_fixes_and_split_cuda() -> None:
    plan = _plan(ROOT / "examples" / "seed-004-cuda118-on-113.toml")
    assert plan.torch.value == "1.13.0" and plan.cuda.value == "11.8"
    assert plan.arch_list == "8.6;8.9"
    assert plan.env_dict()["BUILD_SPLIT_CUDA"] == "1"
    patches = [f for f in plan.fixes if f.action == "patch"]
    assert len(patches) >= 3, [f.id for f in plan.fixes]
    assert all(f.explanation and f.source for f in plan.fixes)
    assert plan.compiler.value == "gcc-11"


def test_seed_001_official_preset() -> None:
    plan = _plan(ROOT / "examples" / "seed-001-official-conda.toml")
    env = plan.env_dict()
    assert plan.cuda.value == "11.0"  # the author's py3.8_cuda11.0.221_cudnn8.0.5
    assert env["TORCH_CUDA_ARCH_LIST"] == "6.1;7.0;7.5;8.0"
    assert env["TORCH_NVCC_FLAGS"] == "-Xfatbin -compress-all"
    assert env["USE_STATIC_CUDNN"] == "1" and env["USE_STATIC_NCCL"] == "1"
    assert plan.outputs == ["conda"]


def test_seed_002_companions_match() -> None:
    plan = _plan(ROOT / "examples" / "seed-002-cresset-train-images.toml")
    assert {c.name: c.version for c in plan.companions} == {
        "torchvision": "0.10.1",
        "torchtext": "0.10.1",
        "torchaudio": "0.9.1",
    }
    assert plan.arch_list == "8.6"


def test_seed_003_uses_the_seeds_cuda_90() -> None:
    plan = _plan(ROOT / "examples" / "seed-003-setup-py-install.toml")
    assert plan.cuda.value == "9.0"  # NVIDIA_REQUIRE_CUDA cuda>=9.0, cuDNN 7.4.1.5 in the seed
    assert plan.env_dict()["BUILD_TEST"] == "1" or plan.env_dict().get("NO_TEST") == "0"
