"""``--preset official`` for seed 001 (torch 1.8.0, CUDA 11.0, Python 3.8): the plan carries the
flags the seed's pytorch/builder conda build exported — TORCH_CUDA_ARCH_LIST from its GPU list,
TORCH_NVCC_FLAGS="-Xfatbin -compress-all", USE_STATIC_CUDNN=1, USE_STATIC_NCCL=1 — each with the
builder file it comes from; without the preset none of the official-only ones."""

from __future__ import annotations

from pathlib import Path

from tests.unit.planner.kb import ci_host
from torchsmith.kb import load
from torchsmith.planner import resolve
from torchsmith.planner.official import BUILDER_CONDA, links_statically
from torchsmith.planner.support import KNOWLEDGE_ONLY
from torchsmith.spec_sources import resolve_spec

SEED = Path(__file__).resolve().parents[3] / "examples" / "seed-001-official-conda.toml"
# /work/shared/seeds/001: build.sh of the seed's `conda build … pytorch-nightly`
SEED_FLAGS = {
    "TORCH_CUDA_ARCH_LIST": "6.1;7.0;7.5;8.0",
    "TORCH_NVCC_FLAGS": "-Xfatbin -compress-all",
    "USE_STATIC_CUDNN": "1",
    "USE_STATIC_NCCL": "1",
}


def _env(**cli: object) -> dict[str, tuple[str, str]]:
    spec = resolve_spec(file=SEED, cli=cli)
    plan = resolve(spec, load(), ci_host(), can=KNOWLEDGE_ONLY)
    return {e.name: (e.value, e.reason) for e in plan.env}


def test_seed_001_official_preset_has_the_seeds_flags_with_their_source() -> None:
    env = _env()
    for name, value in SEED_FLAGS.items():
        assert env[name][0] == value, name
    for name in ("TORCH_NVCC_FLAGS", "USE_STATIC_CUDNN", "USE_STATIC_NCCL"):
        assert BUILDER_CONDA in env[name][1], name


def test_without_the_preset_the_official_only_flags_are_gone() -> None:
    env = _env(preset="default")
    assert "TORCH_NVCC_FLAGS" not in env
    assert "USE_STATIC_CUDNN" not in env and "USE_STATIC_NCCL" not in env


def test_static_cudnn_except_where_the_builder_turned_it_off() -> None:
    assert links_statically("1.8.0", "cudnn", "11.0")
    assert not links_statically("1.11.0", "cudnn", "11.5")  # no single libcudnn_static.a
    assert links_statically("1.11.0", "nccl", "11.5")
    assert not links_statically("2.5.1", "nccl", "12.4")  # 2.x: pip-deps/dynamic
