"""Every GPU NVIDIA lists as CUDA-capable is known, by the names nvidia-smi prints, and every
compute capability the KB's CUDA records can target has a GPU (or a recorded reason why not)."""

from __future__ import annotations

import json

import pytest

from torchsmith.cli import main
from torchsmith.kb import KnowledgeBase, load

# Compute capabilities nvcc targets for which NVIDIA lists no product (yet): the reason, sourced.
NO_LISTED_GPU = {
    "8.8": "https://github.com/llvm/llvm-project/pull/170258 (sm_88 'Ampere architecture "
    "variant', added with CUDA 13.0; https://github.com/eyalroz/cuda-api-wrappers/issues/789: "
    "devices unknown)",
    "10.1": "https://github.com/bazel-contrib/rules_cuda/issues/466 (Thor's number up to CUDA "
    "12.9; CUDA 13.0 renumbered SM101 as SM110, the KB lists Thor as 11.0)",
    "10.7": "https://github.com/NVIDIA/cccl/pull/10008 (sm_107 target added to CCCL; no product "
    "on developer.nvidia.com/cuda-gpus)",
}


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return load()


def _cc_key(cc: str) -> tuple[int, int]:
    major, minor = cc.split(".")
    return int(major), int(minor)


def test_every_cuda_target_has_a_gpu_or_a_recorded_reason(kb: KnowledgeBase) -> None:
    targets = {a for c in kb.cuda_releases for a in c.archs}
    with_gpu = {g.compute_capability for g in kb.gpus}
    assert sorted(targets - with_gpu, key=_cc_key) == sorted(NO_LISTED_GPU, key=_cc_key)


def test_every_gpu_names_its_source(kb: KnowledgeBase) -> None:
    for gpu in kb.gpus:
        assert any("nvidia.com" in s or "github.com" in s for s in gpu.sources.values()), gpu.name


def test_the_list_covers_every_family_and_generation(kb: KnowledgeBase) -> None:
    assert len(kb.gpus) >= 250
    families = {"datacenter", "workstation", "geforce", "jetson", "other"}
    assert {g.family for g in kb.gpus} == families
    assert {"Fermi", "Kepler", "Maxwell", "Pascal", "Volta", "Turing", "Ampere"} <= {
        g.architecture for g in kb.gpus
    }


@pytest.mark.parametrize(
    ("name", "cc"),
    [
        ("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "12.0"),
        ("NVIDIA RTX PRO 4500 Blackwell Server Edition", "12.0"),
        ("NVIDIA RTX PRO 4000 Blackwell SFF Edition", "12.0"),
        ("NVIDIA GB10", "12.1"),
        ("Jetson T5000", "11.0"),
        ("NVIDIA DRIVE AGX Thor", "11.0"),
        ("NVIDIA RTX A3000 Laptop GPU", "8.6"),
        ("NVIDIA RTX 2000 Ada Generation Laptop GPU", "8.9"),
        ("NVIDIA GeForce MX450", "7.5"),
        ("Quadro T2000", "7.5"),
        ("Quadro P5200 with Max-Q Design", "6.1"),
        ("Quadro GP100", "6.0"),
        ("NVIDIA GeForce GTX 980M", "5.2"),
        ("Quadro K620M", "5.0"),
        ("GeForce GTX TITAN Black", "3.5"),
        ("Jetson TK1", "3.2"),
        ("Tesla K10", "3.0"),
        ("GeForce GTX 560 Ti", "2.1"),
        ("Tesla C2070", "2.0"),
        ("Orin (nvgpu)", "8.7"),  # what nvidia-smi prints on a Jetson Orin
    ],
)
def test_kb_gpu_finds_the_new_names(capsys: pytest.CaptureFixture[str], name: str, cc: str) -> None:
    assert main(["kb", "gpu", name, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["compute_capability"] == cc
