"""NVIDIA GPUs, driver version and the newest CUDA the driver runs: NVML (``nvidia-ml-py``)
first, then ``nvidia-smi --query-gpu=... --format=csv`` (+ the plain table for the CUDA
version), then ``nvidia-smi -q`` (old drivers; compute capability looked up by GPU name)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from torchsmith.errors import TorchsmithError, UnknownEntryError
from torchsmith.host import parse_gpu
from torchsmith.host._run import ProbeError, query, which
from torchsmith.host.model import GpuInfo
from torchsmith.host.parse_gpu import GpuReport, RawGpu
from torchsmith.runner import Runner

# NVML return codes that mean "no NVIDIA driver here" rather than "something is broken".
_NVML_ABSENT = {9, 12}  # NVML_ERROR_DRIVER_NOT_LOADED, NVML_ERROR_LIBRARY_NOT_FOUND
# Where a loaded NVIDIA kernel driver shows (its README, "Verifying the installation":
# /proc/driver/nvidia/version), and WSL2's GPU device (CUDA on WSL: no kernel module, NVML
# through /usr/lib/wsl/lib). Neither there: NVML could only say "driver not loaded".
DRIVER_SIGNS = (Path("/proc/driver/nvidia"), Path("/dev/dxg"))


class NoDriverError(ProbeError):
    """This machine has no NVIDIA driver: no GPUs, and nothing to warn about."""


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _nvml_gpu(nvml: Any, index: int) -> dict[str, Any]:
    handle = nvml.nvmlDeviceGetHandleByIndex(index)
    return {
        "index": index,
        "name": _text(nvml.nvmlDeviceGetName(handle)),
        "compute_capability": list(nvml.nvmlDeviceGetCudaComputeCapability(handle)),
        "memory_total_bytes": int(nvml.nvmlDeviceGetMemoryInfo(handle).total),
        "uuid": _text(nvml.nvmlDeviceGetUUID(handle)),
    }


def read_nvml(nvml: Any) -> dict[str, Any]:
    """Everything we need from NVML as plain data (the ``pynvml`` module is passed in)."""
    nvml.nvmlInit()
    try:
        return {
            "driver_version": _text(nvml.nvmlSystemGetDriverVersion()),
            "cuda_driver_version": int(nvml.nvmlSystemGetCudaDriverVersion()),
            "gpus": [_nvml_gpu(nvml, i) for i in range(nvml.nvmlDeviceGetCount())],
        }
    finally:
        nvml.nvmlShutdown()


def probe_nvml(signs: tuple[Path, ...] = DRIVER_SIGNS) -> GpuReport:
    """NVML's report; :class:`NoDriverError` without asking it (nor importing ``pynvml``, a
    fifth of ``torchsmith host``'s own start-up) where no NVIDIA driver shows."""
    if not any(sign.exists() for sign in signs):
        raise NoDriverError(f"no NVIDIA driver loaded ({' nor '.join(map(str, signs))})")
    try:
        import pynvml
    except ImportError as exc:
        raise ProbeError("nvidia-ml-py is not installed: GPUs read from nvidia-smi") from exc
    try:
        return parse_gpu.parse_nvml_snapshot(read_nvml(pynvml))
    except pynvml.NVMLError as exc:
        if getattr(exc, "value", None) in _NVML_ABSENT:
            raise NoDriverError(f"NVML: {exc}") from exc
        raise ProbeError(f"NVML failed: {exc}") from exc


def probe_smi(smi: str, env: Mapping[str, str], runner: Runner) -> GpuReport:
    """``nvidia-smi --query-gpu`` (+ its table for the CUDA version); ``-q`` if that fails."""
    fields = ",".join(parse_gpu.QUERY_FIELDS)
    try:
        argv = [smi, f"--query-gpu={fields}", "--format=csv"]
        report = parse_gpu.parse_smi_csv(query(argv, env, runner))
    except ProbeError:
        return parse_gpu.parse_smi_q(query([smi, "-q"], env, runner))
    head = parse_gpu.parse_smi_header(query([smi], env, runner))
    return report._replace(
        driver_cuda=head.driver_cuda,
        driver_version=report.driver_version or head.driver_version,
    )


def _compute_capability(gpu: RawGpu) -> str:
    if gpu.compute_capability:
        return gpu.compute_capability
    from torchsmith import kb

    try:
        return kb.load().gpu(gpu.name).compute_capability
    except TorchsmithError as exc:  # not in the KB, or the KB itself cannot be read
        message = f"GPU {gpu.index} ({gpu.name}): compute capability unknown"
        if not isinstance(exc, UnknownEntryError):
            message += f" ({exc.message.splitlines()[0]})"
        raise ProbeError(message) from exc


def to_gpu_infos(report: GpuReport) -> tuple[list[GpuInfo], list[str]]:
    gpus, warnings = [], list(report.warnings)
    for raw in report.gpus:
        try:
            cc = _compute_capability(raw)
        except ProbeError as exc:
            warnings.append(exc.message)
            continue
        gpus.append(
            GpuInfo(
                index=raw.index,
                name=raw.name,
                compute_capability=cc,
                memory_mib=raw.memory_mib,
                uuid=raw.uuid,
            )
        )
    return gpus, warnings


def probe_gpu_report(env: Mapping[str, str], runner: Runner) -> GpuReport:
    try:
        return probe_nvml()
    except ProbeError as exc:
        first = exc
    smi = which("nvidia-smi", env)
    notes = () if isinstance(first, NoDriverError) else (first.message,)
    if smi is None:
        return GpuReport(warnings=notes)
    try:
        report = probe_smi(str(smi), env, runner)
    except ProbeError as exc:
        return GpuReport(warnings=(*notes, exc.message))
    return report._replace(warnings=(*notes, *report.warnings))
