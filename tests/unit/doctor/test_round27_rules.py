"""What was added for issue 25 after round 26's freeze (rounds 1-26 are train data; round 27
measures it): round 26's error logs without a finding and misses, each read as a class, and
classes from rounds 17-25's misses. Each line but the near misses is copied from a train log."""

from __future__ import annotations

import pytest

from tests.unit.doctor.rule_cases import fires_as_wanted, top_rule
from torchsmith.doctor import diagnose


@pytest.mark.parametrize(
    ("text", "want"),
    [
        # round 25's pytorch#1358
        ("ImportError: No module named _dl", "import-torch-from-source-checkout"),
        ("ModuleNotFoundError: No module named '_dlpack_helper'",
         "!import-torch-from-source-checkout"),
        # round 25's sentence-transformers#388
        ("RuntimeError: version_ <= kMaxSupportedFileFormatVersion INTERNAL ASSERT FAILED at "
         "/pytorch/caffe2/serialize/inline_container.cc:132, please report a bug to PyTorch. "
         "Attempted to read a PyTorch file with version 3, but the maximum supported version for "
         "reading is 2.", "torch-too-old-for-code"),
        # round 23's mmdeploy#619
        ("Could not find any similar ops to torchvision::nms. This op may not exist or may not be "
         "currently supported in TorchScript.", "torchvision-ops-not-registered"),
        ("RuntimeError: operator torchvision::nms does not exist",
         "!torchvision-ops-not-registered"),
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
        # round 27's diffusers-rs#75: a program that could not start
        ("exit code: 0xc0000135, STATUS_DLL_NOT_FOUND", "windows-dll-load-failed"),
        # round 27's pytorch#31611
        ("Torch is not linked against CUDA", "libtorch-cuda-library-not-loaded"),
        # round 27's sylabs/singularity#776
        ("WARNING: Could not find any NVIDIA libraries on this host!", "no-nvidia-driver"),
        # round 27's uv#1884
        ("  Caused by: Because wheel was not found in the package registry and you require wheel, "
         "we can conclude that the requirements are unsatisfiable.", "wheel-package-missing"),
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
def test_the_rule_fires_on_its_wording_and_not_on_the_near_miss(text: str, want: str) -> None:
    assert fires_as_wanted(text, want), (text, want, top_rule(text))


@pytest.mark.parametrize(
    "text",
    [
        # round 24's pytorch#4606, round 25's intel-extension-for-pytorch#244
        "RuntimeError: PyTorch built without distributed support",
        "RuntimeError: PyTorch is not linked with support for xpu devices",
    ],
)
def test_torch_built_without_a_backend_is_feature_off(text: str) -> None:
    assert "feature-off" in diagnose([text]).findings[0].tags


@pytest.mark.parametrize(
    ("line", "header"),
    [
        # round 21's pytorch#3295 (nvcc), round 17's pytorch#2785 (gcc)
        ('/u/pytorch/torch/lib/THCUNN/SoftMaxCommon.cuh(35): error: namespace "std" has no '
         'member "min"', "<algorithm>"),
        ("/h/pytorch/torch/lib/THPP/tensors/generic/THSTensor.cpp:1015:9: error: ‘runtime_error’ "
         "is not a member of ‘std’", "<stdexcept>"),
        # round 16's pytorch#1434 (clang)
        ("pytorch/torch/csrc/autograd/function_hook.h:11:40: error: no member named 'shared_ptr' "
         "in namespace 'std'", "<memory>"),
    ],
)  # fmt: skip
def test_a_std_name_used_without_its_header_names_the_header(line: str, header: str) -> None:
    top = diagnose([line]).findings[0]
    assert top.rule_id == "generic-compiler"
    assert "headers" in top.tags
    assert f"#include {header}" in top.fix


def test_findcuda_s_wrapper_error_does_not_hide_nvcc_s_diagnostic() -> None:
    log = [
        '/u/pytorch/torch/lib/THCUNN/SoftMaxCommon.cuh(35): error: namespace "std" has no member '
        '"min"',
        '1 error detected in the compilation of "/tmp/tmpxft_1-6_LogSoftMax.cpp1.ii".',
        "CMake Error at THCUNN_generated_LogSoftMax.cu.o.cmake:267 (message):",
        "  Error generating file",
    ]
    assert diagnose(log).findings[0].rule_id == "generic-compiler"


def test_any_other_compile_error_keeps_the_general_diagnosis() -> None:
    top = diagnose(["a.cpp:3:5: error: expected ';' before '}' token"]).findings[0]
    assert top.rule_id == "generic-compiler"
    assert "headers" not in top.tags


def test_an_old_abi_std_string_at_link_time_is_told_as_an_abi_mismatch() -> None:
    """Round 23's libtorch-yolov3#23: OpenCV 4 (new ABI) linked into a program compiled with the
    pre-cxx11 libtorch's _GLIBCXX_USE_CXX11_ABI=0."""
    line = "app.cpp:(.text+0x9f0): undefined reference to `cv::imread(std::string const&, int)'"
    top = diagnose([line]).findings[0]
    assert "cxx11-abi" in top.tags
    assert "cxx11-ABI" in top.fix


def test_a_new_abi_or_plain_c_symbol_is_not_called_old_abi() -> None:
    new = "a.o: undefined reference to `cv::imread(std::__cxx11::basic_string<char> const&, int)'"
    assert "old (pre-C++11) ABI" not in diagnose([new]).findings[0].cause
    plain = "a.o: undefined reference to `png_create_read_struct'"
    assert "cxx11-abi" not in diagnose([plain]).findings[0].tags


def test_a_third_party_package_built_without_a_backend_is_named_third_party() -> None:
    """Round 25's bitsandbytes#879."""
    line = (
        "The installed version of bitsandbytes was compiled without GPU support. 8-bit "
        "optimizers, 8-bit multiplication, and GPU quantization are unavailable."
    )
    tags = diagnose([line]).findings[0].tags
    assert "third-party" in tags and "bitsandbytes" in tags


def test_winerror_127_on_a_torch_dll_is_told_as_mixed_torch_versions() -> None:
    """Round 21's lunar#58: WinError 127 (a procedure not found), not 126 (a file not found)."""
    line = (
        'OSError: [WinError 127] The specified procedure could not be found. Error loading "C:\\'
        'Python39\\lib\\site-packages\\torch\\lib\\c10_cuda.dll" or one of its dependencies.'
    )
    fix = diagnose([line]).findings[0].fix
    assert fix.startswith("WinError 127") and "two torch versions" in fix


def test_a_program_s_loader_message_is_a_missing_shared_library() -> None:
    """Round 15's tch-rs#824: a Rust binary that links libtorch, LD_LIBRARY_PATH without it."""
    line = (
        "target/debug/tch_test: error while loading shared libraries: libtorch_cuda.so: cannot "
        "open shared object file: No such file or directory"
    )
    top = diagnose([line]).findings[0]
    assert top.rule_id == "shared-lib-missing-at-import"
    assert "LD_LIBRARY_PATH" in top.fix
    driver = "./main: error while loading shared libraries: libcuda.so.1: cannot open shared object"
    assert top_rule(driver) == "libcuda-missing"


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
