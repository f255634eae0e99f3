"""Selectors over HostFacts: the H100 device's real probe result and small hand-made hosts."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchsmith.errors import HostError, UsageError
from torchsmith.host import (
    HostFacts,
    require_compiler,
    require_cuda,
    select_compiler,
    select_cuda,
    select_python,
    version_matches,
)
from torchsmith.host.model import Compiler, CudaToolkit

DEV = Path(__file__).resolve().parents[2] / "fixtures" / "device-h100"


@pytest.fixture
def device() -> HostFacts:
    """What `torchsmith host --json` said on the H100 machine."""
    return HostFacts.model_validate_json((DEV / "torchsmith-host.json").read_text())


def test_device_json_is_a_valid_host_facts(device: HostFacts) -> None:
    assert device.gpus[0].compute_capability == "9.0"
    assert device.driver_cuda == "13.0"
    assert device.cudnn_versions == ["9.14.0", "9.19.0"]
    assert device.warnings == []


@pytest.mark.parametrize(
    ("version", "spec", "expected"),
    [
        ("12.4", "12", True),
        ("12.4", "12.4", True),
        ("12.4", "12.1", False),
        ("12.4.1", "12.4", True),
        ("12.4", ">=12.1,<13", True),
        ("13.0", ">=12.1,<13", False),
        ("13.0", None, True),
        ("13.0", " ", True),
        ("3.12.3", "3.12", True),
        ("3.1.0", "3.12", False),
    ],
)
def test_version_matches(version: str, spec: str | None, expected: bool) -> None:
    assert version_matches(version, spec) is expected


def test_bad_version_spec_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="not a version"):
        version_matches("12.4", "~~12")


def test_select_cuda(device: HostFacts) -> None:
    found = select_cuda(device, "13.0")
    assert found is not None and found.root == "/usr/local/cuda-13.0"
    assert select_cuda(device) == found
    assert select_cuda(device, "12") is None


def test_select_cuda_keeps_priority_order() -> None:
    first = CudaToolkit(root="/opt/a", nvcc="/opt/a/bin/nvcc", version="12.4", origin="CUDA_HOME")
    second = CudaToolkit(root="/opt/b", nvcc="/opt/b/bin/nvcc", version="12.6", origin="PATH")
    host = HostFacts(cuda_toolkits=[first, second])
    assert select_cuda(host, "12") == first
    assert select_cuda(host, "12.6") == second


def test_require_cuda_names_what_is_there(device: HostFacts) -> None:
    expected = r"no CUDA toolkit 11.8 .*found: 13.0 \(/usr/local/cuda-13.0\)"
    with pytest.raises(HostError, match=expected):
        require_cuda(device, "11.8")


def _pick(host: HostFacts, family: str = "gcc", **limits: int) -> Compiler:
    found = select_compiler(host, family, **limits)  # type: ignore[arg-type]
    assert found is not None
    return found


def test_select_compiler_newest_under_a_limit(device: HostFacts) -> None:
    assert _pick(device).version == "13.3.0"
    assert _pick(device, max_major=12).version == "12.4.0"
    assert select_compiler(device, "gcc", max_major=11) is None
    assert _pick(device, "clang", max_major=20).cxx == "/usr/bin/clang++-16"
    assert _pick(device, min_major=13, max_major=13).cc == "/usr/bin/gcc"


def test_select_compiler_needs_cxx_unless_told() -> None:
    c_only = Compiler(family="gcc", version="11.4.0", cc="/usr/bin/gcc-11", cxx=None)
    host = HostFacts(compilers=[c_only])
    assert select_compiler(host, "gcc") is None
    assert select_compiler(host, "gcc", need_cxx=False) == c_only


def test_require_compiler_names_what_is_there(device: HostFacts) -> None:
    with pytest.raises(HostError, match=r"no gcc .* 9\.\.10 .*gcc-13 \(/usr/bin/gcc\)"):
        require_compiler(device, "gcc", max_major=10, min_major=9)
    assert require_compiler(device, "gcc", max_major=12).major == 12


def test_select_python(device: HostFacts) -> None:
    found = select_python(device, "3.12")
    assert found is not None and found.path == "/opt/torch/.venv/bin/python3"
    assert select_python(device, "3.11") is None


def test_device_without_nvml_read_the_same_gpu_from_nvidia_smi(device: HostFacts) -> None:
    """Recorded with pynvml hidden: the nvidia-smi fallback found the same GPU and driver."""
    smi = HostFacts.model_validate_json((DEV / "torchsmith-host-no-nvml.json").read_text())
    assert smi.warnings == ["nvidia-ml-py is not installed: GPUs read from nvidia-smi"]
    assert [(g.name, g.compute_capability, g.memory_mib) for g in smi.gpus] == [
        (g.name, g.compute_capability, g.memory_mib) for g in device.gpus
    ]
    assert (smi.driver_version, smi.driver_cuda) == (device.driver_version, device.driver_cuda)
