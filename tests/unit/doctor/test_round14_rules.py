"""Rules and generic fixes added for issue 25 before the round 14 freeze (from rounds 12 and 13,
train data): each new pattern fires on its thread's wording and stays quiet on the near-miss
lines beside it (another module, a PyTorch-index local version, libc++'s symbols, gcc's header
wording, a dtype mismatch)."""

from __future__ import annotations

import pytest

from torchsmith.doctor import diagnose
from torchsmith.doctor.components import message_facts
from torchsmith.doctor.generic_parts import libstdcxx_gcc, pip_failure
from torchsmith.doctor.models import TypedError

CASES = [
    ("ModuleNotFoundError: No module named 'torch'", "torch-not-installed"),
    ("No module named torch", "torch-not-installed"),
    ("ModuleNotFoundError: No module named 'torchvision'", "!torch-not-installed"),
    ("ModuleNotFoundError: No module named 'torch._C'", "!torch-not-installed"),
    ("  Getting requirements to build wheel ... error", "pip-build-isolation-no-torch"),
    ("  × Getting requirements to build editable did not run successfully.",
     "pip-build-isolation-no-torch"),
    ("  Getting requirements to build wheel ... done", "!pip-build-isolation-no-torch"),
    ("Because torchvision (0.4.0) depends on torch (1.2.0)", "companion-requires-other-torch"),
    ("Because pandas (2.0.0) depends on numpy (1.2.0)", "!companion-requires-other-torch"),
    ('RuntimeError: Backend "soundfile" is not one of available backends: [\'sox\'].',
     "torchaudio-no-audio-backend"),
    ("ERROR: No matching distribution found for torchaudio==0.8.0a0+a751e1d",
     "local-version-pin-not-on-index"),
    ("ERROR: No matching distribution found for torch==1.5.1+cpu",
     "no-matching-torch-distribution"),
    ("ERROR: No matching distribution found for torch==2.1.0+cu118",
     "no-matching-torch-distribution"),
    ("ImportError: dlopen(/x/_C.so, 10): Symbol not found: __ZNSs4_Rep20_S_empty_rep_storageE",
     "macos-gcc-libstdcxx-symbol"),
    ("ImportError: dlopen(/x/_C.so, 2): Symbol not found: __ZNSt3__112basic_stringIcEE",
     "!macos-gcc-libstdcxx-symbol"),
    ("x.cpp:4:10: fatal error: 'unordered_map' file not", "clang-cxx-stdlib-headers-missing"),
    ("fatal error: 'atomic' file not found", "clang-cxx-stdlib-headers-missing"),
    ("fatal error: 'omp.h' file not found", "!clang-cxx-stdlib-headers-missing"),
    ("fatal error: atomic: No such file or directory", "!clang-cxx-stdlib-headers-missing"),
    ("RuntimeError: expected backend CUDA and dtype Float but got backend CPU and dtype Float.",
     "fact:tensors-on-different-devices"),
    ("RuntimeError: Expected object of device type cuda but got device type cpu for argument",
     "fact:tensors-on-different-devices"),
    ("RuntimeError: Input type (torch.cuda.HalfTensor) and weight type (torch.cuda.FloatTensor)"
     " should be the same", "!fact:tensors-on-different-devices"),
    ('  File "/env/site-packages/torchvision/ops/boxes.py", line 2, in <module>\n'
     "    from torchvision import _C\n"
     "ImportError: libcudart.so.9.0: cannot open shared object file: No such file or directory",
     "torchvision-torch-mismatch"),
]  # fmt: skip


def _top(text: str) -> str:
    """The top finding's rule id, or 'fact:<id>' for a generic one carrying a message fact."""
    top = diagnose(text.split("\n")).top
    if top is None:
        return "none"
    facts = {f.title: f.id for f, _ in message_facts()}
    return f"fact:{facts[top.title]}" if top.generic and top.title in facts else top.rule_id


@pytest.mark.parametrize(("text", "want"), CASES, ids=lambda v: v[:40] if "\n" not in v else "tb")
def test_the_rule_fires_on_its_wording_and_not_on_the_near_miss(text: str, want: str) -> None:
    got = _top(text)
    assert got != want[1:] if want.startswith("!") else got == want


@pytest.mark.parametrize(
    ("symbol", "gcc"),
    [("GLIBCXX_3.4.30", "12.1.0"), ("GLIBCXX_3.4.21", "5.1.0"), ("GLIBCXX_3.4.99", None),
     ("GLIBC_2.28", None), ("CXXABI_1.3.13", None)],
)  # fmt: skip
def test_the_generic_libstdcxx_fix_names_the_gcc_that_has_the_symbol(
    symbol: str, gcc: str | None
) -> None:
    assert libstdcxx_gcc(symbol) == gcc


@pytest.mark.parametrize(
    ("message", "names"),
    [("Failed to build ext_cuda", "--no-build-isolation ext_cuda"),
     ("ERROR: No matching distribution found for torchvision==0.99", "download.pytorch.org"),
     ("ERROR: No matching distribution found for flask==9", "pip index versions flask"),
     ("ERROR: pip's resolver gave up", "pip index versions NAME")],
)  # fmt: skip
def test_the_generic_pip_fix_names_the_package(message: str, names: str) -> None:
    assert names in pip_failure(TypedError(kind="pip", message=message, line=1))["fix"]
