"""GPU/driver parsers and the NVML → nvidia-smi fallback chain, on output recorded on a real
H100 machine (tests/fixtures/device-h100)."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from torchsmith.host import gpus, parse_gpu
from torchsmith.host._run import ProbeError
from torchsmith.host.parse_gpu import GpuReport, RawGpu
from torchsmith.proc import HOST

DEV = Path(__file__).resolve().parents[2] / "fixtures" / "device-h100"
H100 = "NVIDIA H100 80GB HBM3"
UUID = "GPU-14977987-e5be-2c42-1276-657734ddd8aa"


def fixture(name: str) -> str:
    return (DEV / name).read_text()


def test_nvml_snapshot() -> None:
    snap = json.loads(fixture("nvml-dump.json"))["snapshot"]
    report = parse_gpu.parse_nvml_snapshot(snap)
    assert report.gpus == (RawGpu(0, H100, "9.0", 81559, UUID),)
    assert (report.driver_version, report.driver_cuda) == ("580.159.04", "13.0")


def test_nvml_snapshot_agrees_with_the_raw_calls() -> None:
    dump = json.loads(fixture("nvml-dump.json"))
    raw_dev = dump["raw"]["devices"][0]
    snap_gpu = dump["snapshot"]["gpus"][0]
    assert raw_dev["nvmlDeviceGetCudaComputeCapability"] == snap_gpu["compute_capability"]
    assert raw_dev["nvmlDeviceGetMemoryInfo"]["total"] == snap_gpu["memory_total_bytes"]
    assert dump["raw"]["nvmlSystemGetCudaDriverVersion"] == 13000


@pytest.mark.parametrize(("value", "text"), [(13000, "13.0"), (12040, "12.4"), (11080, "11.8")])
def test_cuda_from_int(value: int, text: str) -> None:
    assert parse_gpu.cuda_from_int(value) == text


def test_smi_csv() -> None:
    report = parse_gpu.parse_smi_csv(fixture("nvidia-smi-query-gpu.csv"))
    assert report.gpus == (RawGpu(0, H100, "9.0", 81559, UUID),)
    assert report.driver_version == "580.159.04"
    assert report.driver_cuda is None  # the csv does not say; the plain table does


def test_smi_csv_of_nothing() -> None:
    assert parse_gpu.parse_smi_csv("") == GpuReport()


def test_smi_plain_table_header() -> None:
    report = parse_gpu.parse_smi_header(fixture("nvidia-smi.txt"))
    assert (report.driver_version, report.driver_cuda) == ("580.159.04", "13.0")


def test_smi_q() -> None:
    report = parse_gpu.parse_smi_q(fixture("nvidia-smi-q.txt"))
    # -q gives no compute capability: the probe looks the name up in the knowledge base.
    assert report.gpus == (RawGpu(0, H100, None, 81559, UUID),)
    assert (report.driver_version, report.driver_cuda) == ("580.159.04", "13.0")


def test_every_source_agrees() -> None:
    nvml = parse_gpu.parse_nvml_snapshot(json.loads(fixture("nvml-dump.json"))["snapshot"])
    csv = parse_gpu.parse_smi_csv(fixture("nvidia-smi-query-gpu.csv"))
    smi_q = parse_gpu.parse_smi_q(fixture("nvidia-smi-q.txt"))
    assert nvml.gpus[0].name == csv.gpus[0].name == smi_q.gpus[0].name
    assert nvml.gpus[0].memory_mib == csv.gpus[0].memory_mib == smi_q.gpus[0].memory_mib


def test_unknown_compute_capability_is_a_warning() -> None:
    report = GpuReport(gpus=(RawGpu(0, "Some Future GPU 9000", None),))
    infos, warnings = gpus.to_gpu_infos(report)
    assert infos == []
    assert len(warnings) == 1
    assert warnings[0].startswith("GPU 0 (Some Future GPU 9000): compute capability unknown")


class _FakeSmi:
    """Answers nvidia-smi queries with the recorded H100 output."""

    def __init__(self, fail_query_gpu: bool = False) -> None:
        self.fail_query_gpu = fail_query_gpu
        self.calls: list[list[str]] = []

    def __call__(
        self, argv: Sequence[Any], env: Mapping[str, str], runner: object, timeout: float = 10
    ) -> str:
        args = [str(a) for a in argv]
        self.calls.append(args)
        if args[1:] == ["-q"]:
            return fixture("nvidia-smi-q.txt")
        if len(args) == 1:
            return fixture("nvidia-smi.txt")
        if self.fail_query_gpu:
            raise ProbeError("nvidia-smi exited with status 2: Field compute_cap is not valid")
        return fixture("nvidia-smi-query-gpu.csv")


def _no_nvml(error: ProbeError) -> Any:
    def probe() -> GpuReport:
        raise error

    return probe


def test_fallback_to_nvidia_smi_query(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    smi = tmp_path / "nvidia-smi"
    smi.write_text("")
    smi.chmod(0o755)
    fake = _FakeSmi()
    monkeypatch.setattr(gpus, "probe_nvml", _no_nvml(ProbeError("NVML failed: Unknown Error")))
    monkeypatch.setattr(gpus, "query", fake)
    report = gpus.probe_gpu_report({"PATH": str(tmp_path)}, runner=HOST)
    assert report.gpus[0].compute_capability == "9.0"
    assert report.driver_cuda == "13.0"
    assert report.warnings == ("NVML failed: Unknown Error",)
    assert [c[1:] for c in fake.calls][-1] == []  # the plain table, for the CUDA version


def test_fallback_to_nvidia_smi_q(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    smi = tmp_path / "nvidia-smi"
    smi.write_text("")
    smi.chmod(0o755)
    monkeypatch.setattr(gpus, "probe_nvml", _no_nvml(gpus.NoDriverError("NVML: not loaded")))
    monkeypatch.setattr(gpus, "query", _FakeSmi(fail_query_gpu=True))
    report = gpus.probe_gpu_report({"PATH": str(tmp_path)}, runner=HOST)
    assert report.gpus[0].name == H100
    assert report.driver_version == "580.159.04"
    assert report.warnings == ()  # no driver through NVML is not worth a warning


def test_no_driver_and_no_nvidia_smi_is_silent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gpus, "probe_nvml", _no_nvml(gpus.NoDriverError("NVML: no library")))
    assert gpus.probe_gpu_report({"PATH": ""}, runner=HOST) == GpuReport()


def test_probe_nvml_without_a_driver_here() -> None:
    """This test machine has nvidia-ml-py but no libnvidia-ml: that reads as 'no driver'."""
    try:
        report = gpus.probe_nvml()
    except gpus.NoDriverError:
        return
    assert report.driver_version  # on a GPU machine NVML answers


def test_no_driver_shown_is_no_driver_without_asking_nvml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No /proc/driver/nvidia and no /dev/dxg (WSL2): NVML is not imported nor asked."""
    monkeypatch.setitem(sys.modules, "pynvml", None)  # importing it would fail loudly
    with pytest.raises(gpus.NoDriverError, match="no NVIDIA driver loaded"):
        gpus.probe_nvml((tmp_path / "proc-driver-nvidia", tmp_path / "dxg"))
    (tmp_path / "dxg").touch()
    with pytest.raises(ProbeError, match="nvidia-ml-py is not installed"):
        gpus.probe_nvml((tmp_path / "proc-driver-nvidia", tmp_path / "dxg"))
