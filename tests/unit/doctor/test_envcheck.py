"""Environment checks as pure functions over fact records (no probing here)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from torchsmith.doctor.context import context_from, load_context
from torchsmith.doctor.envcheck import (
    EnvFacts,
    ExtensionImport,
    PythonFacts,
    TorchInstall,
    check_all,
    check_cuda_paths,
    check_disk,
    check_driver,
    check_extensions,
    check_gpu_archs,
    check_host_compiler,
    check_ram_per_job,
    check_torch_installs,
    cuda_roots,
)
from torchsmith.host.model import Compiler, CudaToolkit, GpuInfo, HostFacts
from torchsmith.kb import KnowledgeBase
from torchsmith.kb.models import CudaRelease

FIXTURES = Path(__file__).parents[2] / "fixtures" / "doctor"
# A stand-in KB record for the tests (the real data lives in kb/data and may change).
KB = KnowledgeBase(
    releases=(),
    cuda_releases=(
        CudaRelease(
            version="12.4",
            gcc_max=13,
            archs=["8.0", "9.0"],
            sources={"*": "https://docs.nvidia.com/cuda/archive/12.4.0/"},
        ),
    ),
    arch_lists=(),
    gpus=(),
    options=(),
    fixes=(),
)
GCC14 = Compiler(family="gcc", version="14.2.0", cc="/usr/bin/gcc", cxx="/usr/bin/g++")
GCC12 = Compiler(family="gcc", version="12.2.0", cc="/usr/bin/gcc-12", cxx="/usr/bin/g++-12")
CUDA124 = CudaToolkit(
    root="/usr/local/cuda-12.4", nvcc="/usr/local/cuda-12.4/bin/nvcc", version="12.4", origin="PATH"
)


def _facts(**host: object) -> EnvFacts:
    base: dict[str, object] = {"cores": 2, "ram_gib": 24.0, "disk_free_gib": 100.0}
    return EnvFacts(host=HostFacts.model_validate({**base, **host}))


def test_driver_older_major_is_an_error() -> None:
    facts = _facts(cuda_toolkits=[CUDA124], driver_cuda="11.4", driver_version="470.57.02")
    [problem] = check_driver(facts)
    assert problem.severity == "error" and problem.id == "driver-too-old"
    assert "470.57.02" in problem.evidence[0]


def test_driver_older_minor_is_a_warning_and_newer_is_fine() -> None:
    assert check_driver(_facts(cuda_toolkits=[CUDA124], driver_cuda="12.2"))[0].severity == (
        "warning"
    )
    assert check_driver(_facts(cuda_toolkits=[CUDA124], driver_cuda="12.8")) == []
    assert check_driver(_facts(cuda_toolkits=[CUDA124])) == []  # no driver: nothing to say


def test_target_cuda_overrides_the_toolkit() -> None:
    facts = EnvFacts(host=_facts(driver_cuda="12.8").host, target_cuda="13.0")
    assert check_driver(facts)[0].id == "driver-too-old"


def test_host_compiler_too_new_names_a_fitting_one() -> None:
    facts = _facts(cuda_toolkits=[CUDA124], compilers=[GCC14, GCC12])
    [problem] = check_host_compiler(facts, KB)
    assert problem.severity == "error"
    assert "up to 13" in problem.what and "gcc-12" in problem.fix
    assert problem.source.startswith("https://docs.nvidia.com/")
    assert check_host_compiler(_facts(cuda_toolkits=[CUDA124], compilers=[GCC12]), KB) == []


def test_host_compiler_with_cuda_unknown_to_the_kb() -> None:
    toolkit = CUDA124.model_copy(update={"version": "9.9"})
    [problem] = check_host_compiler(_facts(cuda_toolkits=[toolkit], compilers=[GCC14]), KB)
    assert problem.id == "cuda-not-in-kb" and problem.severity == "warning"


def test_ram_per_job() -> None:
    tight = EnvFacts(host=_facts(ram_gib=8.0, cores=16).host)
    [problem] = check_ram_per_job(tight)
    assert problem.fix == "MAX_JOBS=4"
    capped = tight.model_copy(update={"max_jobs": 4})
    assert check_ram_per_job(capped) == []


def test_disk() -> None:
    assert check_disk(_facts(disk_free_gib=5.0))[0].severity == "error"
    assert check_disk(_facts(disk_free_gib=20.0))[0].severity == "warning"
    assert check_disk(_facts(disk_free_gib=200.0)) == []


def test_several_cuda_installs() -> None:
    facts = EnvFacts(
        host=_facts().host,
        path=("/usr/local/cuda-12.4/bin", "/usr/bin"),
        ld_library_path=("/usr/local/cuda-11.8/lib64",),
        cuda_home="/usr/local/cuda",
        realpaths={"/usr/local/cuda": "/usr/local/cuda-12.4"},
    )
    [problem] = check_cuda_paths(facts)
    assert "2 CUDA installs" in problem.what
    assert "LD_LIBRARY_PATH: /usr/local/cuda-11.8" in problem.evidence


def test_one_cuda_through_a_symlink_is_fine() -> None:
    facts = EnvFacts(
        host=_facts().host,
        path=("/usr/local/cuda/bin",),
        ld_library_path=("/usr/local/cuda-12.4/lib64",),
        realpaths={"/usr/local/cuda/bin": "/usr/local/cuda-12.4/bin"},
    )
    assert check_cuda_paths(facts) == []
    assert cuda_roots(["/opt/cuda/targets/x86_64-linux/lib", "/usr/lib"], {}) == ["/opt/cuda"]


def _py(**kwargs: object) -> EnvFacts:
    return EnvFacts(
        host=_facts().host,
        python=PythonFacts.model_validate({"executable": "/venv/bin/python", **kwargs}),
    )


def test_shadowed_torch_installs() -> None:
    installs = [TorchInstall(path="/a/torch", version="2.4.0"), TorchInstall(path="/b/torch")]
    [problem] = check_torch_installs(_py(installs=installs))
    assert "/a/torch" in problem.what and len(problem.evidence) == 2
    assert check_torch_installs(_py(installs=installs[:1])) == []


def test_extension_built_against_another_torch() -> None:
    # the warning text torchvision printed in https://github.com/NixOS/nixpkgs/issues/162286
    error = (
        "Failed to load image Python extension: /home/octopus/workdir/lib/python3.10/"
        "site-packages/torchvision/image.so: undefined symbol: "
        "_ZN3c105ErrorC2ENS_14SourceLocationESs"
    )
    exts = [
        ExtensionImport(name="torchvision", ok=False, error=error),
        ExtensionImport(name="torchaudio", ok=True),
    ]
    [problem] = check_extensions(_py(extensions=exts))
    assert problem.id == "torchvision-mismatch" and problem.severity == "error"


def test_check_all_puts_errors_first() -> None:
    facts = _facts(
        cuda_toolkits=[CUDA124], compilers=[GCC14], disk_free_gib=20.0, driver_cuda="12.8"
    )
    problems = check_all(facts, KB)
    assert [p.severity for p in problems] == ["error", "warning"]
    assert check_all(_facts(), None) == []


def test_context_from_a_manifest_with_plan_decisions() -> None:
    manifest = {
        "plan": {
            "torch": {"value": "1.13.1", "origin": "user", "reason": "asked"},
            "cuda": {"value": "11.8", "origin": "kb", "reason": "x"},
            "compiler": {"value": "gcc-11", "origin": "host", "reason": "y"},
            "python": {"value": "3.10", "origin": "default", "reason": "z"},
        },
        "toolchain": {"cmake": "3.25.1", "nvcc": "11.8"},
    }
    assert context_from(manifest) == {
        "torch": "1.13.1",
        "cuda": "11.8",
        "gcc": "11",
        "python": "3.10",
        "cmake": "3.25.1",
    }


def test_load_context_reads_toml(tmp_path: Path) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text('torch = "2.6.0"\n[toolchain]\ngcc = "12.2.0"\n', encoding="utf-8")
    assert load_context(spec) == {"torch": "2.6.0", "gcc": "12.2.0"}


def test_gpu_the_toolkit_cannot_compile_for() -> None:
    blackwell = GpuInfo(index=0, name="NVIDIA B200", compute_capability="10.0")
    hopper = GpuInfo(index=1, name="NVIDIA H100", compute_capability="9.0")
    [problem] = check_gpu_archs(_facts(cuda_toolkits=[CUDA124], gpus=[blackwell, hopper]), KB)
    assert problem.severity == "error" and "B200 (sm_100)" in problem.what
    assert "H100" not in problem.what
    assert check_gpu_archs(_facts(cuda_toolkits=[CUDA124], gpus=[hopper]), KB) == []


def test_recorded_h100_facts() -> None:
    # real facts from the GPU machine (tests/fixtures/doctor/README.md)
    data = json.loads((FIXTURES / "env-h100.json").read_text(encoding="utf-8"))
    facts = EnvFacts.model_validate(data)
    assert check_all(facts, None) == []
    old_driver = facts.host.model_copy(update={"driver_cuda": "12.4"})
    assert check_driver(facts.model_copy(update={"host": old_driver}))[0].id == "driver-too-old"
    crowded = facts.model_copy(update={"max_jobs": 128})
    assert check_ram_per_job(crowded)[0].fix == "MAX_JOBS=62"


KB_TWO = dataclasses.replace(
    KB,
    cuda_releases=(
        *KB.cuda_releases,
        CudaRelease(
            version="11.8",
            gcc_max=11,
            archs=["8.0"],
            sources={"*": "https://docs.nvidia.com/cuda/archive/11.8.0/"},
        ),
    ),
)
H100 = GpuInfo(index=0, name="NVIDIA H100", compute_capability="9.0")


def test_host_compiler_and_archs_check_the_target_cuda_not_the_first_toolkit() -> None:
    host = _facts(cuda_toolkits=[CUDA124], compilers=[GCC12], gpus=[H100]).host
    facts = EnvFacts(host=host, target_cuda="11.8")
    [gcc] = check_host_compiler(facts, KB_TWO)
    assert gcc.id == "nvcc-host-gcc-too-new" and "CUDA 11.8 accepts GCC up to 11" in gcc.what
    assert "no nvcc of it here" in gcc.evidence[0]
    [arch] = check_gpu_archs(facts, KB_TWO)
    assert arch.id == "gpu-arch-not-in-toolkit" and arch.what.startswith("CUDA 11.8 ")
    on_124 = EnvFacts(host=host, target_cuda="12.4")
    assert check_host_compiler(on_124, KB_TWO) == [] and check_gpu_archs(on_124, KB_TWO) == []


def test_unknown_cuda_is_worded_per_check_and_said_once() -> None:
    facts = EnvFacts(
        host=_facts(cuda_toolkits=[CUDA124], compilers=[GCC14], gpus=[H100]).host,
        target_cuda="9.9",
    )
    [arch] = check_gpu_archs(facts, KB)
    assert "GPU architectures" in arch.what and "host compiler" not in arch.what
    assert "9.9" in arch.what and "nvcc --list-gpu-arch" in arch.fix
    [gcc] = check_host_compiler(facts, KB)
    assert "host compiler" in gcc.what and "GPU" not in gcc.what
    unknown = [p for p in check_all(facts, KB) if p.id == "cuda-not-in-kb"]
    assert len(unknown) == 1
    assert "the host compiler or the GPU architectures against CUDA 9.9" in unknown[0].what
