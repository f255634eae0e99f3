"""Rules added or widened for issue 25 before the round 17 freeze (from round 16, train data),
written per family rather than per log: each pattern fires on the wordings of its family that
other tools, OSes and languages print, and stays quiet on the near-miss lines beside it."""

from __future__ import annotations

import pytest

from tests.unit.doctor.rule_cases import fires_as_wanted, top_rule

CASES = [
    # torch.compile without a C/C++ compiler: inductor on Windows and Linux, triton's launcher
    ("torch._inductor.exc.InductorError: RuntimeError: Compiler: cl is not found.",
     "torch-compile-no-c-compiler"),
    ("RuntimeError: Failed to find C compiler. Please specify via CC environment variable.",
     "torch-compile-no-c-compiler"),
    ("InvalidCxxCompiler: No working C++ compiler found in torch._inductor.config.cpp.cxx: "
     "(None, 'g++')", "torch-compile-no-c-compiler"),
    ("'cl' is not recognized as an internal or external command,", "msvc-build-tools-missing"),
    ("'cl' 不是内部或外部命令，也不是可运行的程序", "msvc-build-tools-missing"),
    # torch.compile refusing the Python (torch 2.0, 2.1/2.2 wordings)
    ("RuntimeError: Python 3.11+ not yet supported for torch.compile",
     "torch-compile-python-unsupported"),
    ("RuntimeError: Dynamo is not supported on Python 3.12+", "torch-compile-python-unsupported"),
    # MPS on an old macOS
    ("RuntimeError: The MPS backend is supported on MacOS 12.3+.", "mps-needs-newer-macos"),
    ("MPS not available because the current MacOS version is not 12.3+ and/or you do not have "
     "an MPS-enabled device on this machine.", "mps-needs-newer-macos"),
    # cuDNN's major missing (Linux, Windows) vs a sub-library's dependency missing
    ("Error: Could not load library libcudnn_cnn_infer.so.8", "cudnn-major-missing"),
    ("Could not locate zlibwapi.dll. Please make sure it is in your library path!",
     "cudnn-major-missing"),
    ("Could not load library libcudnn_cnn_infer.so.8. Error: libnvrtc.so: cannot open shared "
     "object file: No such file or directory", "cudnn-sublibrary-dependency-missing"),
    # the driver too old, with or without the leading 'The'
    ("NVIDIA driver on your system is too old (found version 6000)....",
     "cuda-driver-insufficient"),
    ("AssertionError: The NVIDIA driver on your system is too old (found version 11040).",
     "cuda-driver-insufficient"),
    # two copies of a CUDA library mixed by the loader
    ("ImportError: /x/libcublas.so.11: symbol cublasLtHSHMatmulAlgoInit, version "
     "libcublasLt.so.11 not defined in file libcublasLt.so.11 with link time reference",
     "cuda-library-copies-mismatched"),
    ("OSError: /x/torch/lib/libcublas.so.11: undefined symbol: free_gemm_select, version "
     "libcublasLt.so.11", "cuda-library-copies-mismatched"),
    ("ImportError: /x/libcusparse.so.12: undefined symbol: __nvJitLinkAddData_12_1, version "
     "libnvJitLink.so.12", "nvjitlink-version-mismatch"),
    # NVML's library not found: nvidia-smi in a container, the container CLI, pynvml
    ("NVIDIA-SMI couldn't find libnvidia-ml.so library in your system.",
     "nvml-library-not-found"),
    ("nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot "
     "open shared object file: no such file or directory", "nvml-library-not-found"),
    ("pynvml.NVMLError_LibraryNotFound: NVML Shared Library Not Found", "nvml-library-not-found"),
    ("Failed to initialize NVML: Driver/library version mismatch", "nvml-driver-library-mismatch"),
    # BLAS/LAPACK rejecting arguments: MKL and the reference LAPACK/OpenBLAS wording
    ("Intel MKL ERROR: Parameter 10 was incorrect on entry to DSYRK.",
     "blas-parameter-incorrect-mixed-libraries"),
    (" ** On entry to DGEMM  parameter number  8 had an illegal value",
     "blas-parameter-incorrect-mixed-libraries"),
    # torch's own DLLs on Windows, any language, as typed
    ('OSError: [WinError 126] Das angegebene Modul wurde nicht gefunden. Error loading\n'
     '  "P:\\venv\\lib\\site-packages\\torch\\lib\\fbgemm.dll" or one of its dependencies.',
     "windows-torch-dll-dependency-missing"),
    ("Erro loading “xxx\\Lib\\site-packages\\torch\\lib\\fbgemm.dll” or one of its dependencies.",
     "windows-torch-dll-dependency-missing"),
    ('OSError: [WinError 1114] A dynamic link library (DLL) initialization routine failed. Error '
     'loading "C:\\x\\torch\\lib\\c10.dll" or one of its dependencies.', "windows-dll-init-failed"),
    # ctypes' wording: torch's own DLL vs an extension package's DLL
    ("FileNotFoundError: Could not find module 'C:\\x\\Lib\\site-packages\\torch\\lib\\c10.dll' "
     "(or one of its dependencies).", "windows-torch-dll-dependency-missing"),
    ("FileNotFoundError: Could not find module 'E:\\RF\\lib\\site-packages\\dgl\\dgl.dll' (or one "
     "of its dependencies). Try using the full path with constructor syntax.",
     "extension-dll-not-loadable-windows"),
    # two protobuf runtimes, or one .proto registered twice
    ("[libprotobuf FATAL google/protobuf/stubs/common.cc:61] This program requires version 3.4.0 "
     "of the Protocol Buffer runtime library, but the installed version is 2.6.1.",
     "protobuf-two-runtimes-loaded"),
    ("[libprotobuf ERROR google/protobuf/descriptor_database.cc:58] File already exists in "
     "database: onnx/onnx-ml.proto", "protobuf-two-runtimes-loaded"),
    ("TypeError: Couldn't build proto file into descriptor pool: duplicate file name "
     "(onnx/onnx-ml.proto)", "protobuf-two-runtimes-loaded"),
    # a full disk in every wording
    ("Error: write /var/lib/docker/tmp/GetImageBlob506439680: no space left on device",
     "disk-full"),
    ("OSError: [Errno 28] No space left on device", "disk-full"),
    ("OSError: [Errno 28] There is not enough space on the disk", "disk-full"),
    ("cc1plus: fatal error: x.o: 设备上没有空间", "disk-full"),
    # pip: a local wheel that is not there, a retired wheel URL, torch's triton pin
    ("ERROR: Could not install packages due to an OSError: [Errno 2] No such file or directory: "
     "'/src/torch-1.9.0+cu111-cp37-cp37m-linux_x86_64.whl'", "pip-local-wheel-missing"),
    ("WARNING: Requirement 'torch-1.9.0-cp37-none.whl' looks like a filename, but the file does "
     "not exist", "pip-local-wheel-missing"),
    ("ERROR: Could not install packages due to an OSError: [Errno 2] No such file or directory: "
     "'/x/site-packages/numpy/__init__.py'", "!pip-local-wheel-missing"),
    ("  HTTP error 403 while getting https://s3.amazonaws.com/pytorch/whl/torch-0.1.10.post2-cp27-"
     "none-macosx_10_7_x86_64.whl", "torch-wheel-url-gone"),
    ("ERROR: 403 Client Error: Forbidden for url: https://download.pytorch.org/whl/cu90/torch-1.0"
     ".0-cp36-cp36m-linux_x86_64.whl", "torch-wheel-url-gone"),
    ("torch 2.0.1 requires triton==2.0.0; platform_system == \"Linux\" and platform_machine == "
     "\"x86_64\", but you have triton 2.1.0 which is incompatible.",
     "torch-pinned-dependency-conflict"),
    ("torch 2.1.0 requires nvidia-cudnn-cu12==8.9.2.26, but you have nvidia-cudnn-cu12 9.1.0.70 "
     "which is incompatible.", "torch-pinned-dependency-conflict"),
    ("torchvision 0.15.2 requires triton==2.0.0, but you have triton 2.1.0 which is incompatible.",
     "!torch-pinned-dependency-conflict"),
    # a GPU whose compute capability the release dropped (old and newer warnings)
    ("    Found GPU0 GeForce GTX 960M which is of cuda capability 5.0.\n"
     "    PyTorch no longer supports this GPU because it is too old.", "gpu-arch-not-in-build"),
    ("Found GPU0 NVIDIA GeForce GTX 770 which is of cuda capability 3.0.\n    PyTorch no longer "
     "supports this GPU because it is too old.\n    The minimum cuda capability supported by "
     "this library is 3.7.", "gpu-arch-not-in-build"),
    # extension code or a toolkit another release serves
    ('    csrc/type_shim.h(13): error: class "at::Type" has no member "scalarType"',
     "extension-uses-removed-torch-api"),
    ("csrc/type_shim.h:13:24: error: 'const class at::DeprecatedTypeProperties' has no member "
     "named 'scalarType'", "extension-uses-removed-torch-api"),
    ('THCTensorTopK.cuh(122): error: identifier "__half_as_ushort" is undefined',
     "cuda-toolkit-lacks-half-intrinsics"),
    ('x.cu(12): error: identifier "__hadd" is undefined', "!cuda-toolkit-lacks-half-intrinsics"),
    # a companion imported from inside its own source checkout; a ROCm wheel without ROCm
    ("ModuleNotFoundError: No module named 'torchtext._torchtext'", "extension-c-module-not-built"),
    ("ModuleNotFoundError: No module named 'torchaudio._torchaudio'",
     "extension-c-module-not-built"),
    ("RuntimeError: Cuda extensions are being compiled with a version of Cuda that does not match "
     "the version used to compile Pytorch binaries.  Pytorch binaries were compiled with Cuda "
     "None.",
     "torch-not-compiled-with-cuda"),
    ("RuntimeError: Cuda extensions are being compiled with a version of Cuda that does not match "
     "the version used to compile Pytorch binaries.  Pytorch binaries were compiled with Cuda "
     "11.8.", "extension-cuda-version-mismatch"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "want"), CASES, ids=lambda v: v[:40])
def test_the_family_rule_fires_on_each_wording_and_not_on_the_near_miss(
    text: str, want: str
) -> None:
    assert fires_as_wanted(text, want), (text, want, top_rule(text))
