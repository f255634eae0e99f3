"""What was added for issue 25 before the round 19 freeze (rounds 1-18 are train data), aimed at
classes rather than single logs: a rule's fix can lead with the case the log names
(``Rule.fix_when``: the GPU's generation next to ``no kernel image``, apex, flash-attn, Triton,
conda's cudatoolkit, the Microsoft Store Python, a host without an NVIDIA GPU), fixes list their
alternatives in the order the train threads were answered, every installer's resolver conflict
has a finding (conda's ``Package X conflicts for:`` block, mamba, uv, poetry, pip), and round 18's
missed families are read in the wordings the train data holds (pip's errno-only OSError, MSVC's
STL1002, the NVIDIA container runtime's driver check, a CUDA 12 driver API missing, uv's platform
hint, a package's compiled module missing, LibTorch linked by hand, a long Windows path)."""

from __future__ import annotations

import time

import pytest

from tests.unit.doctor.rule_cases import top_rule
from torchsmith.doctor import diagnose
from torchsmith.doctor.fixwhen import fix_for
from torchsmith.doctor.linear import MAX_LINE
from torchsmith.doctor.ruledb import FixWhen, load_rules, rule_by_id

RULE_CASES = [
    # every installer's resolver conflict (conda, mamba, pip, uv, poetry)
    ("**Package cudatoolkit conflicts for:", "conda-solver-conflict"),
    ("Package python conflicts for:", "conda-solver-conflict"),
    ("Found conflicts! Looking for incompatible packages.", "conda-solver-conflict"),
    ("error    libmamba Could not solve for environment specs", "conda-solver-conflict"),
    ("    The following packages are incompatible", "conda-solver-conflict"),
    ("  - nothing provides cudatoolkit 11.8 needed by pytorch-2.0.0", "conda-solver-conflict"),
    (
        "ERROR: Cannot install unsloth because these package versions have conflicting "
        "dependencies.",
        "resolver-pins-conflict",
    ),
    ("  × No solution found when resolving dependencies:", "resolver-pins-conflict"),
    ("  SolverProblemError", "resolver-pins-conflict"),
    # known families in the wordings of round 18's misses
    ("ERROR: Could not install packages due to an OSError: [Errno 28]", "disk-full"),
    (
        "stderr: nvidia-container-cli: requirement error: unsatisfied condition: cuda>=10.0",
        "cuda-driver-insufficient",
    ),
    (
        "ImportError: /h/.triton/cache/c6/cuda_utils.so: undefined symbol: cuTensorMapEncodeTiled",
        "cuda-driver-insufficient",
    ),
    (
        'error: static assertion failed with "error STL1002: Unexpected compiler version, expected '
        'CUDA 12.4 or newer."',
        "nvcc-msvc-version-unsupported",
    ),
    (
        "LlamaForCausalLM requires the PyTorch library but it was not found in your environment.",
        "torch-not-installed",
    ),
    (
        "error: Distribution `torch==2.7.0+cu126 @ registry+https://download.pytorch.org/whl/"
        "cu126` "
        "can't be installed because it doesn't have a source distribution or wheel for the current "
        "platform",
        "no-matching-torch-distribution",
    ),
    (' "CMake Error at cmake/public/cuda.cmake:123 (file):', "cudnn-target-missing"),
    (
        "ModuleNotFoundError: No module named 'fused_layer_norm_cuda'",
        "extension-c-module-not-built",
    ),
    ("ModuleNotFoundError: No module named 'amp_C'", "extension-c-module-not-built"),
    ("ModuleNotFoundError: No module named 'deform_conv_cuda'", "extension-c-module-not-built"),
    (
        "`torchvision.set_video_backend('video_reader')` prints `video_reader video backend is not "
        "available. Please compile torchvision from source and try again`.",
        "warn-torchvision-video-disabled",
    ),
    (
        "ERROR: Could not install packages due to an EnvironmentError: [Errno 2] No such file or "
        "directory: 'C:\\\\Users\\\\u\\\\AppData\\\\Local\\\\Packages\\\\PythonSoftwareFoundation."
        "Python.3.7_qbz5n2kfra8p0\\\\LocalCache\\\\local-packages\\\\Python37\\\\site-packages\\\\"
        "caffe2\\\\python\\\\serialized_test\\\\data\\\\operator_test\\\\x.zip'",
        "windows-path-too-long",
    ),
    ("OSError: [WinError 206] The filename or extension is too long", "windows-path-too-long"),
    (
        "main.cpp:(.text+0x5a): undefined reference to torch::jit::load(std::__cxx11::basic_string"
        "<char> const&)'",
        "libtorch-link-missing-libraries",
    ),
    (
        "/usr/include/thrust/system/cuda/detail/guarded_cuda_runtime_api.h:38:10: fatal error: "
        "'cuda_runtime_api.h' file not found",
        "rocm-build-cuda-thrust-headers",
    ),
    (
        "/x/site-packages/[flash_attn_2_cuda.cpython-39-x86_64-linux-gnu.so](http://flash_attn_2_cuda"
        ".cpython-39-x86_64-linux-gnu.so/): undefined symbol: "
        "_ZN2at4_ops9_pad_enum4callERKNS_6TensorE",
        "extension-built-against-other-torch",
    ),
]


@pytest.mark.parametrize(("text", "rule"), RULE_CASES)
def test_rule_families(text: str, rule: str) -> None:
    assert top_rule(text) == rule


