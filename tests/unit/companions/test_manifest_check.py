"""`torchsmith verify <companion wheel> --plan <manifest>`: the wheel against its own record in
the manifest its build published — each check reported, a failure named — instead of being
inspected as a torch wheel ('is this a torch wheel?')."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from tests.unit.companions.test_wheelcheck import ELF, REPAIRED
from torchsmith.companions.manifest_check import raise_if_failed, verify_companion
from torchsmith.errors import VerifyError
from torchsmith.report.manifest import artifact_record


def repaired_wheel(where: Path, pin: str = "torch==2.6.0") -> Path:
    path = where / REPAIRED
    meta = f"Metadata-Version: 2.1\nName: torchvision\nVersion: 0.21.0\nRequires-Dist: {pin}\n"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("torchvision-0.21.0.dist-info/METADATA", meta)
        zf.write(ELF / "image-repaired.so", "torchvision/image.so")
        zf.write(ELF / "libjpeg-0f1e2d3c.so.62", "torchvision.libs/libjpeg-0f1e2d3c.so.62")
    return path


def manifest(where: Path, wheel: Path) -> Path:
    record = {
        "name": "torchvision",
        "artifact": artifact_record(wheel),
        "verify": {
            "requires_torch": "torch==2.6.0",
            "binaries": {"links": ["libc10.so", "libtorch_cpu.so"], "cxx11_abi": False},
        },
        "repair": {"tag": "manylinux_2_34_x86_64", "excluded": ["libcuda.so.1", "libc10.so"]},
    }
    path = where / "companions-0123.manifest.json"
    data = {"kind": "companions", "companions": [record], "artifacts": [record["artifact"]]}
    path.write_text(json.dumps(data))
    return path


def test_each_check_is_reported_and_a_failure_is_named(tmp_path: Path) -> None:
    wheel = repaired_wheel(tmp_path)
    checks = {c.name: c for c in verify_companion(wheel, manifest(tmp_path, wheel))}
    assert checks["requires torch"].ok and checks["requires torch"].actual == "torch==2.6.0"
    assert checks["repaired"].ok and "manylinux_2_34_x86_64" in checks["repaired"].actual
    # the fixture's image.so links no torch library: a real torchvision module does
    assert checks["binaries"].ok is False
    assert "no extension module links torch's libraries" in checks["binaries"].detail
    with pytest.raises(VerifyError, match="binaries: torchvision: no extension module") as info:
        raise_if_failed(wheel, list(checks.values()))
    assert "requires torch" not in info.value.message


def test_another_pin_fails_the_pin_check(tmp_path: Path) -> None:
    wheel = repaired_wheel(tmp_path, pin="torch>=2.6")
    [pin, *_] = verify_companion(wheel, manifest(tmp_path, wheel))
    assert pin.ok is False and "must require exactly torch==2.6.0" in pin.detail


def test_a_manifest_without_this_wheel_is_refused_by_name(tmp_path: Path) -> None:
    wheel = repaired_wheel(tmp_path)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"companions": []}))
    with pytest.raises(VerifyError, match=f"records no companion wheel named {REPAIRED}"):
        verify_companion(wheel, other)
