"""Pure parsers for what the NVIDIA driver reports: an NVML snapshot (see
:func:`torchsmith.host.gpus.read_nvml`), ``nvidia-smi --query-gpu=... --format=csv``,
``nvidia-smi -q`` and the plain ``nvidia-smi`` table. Unit-tested on output recorded on a
real H100 machine (``tests/fixtures/device-h100``)."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

QUERY_FIELDS = ("index", "name", "compute_cap", "memory.total", "uuid", "driver_version")
_DRIVER = re.compile(r"Driver Version\s*:\s*([\d.]+)")
_CUDA = re.compile(r"CUDA Version\s*:\s*([\d.]+)")
_MIB = re.compile(r"^(\d+)\s*MiB$")
_CC = re.compile(r"^\d+\.\d+$")


@dataclass(frozen=True)
class RawGpu:  # a dataclass: its field `index` would hide tuple.index
    """One GPU as a driver tool reported it; ``compute_capability`` None when not reported."""

    index: int
    name: str
    compute_capability: str | None
    memory_mib: int | None = None
    uuid: str | None = None


class GpuReport(NamedTuple):  # a NamedTuple: no generated code at import (start-up)
    gpus: tuple[RawGpu, ...] = ()
    driver_version: str | None = None
    driver_cuda: str | None = None
    warnings: tuple[str, ...] = ()


def cuda_from_int(value: int) -> str:
    """NVML/cudaDriverGetVersion integer → 'major.minor': 13000 → '13.0', 12040 → '12.4'."""
    return f"{value // 1000}.{(value % 1000) // 10}"


def parse_nvml_snapshot(snapshot: Mapping[str, Any]) -> GpuReport:
    """The dict :func:`torchsmith.host.gpus.read_nvml` returns → a report."""
    gpus = tuple(
        RawGpu(
            index=int(gpu["index"]),
            name=str(gpu["name"]),
            compute_capability="{}.{}".format(*gpu["compute_capability"]),
            memory_mib=int(gpu["memory_total_bytes"]) // 2**20,
            uuid=gpu.get("uuid"),
        )
        for gpu in snapshot.get("gpus", [])
    )
    cuda = snapshot.get("cuda_driver_version")
    return GpuReport(
        gpus=gpus,
        driver_version=snapshot.get("driver_version"),
        driver_cuda=cuda_from_int(int(cuda)) if cuda else None,
    )


def _mib(text: str) -> int | None:
    match = _MIB.match(text.strip())
    return int(match.group(1)) if match else None


def parse_smi_csv(text: str) -> GpuReport:
    """``nvidia-smi --query-gpu=index,name,compute_cap,memory.total,uuid,driver_version
    --format=csv`` (header row included; columns found by name)."""
    rows = [row for row in csv.reader(io.StringIO(text), skipinitialspace=True) if row]
    if not rows:
        return GpuReport()
    header = [name.split(" [")[0].strip() for name in rows[0]]
    gpus, drivers = [], set()
    for row in rows[1:]:
        item = dict(zip(header, (cell.strip() for cell in row), strict=False))
        if not item.get("index", "").isdigit():
            continue
        cc = item.get("compute_cap", "")
        gpus.append(
            RawGpu(
                index=int(item["index"]),
                name=item.get("name", "?"),
                compute_capability=cc if _CC.match(cc) else None,
                memory_mib=_mib(item.get("memory.total", "")),
                uuid=item.get("uuid") or None,
            )
        )
        drivers.add(item.get("driver_version", ""))
    driver = next(iter(drivers)) if len(drivers) == 1 and drivers != {""} else None
    return GpuReport(gpus=tuple(gpus), driver_version=driver)


def parse_smi_header(text: str) -> GpuReport:
    """The plain ``nvidia-smi`` table (or ``-q``): driver version and the newest CUDA it runs."""
    driver = _DRIVER.search(text)
    cuda = _CUDA.search(text)
    return GpuReport(
        driver_version=driver.group(1) if driver else None,
        driver_cuda=cuda.group(1) if cuda else None,
    )


def _smi_q_sections(text: str) -> list[dict[str, str]]:
    """``nvidia-smi -q`` → one flat dict per GPU, keys joined by '/' ('FB Memory Usage/Total')."""
    gpus: list[dict[str, str]] = []
    stack: list[tuple[int, str]] = []
    for line in text.splitlines():
        if line.startswith("GPU "):
            gpus.append({})
            stack = []
            continue
        key, _, value = line.partition(":")
        if not gpus or not key.strip():
            continue
        indent = len(key) - len(key.lstrip())
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if value.strip():
            gpus[-1]["/".join([s for _, s in stack] + [key.strip()])] = value.strip()
        else:
            stack.append((indent, key.strip()))
    return gpus


def parse_smi_q(text: str) -> GpuReport:
    """``nvidia-smi -q`` → GPUs (in its order, which is nvidia-smi's index), driver, CUDA."""
    gpus = []
    for index, item in enumerate(_smi_q_sections(text)):
        cc = item.get("Compute Capability", "")
        gpus.append(
            RawGpu(
                index=index,
                name=item.get("Product Name", "?"),
                compute_capability=cc if _CC.match(cc) else None,
                memory_mib=_mib(item.get("FB Memory Usage/Total", "")),
                uuid=item.get("GPU UUID"),
            )
        )
    head = parse_smi_header(text)
    return GpuReport(
        gpus=tuple(gpus), driver_version=head.driver_version, driver_cuda=head.driver_cuda
    )
