"""What was added for issue 25 before the round 18 freeze (rounds 1-17 are train data), aimed at
classes rather than single logs: soft error lines (a failure said without an error word) give a
finding when the log holds nothing else, while clean output still gives none; a diagnostic
wrapped after its ``error:`` is read as one message; pip's failed setup.py run, a missing triton,
an unknown flag and torch's internal asserts get fixes from the message's own fields; and the
rule families of round 17's misses (docker's --gpus, MSVC Debug/Release, macOS's deployment
target, torch.compile on Windows, Windows DLLs named by no one, DataLoader workers, CUDA not
available) in the wordings their tools print."""

from __future__ import annotations

import pytest

from tests.unit.doctor.rule_cases import top_rule
from torchsmith.doctor import diagnose

RULE_CASES = [
    # docker too old for --gpus; no nvidia runtime registered
    ("docker: unknown flag: --gpus.", "docker-too-old-for-gpus-flag"),
    ("result:    unknown flag: --gpus See 'docker run --help'.", "docker-too-old-for-gpus-flag"),
    ("docker: Error response from daemon: Unknown runtime specified nvidia.",
     "docker-gpu-runtime-missing"),
    # MSVC Debug vs Release LibTorch: the run-time and the link-time symptom
    ("cuda_dispatch_ptr INTERNAL ASSERT FAILED at C:\\w\\DispatchStub.h:70, please report a bug "
     "to PyTorch. DispatchStub: missing CUDA kernel", "libtorch-debug-release-mismatch"),
    ("torch.lib(x.obj) : error LNK2038: mismatch detected for '_ITERATOR_DEBUG_LEVEL': value '0' "
     "doesn't match value '2' in main.obj", "libtorch-debug-release-mismatch"),
    ("main.obj : error LNK2038: mismatch detected for 'RuntimeLibrary': value 'MDd_DynamicDebug' "
     "doesn't match value 'MD_DynamicRelease' in c10.lib(Allocator.obj)",
     "libtorch-debug-release-mismatch"),
    # macOS deployment target (clang's availability errors)
    ("cast.h:579:34: error: aligned allocation function of type 'void *(std::size_t, "
     "std::align_val_t)' is only available on macOS 10.14 or newer",
     "macos-deployment-target-too-old"),
    ("x.cpp:3:8: error: 'path' is unavailable: introduced in macOS 10.15",
     "macos-deployment-target-too-old"),
    # torch.compile on Windows
    ("RuntimeError: Windows not yet supported for torch.compile",
     "torch-compile-windows-unsupported"),
    # Windows DLLs named by no one: cut message, ctypes' WinError 126 in two languages
    ("from torch._C import * (ImportError: DLL load failed)", "windows-dll-load-failed"),
    ("OSError: [WinError 126] The specified module could not be found",
     "windows-dll-load-failed"),
    ("OSError: [WinError 126] Das angegebene Modul wurde nicht gefunden.",
     "windows-dll-load-failed"),
    ('OSError: [WinError 126] The specified module could not be found. Error loading '
     '"C:\\x\\torch\\lib\\fbgemm.dll" or one of its dependencies.',
     "windows-torch-dll-dependency-missing"),
    # a DataLoader worker's death reported alone
    ("RuntimeError: DataLoader worker (pid(s) 76) exited unexpectedly",
     "dataloader-shared-memory"),
    ("RuntimeError: DataLoader worker (pid 1234) exited unexpectedly with exit code 1.",
     "dataloader-shared-memory"),
    # torch's warning that it runs without CUDA
    ("/x/torch/amp/autocast_mode.py:250: UserWarning: User provided device_type of 'cuda', but "
     "CUDA is not available. Disabling", "cuda-not-available"),
    # nvcc's host-compiler check quoted without its limit
    ("/usr/local/cuda-10.1/include/crt/host_config.h:138:2: error: #error -- unsupported GNU "
     "version!", "nvcc-host-gcc-too-new"),
    # clang's message wrapped after 'fatal error:' (the next line holds the header)
    (".../torch/csrc/allocators.h:4:10: fatal error: \n      'type_traits' file not found",
     "clang-cxx-stdlib-headers-missing"),
]


@pytest.mark.parametrize(("text", "rule"), RULE_CASES)
def test_rule_families(text: str, rule: str) -> None:
    assert top_rule(text) == rule


# a failure said without an error word, alone in its log: a generic finding (not "no finding")
SOFT_ERRORS = [
    "docker: unknown flag: --platform",
    "nvcc fatal-less wrapper: unrecognized option '--foo'",
    "couldn't open the device /dev/nvidia0",
    "unable to open shared memory object </torch_1_2> in read-write mode",
    "Cannot connect to the Docker daemon at unix:///var/run/docker.sock.",
    "This operation is not supported on this platform",
    "CUDA support is no longer supported for this GPU",
    "Parameter 3 was incorrect on entry to SGEMM",
    "invalid device pointer: 0x7f00",
    "cuda_dispatch_ptr INTERNAL ASSERT FAILED at aten/src/ATen/x.h:70",
    "UserWarning: The NVIDIA driver on your system is not supported by this torch build",
    "Aborted",
    "pip._vendor.urllib3 Read timed out.",
    "curl: (7) Failed to connect to localhost port 8080: Connection refused",
]


