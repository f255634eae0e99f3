"""Rules and generic fixes added for issue 25 before the round 16 freeze (from round 15, train
data): each new pattern fires on its thread's wording and stays quiet on the near-miss lines
beside it (torch's own _C, torch's THC kernels, another conda error, another companion pin)."""

from __future__ import annotations

import pytest

from tests.unit.doctor.rule_cases import fires_as_wanted, top_rule
from torchsmith.doctor import diagnose

CASES = [
    ("    Did you run 'git submodule update --init'?", "submodule-missing-setup-check"),
    ("PackageNotFoundError: Packages missing in current channels:", "conda-packages-not-found"),
    ("UnsatisfiableError: The following specifications were found to be incompatible with each "
     "other:", "conda-solver-conflict"),
    ("ImportError: cannot import name 'nn' from 'torch' (unknown location)",
     "torch-not-installed"),
    ("ImportError: cannot import name 'nn' from 'torch' (/x/torch/__init__.py)",
     "!torch-not-installed"),
    ("x.cpp:224:9: error: ‘THFloatBlas_gemv’ was not declared in this scope",
     "extension-uses-removed-torch-api"),
    ("x.cpp:224:9: error: ‘cblas_sgemv’ was not declared in this scope",
     "!extension-uses-removed-torch-api"),
    ('src/d.cu(258): error: no suitable constructor exists to convert from "c10::ScalarType" to '
     '"at::Type"', "extension-needs-newer-torch-api"),
    ("fatal error: ATen/ceil_div.h: No such file or directory", "extension-needs-newer-torch-api"),
    ("ImportError: cannot import name '_C' from 'detectron2'", "extension-c-module-not-built"),
    ("ImportError: cannot import name '_C'", "extension-c-module-not-built"),
    ("ModuleNotFoundError: No module named 'maskrcnn_benchmark._C'",
     "extension-c-module-not-built"),
    ("ModuleNotFoundError: No module named 'torch._C'", "import-torch-from-source-checkout"),
    ("ImportError: cannot import name '_C' from 'torch' (/src/pytorch/torch/__init__.py)",
     "import-torch-from-source-checkout"),
    ('  C:\\VS\\Microsoft.CppCommon.targets(171,5): error MSB6006: "cmd.exe" exited with code 1.',
     "msbuild-nvcc-custom-build-failed"),
    ("THCudaCheck FAIL file=/x/cuda/emd_kernel.cu line=190 error=98 : invalid device function",
     "extension-kernel-not-for-this-gpu"),
    ("RuntimeError: cuda runtime error (98) : invalid device function at /pytorch/aten/src/THC/"
     "generic/THCTensorMath.cu:15", "no-kernel-image"),
    ("ImportError: cannot import name 'Field' from 'torchtext.data' (/x/torchtext/data/"
     "__init__.py)", "torchtext-legacy-api-moved"),
    ("ImportError: cannot import name 'Vocab' from 'torchtext.data'",
     "!torchtext-legacy-api-moved"),
    ("ERROR: Could not find a version that satisfies the requirement torchaudio==0.8.1 (from "
     "versions: 0.11.0, 0.12.0)", "no-matching-torch-distribution"),
    ("ERROR: Could not find a version that satisfies the requirement torchmetrics==0.8.1 (from "
     "versions: 0.11.0, 0.12.0)", "!no-matching-torch-distribution"),
    ("CMake Error: The following variables are used in this project, but they are set to "
     "NOTFOUND.", "link-cmake-notfound-library"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "want"), CASES, ids=lambda v: v[:40])
def test_the_rule_fires_on_its_wording_and_not_on_the_near_miss(text: str, want: str) -> None:
    assert fires_as_wanted(text, want), (text, want, top_rule(text))


@pytest.mark.parametrize(
    ("text", "kind", "says"),
    [
        ("RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you "
         "passed in a non-contiguous input.", "generic-python", "cudatoolkit"),
        ("RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR", "generic-python",
         "Free GPU memory"),
        ("RuntimeError: Error compiling objects for extension", "generic-python",
         "port to the installed torch"),
        ('File "build/bdist.linux-x86_64/egg/torchaudio/transforms.py", line 166, in SPECTROGRAM\n'
         "pad=0, window=torch.hann_window, wkwargs=None):\n"
         "AttributeError: 'module' object has no attribute 'hann_window'",
         # no rule matches; the nearest known case is round 11b's log of this thread
         "torchaudio-needs-newer-torch", "pairs with the installed torch"),
        ('  File "/x/site-packages/torchaudio/_extension.py", line 73, in _init_ffmpeg\n'
         "ImportError: FFmpeg libraries are not found. Please install FFmpeg.", "generic-python",
         "inside the package torchaudio"),
        ("[2/1073] Building CXX object third_party/ideep/mkl-dnn/src/CMakeFiles/mkldnn.dir/"
         "common/utils.cpp.o\nFAILED: third_party/ideep/mkl-dnn/src/CMakeFiles/mkldnn.dir/"
         "common/utils.cpp.o",
         "generic-ninja", "-Werror"),
        ("ModuleNotFoundError: No module named 'functorch'", "generic-import-module",
         "restart the kernel/runtime"),
    ],
)  # fmt: skip
def test_the_generic_fix_names_the_usual_answer(text: str, kind: str, says: str) -> None:
    top = diagnose(text.split("\n")).top
    assert top is not None and top.rule_id == kind
    assert says in top.fix


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("Usage : /w/.build/sleef/bin/mkalias <vector width> <vector FP type>", "FreeBSD"),
        ("UnsatisfiableError: The following specifications were found to be incompatible with "
         "each other:", "pytorch3d"),
        ("PackageNotFoundError: Packages missing in current channels:", "ppc64le"),
    ],
)  # fmt: skip
def test_the_rule_fix_names_the_threads_answer(text: str, want: str) -> None:
    top = diagnose(text.split("\n")).top
    assert top is not None and want in top.fix
