"""A small knowledge base for planner logic tests (facts copied from the real KB's sources;
the logic, not the data, is under test here — tests/unit/planner/test_seeds.py uses the real KB)."""

from __future__ import annotations

from torchsmith.host.model import Compiler, GpuInfo, HostFacts, PythonInfo
from torchsmith.kb import KnowledgeBase
from torchsmith.kb.models import BuildOption, CudaRelease, Gpu, OfficialArchList, Release

SRC = {"*": "https://pytorch.org/get-started/previous-versions/"}
NV = {"*": "https://docs.nvidia.com/cuda/cuda-installation-guide-linux/"}
OLD_ARCHS = ["3.5", "3.7", "5.0", "5.2", "6.0", "6.1", "7.0", "7.5", "8.0", "8.6"]


def _rel(torch: str, **kw: object) -> Release:
    base: dict[str, object] = {
        "torch": torch,
        "tag": f"v{torch}",
        "python_min": "3.7",
        "python_max": "3.10",
        "cxx_standard": 14,
        "frontend": "setup.py",
        "env_style": "forward-prefixes",
        "sources": SRC,
    }
    base.update(kw)
    return Release.model_validate(base)


def mini_kb() -> KnowledgeBase:
    releases = (
        _rel("1.1.0", torchvision="0.3.0", python_min="3.5", python_max="3.7", cuda=["9.0", "10.0"],
             cxx_standard=11, env_style="legacy-no"),
        _rel("1.13.1", torchvision="0.14.1", torchaudio="0.13.1", torchtext="0.14.1",
             cuda=["11.6", "11.7"], gcc_min="7"),
        _rel("2.5.1", torchvision="0.20.1", torchaudio="2.5.1", python_min="3.9",
             python_max="3.13", cuda=["11.8", "12.1", "12.4"], cxx_standard=17, gcc_min="9"),
    )  # fmt: skip
    cudas = (
        CudaRelease(version="9.0", gcc_max=6, archs=["3.0", "3.5", "5.0", "6.0", "6.1", "7.0"],
                    sources=NV),
        CudaRelease(version="11.7", gcc_max=11, archs=OLD_ARCHS, sources=NV),
        CudaRelease(version="11.8", gcc_max=11, archs=[*OLD_ARCHS, "8.9", "9.0"], sources=NV),
        CudaRelease(version="12.4", gcc_max=13, archs=[*OLD_ARCHS[2:], "8.9", "9.0"], sources=NV),
    )  # fmt: skip
    gpus = (
        Gpu(name="GeForce RTX 3090", aliases=["RTX 3090"], compute_capability="8.6",
            family="geforce", architecture="Ampere", sources=NV),
        Gpu(name="GeForce RTX 4090", aliases=["RTX 4090"], compute_capability="8.9",
            family="geforce", architecture="Ada", sources=NV),
    )  # fmt: skip
    arch_lists = (
        OfficialArchList(torch=">=2.5,<2.6", cuda="12.4", arch_list="5.0;6.0;7.0;7.5;8.0;8.6;9.0",
                         sources=SRC),
    )  # fmt: skip
    options = (
        BuildOption(name="USE_FBGEMM", feature="fbgemm", legacy="NO_FBGEMM", legacy_inverted=True,
                    description="FBGEMM", sources=SRC),
        BuildOption(name="USE_CUDA", legacy="NO_CUDA", legacy_inverted=True, description="CUDA",
                    sources=SRC),
        BuildOption(name="USE_CUDNN", feature="cudnn", legacy="NO_CUDNN", legacy_inverted=True,
                    description="cuDNN", sources=SRC),
        BuildOption(name="USE_NCCL", feature="nccl", description="NCCL", sources=SRC),
        BuildOption(name="BUILD_TEST", feature="tests", legacy="NO_TEST", legacy_inverted=True,
                    description="tests", sources=SRC),
    )  # fmt: skip
    return KnowledgeBase(
        releases=releases,
        cuda_releases=cudas,
        arch_lists=arch_lists,
        gpus=gpus,
        options=options,
        fixes=(),
    )


def ci_host(**kw: object) -> HostFacts:
    """Like this project's CI machine: 2 cores, 24 GiB, gcc 12, Python 3.11, no GPU."""
    base: dict[str, object] = {
        "os_id": "debian",
        "os_version": "12",
        "cores": 2,
        "ram_gib": 23.4,
        "disk_free_gib": 80.0,
        "compilers": [Compiler(family="gcc", version="12.2.0", cc="/usr/bin/gcc",
                               cxx="/usr/bin/g++")],
        "pythons": [PythonInfo(path="/usr/bin/python3", version="3.11.2")],
    }  # fmt: skip
    base.update(kw)
    return HostFacts.model_validate(base)


def gpu_host() -> HostFacts:
    return ci_host(
        cores=16,
        ram_gib=125.0,
        gpus=[GpuInfo(index=0, name="NVIDIA H100 80GB HBM3", compute_capability="9.0")],
    )
