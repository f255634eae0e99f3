"""What was added for issue 25 after round 26's freeze (rounds 1-26 are train data; round 27
measures it): round 26's error logs without a finding, each read as a class. Each line but the
near misses is copied from a train log."""

from __future__ import annotations

import pytest

from tests.unit.doctor.rule_cases import fires_as_wanted, top_rule
from torchsmith.doctor import diagnose


@pytest.mark.parametrize(
    ("text", "want"),
    [
        # round 26's mamba#969: libmamba's block without its exception class
        ("Encountered problems while solving:\n  - package cudatoolkit-11.0.3-h15472ef_6 has "
         "constraint __cuda >=11.0 conflicting with __cuda-10.2-0", "conda-solver-conflict"),
        # round 26's AutoGPTQ#203
        ("CUDA extension not installed.", "extension-cuda-version-mismatch"),
        ("  warn('CUDA extension not installed, using the CPU kernels')",
         "!extension-cuda-version-mismatch"),
        # round 26's pytorch#41664: a libtorch program's printout (a warning)
        ("CUDA:   0", "cuda-reported-unavailable"),
        ("CUDA:   1", "!cuda-reported-unavailable"),
    ],
)  # fmt: skip
def test_the_rule_fires_on_its_wording_and_not_on_the_near_miss(text: str, want: str) -> None:
    assert fires_as_wanted(text, want), (text, want, top_rule(text))


def test_the_driver_s_virtual_package_is_named_in_the_fix() -> None:
    log = ["  - package cudatoolkit-11.0.3-h15472ef_6 has constraint __cuda >=11.0 conflicting "
           "with __cuda-10.2-0"]  # fmt: skip
    fix = diagnose(log).findings[0].fix
    assert fix.startswith("conda's virtual package __cuda") and "-c nvidia" in fix


def test_a_lower_case_or_zero_printout_is_told_as_libtorch() -> None:
    for line in ("CUDA:   0", "Cuda available: false"):
        assert "libtorch" in diagnose([line]).findings[0].fix.split("Otherwise")[0], line
    assert "libtorch's CUDA library" not in diagnose(["CUDA available: False"]).findings[0].fix


def test_systemd_coredump_s_stack_trace_is_a_crash() -> None:
    """Round 26's ipex-sd-docker-for-arc-gpu#16."""
    log = [
        "    Stack trace of thread 193:",
        "    #0  0x00007fa12a4520e0 n/a (/usr/lib/x86_64-linux-gnu/libze_intel_gpu.so.1 + 0x39f)",
    ]
    assert diagnose(log).findings[0].rule_id == "generic-crash"


@pytest.mark.parametrize(
    "line", ["CUDA extension not installed", "name autogptq_cuda_256 not defined"]
)
def test_a_failure_said_without_an_error_word_gets_a_finding(line: str) -> None:
    assert diagnose([line]).findings


@pytest.mark.parametrize(
    ("text", "want"),
    [
        # round 26's rocm-gfx803#2: ctypes' OSError
        ("OSError: libmpi_cxx.so.40: cannot open shared object file: No such file or directory",
         "shared-lib-missing-at-import"),
        # round 26's pytorch-AdaIN#20
        ("ModuleNotFoundError: No module named 'torch.utils.serialization'",
         "torch-private-module-removed"),
        # round 26's DirectML#648; torch._C's case stays the source checkout's
        ("ImportError: cannot import name 'autocast' from 'torch.amp' (unknown location)",
         "torch-import-shadowed-or-broken"),
        ("ImportError: cannot import name '_add_docstr' from 'torch._C' (unknown location)",
         "import-torch-from-source-checkout"),
    ],
)  # fmt: skip
def test_round_26_s_misses_fire_as_wanted(text: str, want: str) -> None:
    assert fires_as_wanted(text, want), (text, want, top_rule(text))


@pytest.mark.parametrize(
    ("text", "want"),
    [
        # round 27's diffusers-rs#75: a program that could not start
        ("exit code: 0xc0000135, STATUS_DLL_NOT_FOUND", "windows-dll-load-failed"),
        # round 27's pytorch#31611
        ("Torch is not linked against CUDA", "libtorch-cuda-library-not-loaded"),
        # round 27's sylabs/singularity#776
        ("WARNING: Could not find any NVIDIA libraries on this host!", "no-nvidia-driver"),
        # round 27's uv#1884
        ("  Caused by: Because wheel was not found in the package registry and you require wheel, "
         "we can conclude that the requirements are unsatisfiable.", "wheel-package-missing"),
    ],
)  # fmt: skip
def test_round_27_s_misses_fire_as_wanted(text: str, want: str) -> None:
    assert fires_as_wanted(text, want), (text, want, top_rule(text))


def test_a_program_that_cannot_start_on_windows_is_told_to_put_libtorch_on_path() -> None:
    fix = diagnose(["exit code: 0xc0000135, STATUS_DLL_NOT_FOUND"]).findings[0].fix
    assert fix.startswith("A program (not Python)") and "PATH" in fix


@pytest.mark.parametrize(
    ("line", "own"),
    [
        # round 27's pytorch#1265: `setup.py develop` without `build`
        ("> torch/csrc/utils/tuple_parser.h:6:23: fatal error: THPP/THPP.h: No such file or "
         "directory", True),
        ("aten/src/ATen/native/Foo.cpp:2:10: fatal error: ATen/ops/add.h: No such file or "
         "directory", True),
        # an extension built against an installed torch is not torch's own tree
        ("/x/site-packages/torch/include/ATen/ATen.h:3:10: fatal error: c10/core/Allocator.h: No "
         "such file or directory", False),
    ],
)  # fmt: skip
def test_a_header_of_torch_s_own_tree_missing_in_its_own_build_is_a_partial_build(
    line: str, own: bool
) -> None:
    top = diagnose([line]).findings[0]
    assert ("source-tree" in top.tags) is own
    assert ("build develop" in top.fix) is own


@pytest.mark.parametrize(
    ("text", "want"),
    [
        # round 27's apex#521 (cl not found: the build's warning before its failure)
        ("H:\\env\\lib\\site-packages\\torch\\utils\\cpp_extension.py:189: UserWarning: "
         "Error checking compiler version for cl: [WinError 2] 系統找不到指定的檔案。\n"
         "error: command 'C:\\\\VS\\\\x64\\\\cl.exe' failed with exit status 2",
         "msvc-build-tools-missing"),
        # round 27's pytorch#2076
        ("CMake Error at CMakeLists.txt:128 (message):\n  Failed to get generated_cpp list",
         "missing-python-build-dep"),
    ],
)  # fmt: skip
def test_round_27_s_build_misses_fire_as_wanted(text: str, want: str) -> None:
    assert fires_as_wanted(text, want), (text, want, top_rule(text))