def test_a_torch_library_of_its_own_build_is_not_a_hand_linked_program() -> None:
    """An undefined reference from libtorch_cpu.so itself is torch's build (round 17's
    pytorch#151680, an upstream bug), not a program that forgot -ltorch_cpu."""
    line = (
        "/usr/bin/ld: /w/pytorch/build/lib/libtorch_cpu.so: undefined reference to "
        "`at::native::blas_impl::fp16_gemv_notrans(int, int, float, c10::Half const*)'"
    )
    assert top_rule(line) != "libtorch-link-missing-libraries"


def _fix(lines: list[str]) -> str:
    top = diagnose(lines).top
    assert top is not None
    return top.fix


# (log lines, the rule expected on top, how its fix must start)
FIX_CASES = [
    (
        [
            "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the "
            "current "
            "PyTorch installation.",
            "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_86.",
        ],
        "gpu-arch-not-in-build",
        "This GPU is newer than",
    ),
    (
        [
            "NVIDIA GeForce GTX 1080 Ti with CUDA capability sm_61 is not compatible with the "
            "current "
            "PyTorch installation.",
            "The current PyTorch install supports CUDA capabilities sm_70 sm_75 sm_86 sm_120.",
        ],
        "gpu-arch-not-in-build",
        "This GPU is older than",
    ),
    (
        [
            "NVIDIA RTX A6000 with CUDA capability sm_86 is not compatible with the current "
            "PyTorch "
            "installation.",
            "The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70.",
        ],
        "gpu-arch-not-in-build",
        "An Ampere/Ada/Hopper GPU",
    ),
    # no GPU named: the general fix, the wheel first (most train threads' answer), source second
    (
        [
            "torch.AcceleratorError: CUDA error: no kernel image is available for execution on the "
            "device"
        ],
        "no-kernel-image",
        "Install a torch build whose CUDA architectures",
    ),
    (
        [
            "ImportError: /x/site-packages/fused_layer_norm_cuda.cpython-310-x86_64-linux-gnu.so: "
            "undefined symbol: _ZN3c104cuda9SetDeviceEi"
        ],
        "extension-built-against-other-torch",
        "The extension is NVIDIA apex",
    ),
    (
        ["ModuleNotFoundError: No module named 'fused_layer_norm_cuda'"],
        "extension-c-module-not-built",
        "NVIDIA apex is installed without",
    ),
    (
        ["/usr/bin/ld: cannot find -lcuda", '  File "/x/triton/runtime/build.py", line 103'],
        "link-cannot-find-libcuda",
        "Triton's JIT",
    ),
    (
        [
            "Package cudatoolkit conflicts for:",
            "pytorch -> cudatoolkit[version='>=10.1,<10.2']",
            "cudatoolkit=10.0",
        ],
        "conda-solver-conflict",
        "The conflict involves cudatoolkit",
    ),
    (
        [
            "ImportError: DLL load failed: The specified module could not be found.",
            '  File "C:\\Users\\u\\AppData\\Local\\Packages\\'
            "PythonSoftwareFoundation.Python.3.8_qbz5n"
            '\\LocalCache\\local-packages\\Python38\\site-packages\\torch\\__init__.py", line 81',
        ],
        "windows-dll-load-failed",
        "This is the Microsoft Store Python",
    ),
    (
        [
            "UserWarning: User provided device_type of 'cuda', but CUDA is not available. "
            "Disabling",
            "AMD Radeon RX 6800 XT",
        ],
        "cuda-not-available",
        "CUDA needs an NVIDIA GPU and this machine",
    ),
]


@pytest.mark.parametrize(("lines", "rule", "start"), FIX_CASES)
def test_the_case_the_log_names_leads_the_fix(lines: list[str], rule: str, start: str) -> None:
    top = diagnose(lines).top
    assert top is not None and top.rule_id == rule
    assert top.fix.startswith(start), top.fix
    named = start != rule_by_id(rule).fix[: len(start)]
    assert ("Otherwise:" in top.fix) == named


def test_without_a_case_the_rules_own_fix_stands() -> None:
    rule = rule_by_id("docker-gpu-runtime-missing")
    assert (
        fix_for(
            rule,
            [
                "docker: Error response from daemon: could not select device driver "
                '"" with capabilities: [[gpu]].'
            ],
        )
        == rule.fix
    )


def test_a_host_without_an_nvidia_gpu_leads_the_docker_fix() -> None:
    fix = _fix(
        [
            'docker: Error response from daemon: could not select device driver "" with '
            "capabilities: [[gpu]].",
            "Graphics: Intel Iris Xe Graphics",
        ]
    )
    assert fix.startswith("The log shows a host without an NVIDIA GPU")


def test_a_backtracking_fix_when_is_refused() -> None:
    with pytest.raises(ValueError, match="not linear-time"):
        FixWhen.model_validate({"match": r"(a)\1", "fix": "f"})


def test_every_fix_when_is_fast_on_hostile_lines() -> None:
    hostile = [
        "sm_" * (MAX_LINE // 3),
        "capability " * (MAX_LINE // 11),
        "a" * (1 << 20),
        "Tesla " * (MAX_LINE // 6),
        "\\WindowsApps\\" * (MAX_LINE // 13),
    ]
    start = time.process_time()
    for rule in load_rules():
        if rule.fix_when:
            fix_for(rule, hostile)
    assert time.process_time() - start < 1.0


def test_clean_output_still_gives_no_finding() -> None:
    clean = [
        "Collecting torch",
        "  Downloading torch-2.4.0-cp311-none-manylinux1_x86_64.whl",
        "Successfully installed torch-2.4.0",
        "-- Looking for pthread.h - found",
        "[3/9] Building CXX object a.o",
        "Resolved 12 packages in 1.2s",
    ]
    assert diagnose(clean).top is None