@pytest.mark.parametrize("text", SOFT_ERRORS)
def test_a_soft_error_alone_gets_a_finding(text: str) -> None:
    assert top_rule(text) != "none"


# output of steps that did not fail: no finding
CLEAN = [
    "-- Looking for pthread_create in pthreads - not found",
    "-- Could NOT find CUDNN (missing: CUDNN_INCLUDE_DIR)",
    "Performing Test COMPILER_SUPPORTS_AVX512 - Failed",
    "Requirement already satisfied: torch in /x/site-packages (2.1.0)",
    "x.cpp:3:5: warning: unused variable 'n' [-Wunused-variable]",
    "CMake Warning at cmake/Dependencies.cmake:10 (message):\n  MKL could not be found.",
    "    assert torch.backends.cudnn.is_available(), \"cuDNN not available\"",
    "===== 12 passed, 0 failed in 3.2s =====",
    "Successfully installed torch-2.1.0",
]


@pytest.mark.parametrize("text", CLEAN)
def test_clean_output_gets_no_error_finding(text: str) -> None:
    """No error finding (a warning rule, a feature switched off, may still speak)."""
    findings = diagnose(text.split("\n")).findings
    assert [f.rule_id for f in findings if f.severity == "error"] == []


def test_soft_lines_never_hide_a_real_error() -> None:
    """A soft line earlier in the log does not become the first error block."""
    log = ["could not open optional plugin foo", "x.cpp:1:1: error: expected ';'"]
    error = diagnose(log).error
    assert error is not None and error.kind == "compiler" and error.line == 2


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("docker: unknown flag: --platform", "a tool does not know a flag or option"),
        ("conda: error: unrecognized arguments: --foo", "a tool does not know a flag or option"),
        ("x INTERNAL ASSERT FAILED at aten/src/ATen/core/x.cpp:12", "INTERNAL ASSERT FAILED"),
    ],
)
def test_message_facts_of_the_class(text: str, fact: str) -> None:
    generic = diagnose([text]).generic
    assert generic is not None and fact in generic.title


PIP = (
    "ERROR: Command errored out with exit status 1: /env/bin/python -u -c 'import sys, "
    "setuptools, tokenize; sys.argv[0] = '\"'\"'/tmp/pip-install-7bf7beha/mmcv-full_"
    "6aadf3cb45714e1f90c19497209299d3/setup.py'\"'\"';' install --record /tmp/r.txt"
)
PIP_CHECKOUT = (
    '" python -u -c "import setuptools, tokenize;__file__=\'/tmp/pip-req-build-hq7t6roo/setup.py'
    "';exec(compile(code, __file__, 'exec'))\" install --record /tmp/r.txt --compile\" failed "
    'with error code 1 in /tmp/pip-req-build-hq7t6roo/ "'
)


def test_pip_setup_failed_from_an_index_names_the_prebuilt_wheel() -> None:
    top = diagnose([PIP]).top
    assert top is not None and top.rule_id == "generic-command-failed"
    assert "pip could not build mmcv-full" in top.title and "--find-links" in top.fix


def test_pip_setup_failed_from_a_checkout_names_the_toolchain() -> None:
    top = diagnose([PIP_CHECKOUT]).top
    assert top is not None and top.rule_id == "generic-command-failed"
    assert "CUDA_HOME" in top.fix and "find-links" not in top.fix


def test_missing_triton_says_linux_only() -> None:
    top = diagnose(["Error caught was: No module named 'triton'"]).top
    assert top is not None and top.rule_id == "generic-import-module"
    assert "Linux only" in top.fix and "windows" in top.tags


@pytest.mark.parametrize(
    "log",
    [
        ["In [2]: torch.cuda.is_available()", "Out[2]: False"],
        [">>> torch.cuda.is_available()", "False"],
    ],
)
def test_a_repl_echo_of_false_is_cuda_not_available(log: list[str]) -> None:
    top = diagnose(log).top
    assert top is not None and top.rule_id == "cuda-not-available"


def test_a_repl_echo_of_true_is_no_error() -> None:
    assert diagnose([">>> torch.cuda.is_available()", "True"]).top is None


def test_a_known_message_below_an_unrecognised_heading_gives_its_fact() -> None:
    log = ["# ComfyUI Error Report", "## Error Details", "- **Exception Type:** NameError",
           "- **Exception Message:** name 'torch' is not defined"]
    generic = diagnose(log).generic
    assert generic is not None and "NameError" in generic.title
