"""Error lines without ``error``/``Error:`` or an ``ExceptionClass:`` (blind round 12, train data
since it was scored) reach the structural reader; CMake's probe lines do not."""

from __future__ import annotations

import pytest

from torchsmith.doctor import diagnose
from torchsmith.doctor.classify import classify


@pytest.mark.parametrize(
    "line",
    [
        "/opt/torch/install/bin/torch-activate: no such file or directory",
        "Exception caught: (wheel.install.BadWheelFile) (backtrace omitted)",
        '"Caffe2 building failed"',
        "Torchao experimental ops can only be built on arm64 CPUs.",
        "The conflict is caused by:",
        "bash: cmake: command not found",
        "sh: 1: nvcc: not found",
        "E: Unable to locate package libopenblas-dev",
        "cp: cannot create regular file '/usr/local/lib/libc10.so': Permission denied",
        "thread 'main' panicked at 'called `Option::unwrap()` on a `None` value', src/main.rs:3:5",
        "python: foo.c:12: main: Assertion `x > 0' failed.",
        "ld: library not found for -lomp",
    ],
)
def test_an_error_line_without_the_word_error_gets_a_finding(line: str) -> None:
    assert classify(line).kind == "error"
    diagnosis = diagnose([line])
    assert diagnosis.error is not None and diagnosis.findings


@pytest.mark.parametrize(
    "line",
    [
        "-- Looking for pthread_create in pthreads - not found",
        "-- Performing Test OpenMP_FLAG_DETECTED - Failed",
        "-- Performing Test COMPILER_SUPPORTS_AVX512 - Failed",
        "-- Check size of long double - failed",
        "-- Could NOT find OpenMP_C (missing: OpenMP_C_FLAGS OpenMP_C_LIB_NAMES)",
        '-- Found PythonInterp: /usr/bin/python3 (found version "3.11")',
        "-- Checking for module 'mpi-c' -- Package 'mpi-c', required by 'virtual:world', not found",
        "[12/400] Building CXX object c10/CMakeFiles/c10.dir/core/Device.cpp.o",
    ],
)
def test_cmake_probe_and_status_lines_are_no_error(line: str) -> None:
    assert classify(line).kind != "error"
    assert diagnose([line]).error is None


def test_a_python_exception_names_the_frame_that_raised_it() -> None:
    log = [
        '  File "/env/lib/python3.8/site-packages/torch/utils/cpp_extension.py", line 4, in f',
        "    flags = extra_postargs['cflags']",
        "KeyError: 'cflags'",
    ]
    top = diagnose(log).top
    assert top is not None and top.rule_id == "generic-python"
    assert "cpp_extension.py" in top.cause and "cpp-extension" in top.tags
    assert "torch" in top.tags


def test_a_failed_cmake_run_of_setup_py_says_the_cmake_error_is_above() -> None:
    log = [
        "subprocess.CalledProcessError: Command '['cmake', '-GNinja', '/src']' returned "
        "non-zero exit status 1.",
    ]
    diagnosis = diagnose(log)
    assert diagnosis.error is not None and diagnosis.error.kind == "command-failed"
    assert diagnosis.error.tool == "cmake"
    assert diagnosis.top is not None and diagnosis.top.stage == "configure"


@pytest.mark.parametrize(("tool", "category"), [("gcc", "compiler"), ("ninja", "build-step")])
def test_a_failed_compiler_run_is_a_compiler_failure(tool: str, category: str) -> None:
    top = diagnose([f"error: command '{tool}' failed with exit status 1"]).top
    assert top is not None and top.category == category


def test_the_circular_import_form_still_ranks_the_shadowing_rule() -> None:
    line = (
        "AttributeError: partially initialized module 'torchvision' has no attribute 'extension' "
        "(most likely due to a circular import)"
    )
    top = diagnose([line]).top
    assert top is not None and top.rule_id == "torch-import-shadowed-or-broken"
