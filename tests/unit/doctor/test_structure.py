"""The structural reader and the generic diagnosis: the first failure of a log as a typed error,
and a right answer per class when no specific rule matches. Each log below is the shape a real
tool prints (gcc 12, clang 14, nvcc 12, GNU ld / lld, CMake 3.25, CPython 3.11, pip 23)."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchsmith.cli import main
from torchsmith.commands.doctor import EXIT_CAUSE, EXIT_OK, EXIT_UNKNOWN
from torchsmith.doctor import diagnose
from torchsmith.doctor.components import by_header, by_library, by_symbol, components
from torchsmith.doctor.structure import demangle, join_cmake, normalise

NINJA = "[1/3] Building CXX object a.o\n[2/3] Building CXX object b.o\n"

CASES = {  # log, expected kind, field, expected generic tag
    "clang-header": (
        "FAILED: foo.o\n/usr/bin/clang++ -c foo.cpp\n"
        "/src/foo.cpp:3:10: fatal error: 'nccl.h' file not found\n#include <nccl.h>\n"
        "1 error generated.\n",
        "missing-header",
        ("header", "nccl.h"),
        "nccl",
    ),
    "gcc-header": (
        "FAILED: io.o\ntorchvision/csrc/io/image/cpu/decode_jpeg.cpp:5:10: fatal error: "
        "jpeglib.h: No such file or directory\ncompilation terminated.\n",
        "missing-header",
        ("header", "jpeglib.h"),
        "libjpeg",
    ),
    "nvcc-header": (
        'kernel.cu(2): catastrophic error: cannot open source file "cudnn.h"\n'
        '1 catastrophic error detected in the compilation of "kernel.cu".\n',
        "missing-header",
        ("header", "cudnn.h"),
        "cudnn",
    ),
    "ld-undefined": (
        "FAILED: app\n/usr/bin/ld: main.o: in function `main':\n"
        "main.cpp:(.text+0x1d): undefined reference to `ncclCommInitRank'\n"
        "collect2: error: ld returned 1 exit status\n",
        "linker-undefined",
        ("symbol", "ncclCommInitRank"),
        "nccl",
    ),
    "lld-undefined": (
        "ld.lld: error: undefined symbol: cudnnCreate\n>>> referenced by conv.cpp\n",
        "linker-undefined",
        ("symbol", "cudnnCreate"),
        "cudnn",
    ),
    "ld-missing-lib": (
        "/usr/bin/ld: cannot find -lavcodec: No such file or directory\n"
        "collect2: error: ld returned 1 exit status\n",
        "linker-missing-lib",
        ("library", "avcodec"),
        "ffmpeg",
    ),
    "import-missing-lib": (
        'Traceback (most recent call last):\n  File "<string>", line 1, in <module>\n'
        "OSError: libsox.so.3: cannot open shared object file: No such file or directory\n",
        "import-missing-lib",
        ("library", "libsox.so.3"),
        "sox",
    ),
    "import-symbol": (
        "ImportError: /x/_C.so: undefined symbol: _ZN3c1017RegisterOperatorsD1Ev\n",
        "import-symbol",
        ("symbol", "c10::RegisterOperators (_ZN3c1017RegisterOperatorsD1Ev)"),
        "torch",
    ),
    "import-module": (
        'Traceback (most recent call last):\n  File "setup.py", line 3, in <module>\n'
        "ModuleNotFoundError: No module named 'yaml'\n",
        "import-module",
        ("module", "yaml"),
        "pyyaml",
    ),
    "segfault-at-import": (
        "$ python -c 'import torch'\nSegmentation fault (core dumped)\n",
        "crash",
        ("tool", None),
        "crash",
    ),
    "macos-dylib": (
        "OSError: dlopen(/x/libtorchaudio_ffmpeg.so, 6): Library not loaded: "
        "@rpath/libavdevice.58.dylib\n",
        "import-missing-lib",
        ("library", "libavdevice.58.dylib"),
        "ffmpeg",
    ),
    "tool-missing-cmake": (
        "running build_ext\nerror: [Errno 2] No such file or directory: 'cmake'\n",
        "tool-missing",
        ("tool", "cmake"),
        "cmake",
    ),
    "tool-missing-msvc": (
        'error: Microsoft Visual C++ 14.0 or greater is required. Get it with "Microsoft C++ '
        'Build Tools"\n',
        "tool-missing",
        ("tool", "Visual C++"),
        "msvc",
    ),
    "localised-ld": (
        "/usr/bin/ld: 找不到 -lsox: 没有那个文件或目录\n"
        "collect2: error: ld returned 1 exit status\n",
        "linker-missing-lib",
        ("library", "sox"),
        "sox",
    ),
    "gdb-backtrace": (
        "(gdb) bt\n#0  0x00005555556ee8d4 in type_name () at Objects/typeobject.c:411\n",
        "crash",
        ("tool", None),
        "crash",
    ),
    "killed": (
        "FAILED: x.o\nc++: fatal error: Killed signal terminated program cc1plus\n"
        "compilation terminated.\n",
        "killed",
        ("tool", "cc1plus"),
        "oom",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_first_failure_is_typed_and_generically_diagnosed(name: str) -> None:
    log, kind, (field, value), tag = CASES[name]
    diagnosis = diagnose((NINJA + log).splitlines())
    assert diagnosis.error is not None and diagnosis.error.kind == kind
    assert getattr(diagnosis.error, field) == value
    assert diagnosis.generic is not None and tag in diagnosis.generic.tags
    assert diagnosis.findings[-1].generic  # specific rules, when any, rank above it


def test_a_wrapped_cmake_message_is_joined_and_matched_by_a_rule() -> None:
    log = (
        "CMake Error at CMakeLists.txt:1 (cmake_minimum_required):\n"
        "  CMake 3.18 or higher is required.  You are running version\n"
        "  3.16.3\n\n\n-- Configuring incomplete, errors occurred!\n"
    )
    diagnosis = diagnose(log.splitlines())
    assert diagnosis.error is not None and diagnosis.error.kind == "cmake"
    assert "You are running version 3.16.3" in diagnosis.error.message
    assert diagnosis.top is not None and diagnosis.top.rule_id == "cmake-too-old"


def test_join_cmake_stops_at_the_next_unindented_line() -> None:
    lines = ["CMake Error at a.cmake:3 (message):", "  first", "", "  second", "-- next"]
    assert join_cmake(lines) == "CMake Error at a.cmake:3 (message): first second"


@pytest.mark.parametrize(
    ("raw", "gcc"),
    [
        (
            "x.cpp:1:10: fatal error: 'cuda.h' file not found",
            "x.cpp:1:10: fatal error: cuda.h: No such file or directory",
        ),
        ("error: use of undeclared identifier 'x'", "error: 'x' was not declared in this scope"),
        ("undefined reference to `bar'", "undefined reference to 'bar'"),
        ("‘x’  was   not", "'x' was not"),
    ],
)
def test_normalise_rewrites_to_gcc_wording(raw: str, gcc: str) -> None:
    assert normalise(raw) == gcc


def test_component_lookups() -> None:
    assert len({c.name for c in components()}) == len(components())
    assert all(c.source.startswith("https://") for c in components())
    assert by_header("ATen/ATen.h") is not None and by_header("ATen/ATen.h").name == "torch"
    assert by_symbol("cudaMalloc").name == "cuda"  # type: ignore[union-attr]
    assert by_symbol("cudnnCreate").name == "cudnn"  # type: ignore[union-attr]
    assert by_library("/usr/lib/libcudart.so.12").name == "cuda"  # type: ignore[union-attr]
    assert demangle("_ZN2at6TensorC1Ev") == "at::Tensor (_ZN2at6TensorC1Ev)"


def test_exit_codes(tmp_path: Path) -> None:
    crash = tmp_path / "crash.log"
    crash.write_text(NINJA + "Segmentation fault (core dumped)\n", encoding="utf-8")
    assert main(["doctor", str(crash)]) == EXIT_UNKNOWN  # diagnosed, not "no error"
    killed = tmp_path / "killed.log"
    killed.write_text(NINJA + CASES["killed"][0], encoding="utf-8")
    assert main(["doctor", str(killed)]) == EXIT_CAUSE
    clean = tmp_path / "clean.log"
    clean.write_text(NINJA, encoding="utf-8")
    assert main(["doctor", str(clean)]) == EXIT_OK


def test_a_rule_on_the_first_error_line_learns_its_component() -> None:
    # shared-lib-missing-at-import names no library; the structural reader knows whose it is
    log = (
        "from . import deform_conv_ext\n"
        "ImportError: libtorch_cpu.so: cannot open shared object file\n"
    )
    diagnosis = diagnose(log.splitlines())
    assert diagnosis.top is not None and not diagnosis.top.generic
    assert "torch" in diagnosis.top.tags


def test_a_windows_dll_that_cannot_load_names_the_redistributable() -> None:
    log = (
        "OSError: [WinError 126] The specified module could not be found. Error loading "
        '"C:\\venv\\Lib\\site-packages\\torch\\lib\\fbgemm.dll" or one of its dependencies.\n'
    )
    diagnosis = diagnose(log.splitlines())
    assert diagnosis.error is not None and diagnosis.error.library == "fbgemm.dll"
    assert diagnosis.generic is not None and {"windows", "msvc"} <= set(diagnosis.generic.tags)


def test_a_warning_that_reports_a_failed_native_load_is_an_error() -> None:
    log = (
        "torchvision/io/image.py:14: UserWarning: Failed to load image Python extension: "
        "'dlopen(image.so, 0x0006): Library not loaded: @rpath/libjpeg.9.dylib\n"
    )
    diagnosis = diagnose(log.splitlines())
    assert diagnosis.generic is not None and "libjpeg" in diagnosis.generic.tags


@pytest.mark.parametrize(
    ("line", "tool"),
    [
        ("command 'gcc' failed with exit status 1", "gcc"),
        ("Error: command 'gcc' failed with exit status 1", "gcc"),
        ("error: command 'x86_64-linux-gnu-gcc' failed with exit status 1", "x86_64-linux-gnu-gcc"),
        ("error: command 'clang' failed with exit status 1", "clang"),
        ("error: command u'/usr/local/cuda/bin/nvcc' failed with exit status 1", "nvcc"),
        ("error: command '/usr/local/cuda/bin/nvcc' failed with exit code 2", "nvcc"),
        ("error: command 'C:\\CUDA\\v11.8\\bin\\nvcc.exe' failed with exit code 1", "nvcc.exe"),
    ],
)
def test_a_lone_failed_command_line_gets_the_command_failed_diagnosis(line: str, tool: str) -> None:
    """setuptools' report of a failed compiler run, quoted alone (gcc, clang, nvcc forms): a
    finding that says the compiler's message is above it, never "no finding"."""
    diagnosis = diagnose([line])
    assert diagnosis.error is not None and diagnosis.error.kind == "command-failed"
    assert diagnosis.error.tool == tool
    assert diagnosis.top is not None and diagnosis.top.rule_id == "generic-command-failed"
    assert ("cuda" in diagnosis.top.tags) == tool.startswith("nvcc")


def test_a_compiler_error_above_the_failed_command_line_is_the_first_error() -> None:
    log = [
        "src/a.cpp:3:10: fatal error: foo.h: No such file or directory",
        "compilation terminated.",
        "error: command 'gcc' failed with exit status 1",
    ]
    assert diagnose(log).error.kind == "missing-header"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("line", "module"),
    [
        ("No module named 'torchvision.models.mobilenetv3", "torchvision.models.mobilenetv3"),
        ("ImportError: No module named yaml", "yaml"),
        ("ModuleNotFoundError: No module named 'ninja'", "ninja"),
    ],
)
def test_a_missing_module_is_read_with_or_without_its_class_and_quotes(
    line: str, module: str
) -> None:
    diagnosis = diagnose([line])
    assert diagnosis.error is not None and diagnosis.error.module == module
    assert diagnosis.findings
