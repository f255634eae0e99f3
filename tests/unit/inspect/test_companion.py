"""Companion wheels under `torchsmith inspect` and the build's binary checks (issue 11, part 3).
Symbols are real: the old-ABI one from torchvision 0.21.0 built against PyPI's torch 2.6.0
(`_C.so`), the new-ABI one from libc10.so of Debian's 1.13.1 built with GCC 12; the recorded
inspection is `torchsmith inspect --json` of that torchvision wheel."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from torchsmith.companions.binary import check_binaries, expected_code
from torchsmith.companions.torchsource import of_wheel
from torchsmith.errors import VerifyError
from torchsmith.inspect.companion import CompanionInspection, abi_of, is_companion
from torchsmith.inspect.model import GpuCode

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "companions"
OLD = "_ZN3c106detail14torchCheckFailEPKcS2_jRKSs"
NEW = "_ZN3c106detail14torchCheckFailEPKcS2_jRKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"
PLAIN = "_ZN2at4_ops10mul_Tensor4callERKNS_6TensorES4_"


def recorded() -> CompanionInspection:
    text = (FIXTURE / "inspect-torchvision-0.21.0-cpu.json").read_text()
    return CompanionInspection.model_validate_json(text)


def torch_wheel(tmp_path: Path, libs: tuple[str, ...] = ("libc10.so", "libtorch_cpu.so")) -> Path:
    wheel = tmp_path / "torch-2.6.0-cp311-cp311-manylinux1_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for lib in libs:
            zf.writestr(f"torch/lib/{lib}", b"")
    return wheel


def torch_libs(
    tmp_path: Path, libs: tuple[str, ...] = ("libc10.so", "libtorch_cpu.so")
) -> frozenset[str]:
    return of_wheel(torch_wheel(tmp_path, libs), "python3").libs


def test_the_abi_is_read_from_the_mangled_torch_symbols() -> None:
    assert abi_of(frozenset({OLD, PLAIN}))[0] is False
    assert abi_of(frozenset({NEW, PLAIN}))[0] is True
    assert abi_of(frozenset({PLAIN, "_ZNSt6vectorIiSaIiEE9push_backERKi"}))[0] is None


def test_only_companion_wheel_names_take_the_companion_route() -> None:
    assert is_companion(Path("torchvision-0.21.0-cp311-cp311-linux_x86_64.whl"))
    assert not is_companion(Path("torch-2.6.0-cp311-cp311-manylinux1_x86_64.whl"))
    assert not is_companion(Path("notawheel.txt"))


def test_the_recorded_torchvision_links_torch_with_the_old_abi(tmp_path: Path) -> None:
    insp = recorded()
    assert insp.requires_torch == ["torch==2.6.0"] and insp.cxx11_abi is False
    record = check_binaries(insp, torch_libs(tmp_path), False, "")
    assert record["links"] == ["libc10.so", "libtorch_cpu.so"]


def test_a_companion_with_the_other_abi_is_refused(tmp_path: Path) -> None:
    with pytest.raises(VerifyError, match="_GLIBCXX_USE_CXX11_ABI=0, its torch 1"):
        check_binaries(recorded(), torch_libs(tmp_path), True, "")


def test_a_companion_linking_a_library_its_torch_lacks_is_refused(tmp_path: Path) -> None:
    with pytest.raises(VerifyError, match=r"libtorch_cpu\.so, which its torch does not ship"):
        check_binaries(recorded(), torch_libs(tmp_path, ("libc10.so",)), False, "")


def test_the_gpu_code_must_be_exactly_the_plans_archs(tmp_path: Path) -> None:
    assert expected_code("8.6;9.0+PTX") == (["sm_86", "sm_90"], ["compute_90"])
    with pytest.raises(VerifyError, match="SASS none / PTX none"):
        check_binaries(recorded(), torch_libs(tmp_path), False, "8.6;9.0")
    gpu = GpuCode(
        containers=1,
        sass=["sm_86"],
        ptx=[],
        extra=[],
        archs=[],
        fatbin_bytes=1,
        relocatable_bytes=0,
    )
    mods = [m.model_copy(update={"gpu": gpu}) for m in recorded().modules]
    cuda = recorded().model_copy(update={"modules": mods, "sass": ["sm_86"]})
    with pytest.raises(VerifyError, match="means SASS \\['sm_86', 'sm_90'\\]"):
        check_binaries(cuda, torch_libs(tmp_path), False, "8.6;9.0")
    assert check_binaries(cuda, torch_libs(tmp_path), False, "8.6")["gpu"]["sass"] == ["sm_86"]
    with pytest.raises(VerifyError, match="planned CPU-only"):
        check_binaries(cuda, torch_libs(tmp_path), False, "")


def cuda_recorded(name: str) -> CompanionInspection:
    text = (FIXTURE / f"inspect-{name}-cu124-sm86-sm90.json").read_text()
    return CompanionInspection.model_validate_json(text)


def test_the_recorded_cuda_companions_hold_exactly_sm86_and_sm90(tmp_path: Path) -> None:
    libs = ("libc10.so", "libc10_cuda.so", "libtorch.so", "libtorch_cpu.so", "libtorch_cuda.so")
    for name in ("torchvision-0.21.0", "torchaudio-2.6.0"):
        insp = cuda_recorded(name)
        record = check_binaries(insp, torch_libs(tmp_path, libs), False, "8.6;9.0")
        assert record["gpu"] == {"sass": ["sm_86", "sm_90"], "ptx": []}
        with pytest.raises(VerifyError, match=r"TORCH_CUDA_ARCH_LIST '9\.0'"):
            check_binaries(insp, torch_libs(tmp_path, libs), False, "9.0")


def test_a_companions_own_library_is_not_taken_for_torchs() -> None:
    audio = cuda_recorded("torchaudio-2.6.0")
    [ext] = [m for m in audio.modules if m.path == "torchaudio/lib/_torchaudio.so"]
    assert "libtorchaudio.so" in ext.needed and "libtorchaudio.so" not in ext.torch_libs
