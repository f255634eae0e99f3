"""Rules and generic fixes added for issue 25 before the round 15 freeze (from round 14, train
data): each new pattern fires on its thread's wording and stays quiet on the near-miss lines
beside it (typing's own names, ccache's Permission denied, a project's own extension with the
old std::string ABI, a non-torch symbol, torch._C, another header, pip's real torch versions)."""

from __future__ import annotations

import pytest

from tests.unit.doctor.rule_cases import fires_as_wanted, top_rule
from torchsmith.doctor import diagnose

SPARSE = "/env/lib/python3.8/site-packages/torch_sparse/_version_cpu.so"
CASES = [
    ("ImportError: cannot import name 'TypeIs' from 'typing_extensions' (/usr/lib/python3/"
     "dist-packages/typing_extensions.py)", "typing-extensions-too-old"),
    ("ImportError: cannot import name 'ParamSpec' from 'typing_extensions'",
     "typing-extensions-too-old"),
    ("ImportError: cannot import name 'TypeIs' from 'typing' (/usr/lib/python3.10/typing.py)",
     "!typing-extensions-too-old"),
    ("error: could not create 'build/lib.linux-x86_64-3.6': Permission denied",
     "build-dir-permission-denied"),
    ("ccache: error: Failed to create temporary file for /x/.ccache/tmp/a.stdout: Permission "
     "denied", "ccache-permission-denied"),
    (f"OSError: {SPARSE}: undefined symbol: _ZN5torch3jit17parseSchemaOrNameERKSs",
     "companion-built-against-other-torch"),
    ("OSError: /usr/lib/python3.6/dist-packages/torchtext/_torchtext.so: undefined symbol: "
     "_ZN5torch3jit6MethodclESt6vectorIN3c106IValueESaIS4_EE",
     "companion-built-against-other-torch"),
    ("ImportError: /home/a/DCNv2/_ext.cpython-36m-x86_64-linux-gnu.so: undefined symbol: "
     "_ZN3c105ErrorC1ENS_14SourceLocationERKSs", "cxx11-abi-mismatch"),
    ("undefined symbol: _ZTVN5torch3jit6MethodE", "extension-built-against-other-torch"),
    ("undefined symbol: cudaLaunchKernelExC", "!extension-built-against-other-torch"),
    ("    ModuleNotFoundError: No module named 'torch.__config__'", "torch-too-old-for-code"),
    ("ModuleNotFoundError: No module named 'torch._dynamo'", "torch-too-old-for-code"),
    ("ModuleNotFoundError: No module named 'torch._C'", "!torch-too-old-for-code"),
    ("ModuleNotFoundError: No module named 'torch._six'", "torch-private-module-removed"),
    ("ModuleNotFoundError: No module named 'torch.fxy'", "!torch-too-old-for-code"),
    ("D:\\p\\nms.cu(5): fatal error C1083: 无法打开包括文件: “THC/THC.h”: No such file or "
     "directory", "extension-uses-removed-torch-api"),
    ("x.cu(5): fatal error C1083: Cannot open include file: 'cuda_fp16.h': No such file or "
     "directory", "!extension-uses-removed-torch-api"),
    ("/opt/rocm/lib/llvm/lib/clang/17/include/cuda_wrappers/cmath:27:15: fatal error: 'cmath' "
     "file not found", "clang-cxx-stdlib-headers-missing"),
    ("x.cpp:1:10: fatal error: 'cuda.h' file not found", "!clang-cxx-stdlib-headers-missing"),
    ("NCCL Error 1: unhandled cuda error", "nccl-unhandled-system-error"),
    ("x.cpp:9:58: error: conversion from ‘torch::jit::script::Module’ to non-scalar type "
     "‘std::shared_ptr<torch::jit::script::Module>’ requested", "libtorch-jit-load-returns-module"),
    ("error: no matching function for call to ‘std::shared_ptr<Foo>::shared_ptr(Foo)’",
     "!libtorch-jit-load-returns-module"),
    ("ERROR: Could not find a version that satisfies the requirement torch-tensorrt==1.2.0 (from "
     "versions: 0.0.0, 0.0.0.post1)", "pypi-placeholder-wheels-elsewhere"),
    ("ERROR: Could not find a version that satisfies the requirement torch==1.4.0 (from "
     "versions: 1.7.0, 1.8.0)", "no-matching-torch-distribution"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "want"), CASES, ids=lambda v: v[:40])
def test_the_rule_fires_on_its_wording_and_not_on_the_near_miss(text: str, want: str) -> None:
    assert fires_as_wanted(text, want), (text, want, top_rule(text))


@pytest.mark.parametrize(
    ("text", "kind", "says"),
    [
        ('Command "python setup.py egg_info" failed with error code 1 in /tmp/pip-install-x/p/',
         "generic-command-failed", "build-essential"),
        ("ModuleNotFoundError: No module named 'lightening'", "generic-import-module",
         "misspelt"),
        ("ModuleNotFoundError: No module named 'detectron2.layers.wrappers'",
         "generic-import-module", "release the code requires"),
        ("ImportError: /x/libfoo.so: undefined symbol: foo_bar_baz", "generic-import-symbol",
         "rebuild"),
        ("x.cu(5): fatal error C1083: 无法打开包括文件: “cudnn.h”: No such file or directory",
         "generic-missing-header", "cuDNN"),
    ],
)  # fmt: skip
def test_the_generic_fix_names_the_usual_answer(text: str, kind: str, says: str) -> None:
    top = diagnose(text.split("\n")).top
    assert top is not None and top.rule_id == kind
    assert says in top.fix
