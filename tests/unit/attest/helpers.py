"""A small wheel and a recorded manifest to attest, for the attest and verify tests."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
)

from torchsmith.attest.subject import PythonPackage, Subject, applied_fixes

FILES = {
    "torch/__init__.py": b"import torch._C\n",
    "torch/lib/libtorch_cpu.so": b"\x7fELF...",
    "torch.libs/libgomp-a34b3233.so.1": b"\x7fELF gomp",
    "torch-2.6.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: torch\nVersion: 2.6.0\n",
    "torch-2.6.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nTag: cp311-cp311-manylinux_2_28_x86_64\n",
    "torch-2.6.0.dist-info/RECORD": b"",
}
FIX = {"id": "numpy-below-2", "title": "numpy<2", "action": "command", "source": "kb"}


def make_wheel(where: Path, files: dict[str, bytes] = FILES) -> Path:
    wheel = where / "torch-2.6.0-cp311-cp311-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, data in files.items():
            # A fixed time: writestr(name) stamps the clock (2 s resolution), so two wheels
            # made across a tick had other bytes, and the same-SBOM test flaked.
            archive.writestr(zipfile.ZipInfo(name, date_time=(2025, 1, 27, 0, 0, 0)), data)
    return wheel


def manifest(plan_extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """A manifest as the publish step records it (the parts the attestations read)."""
    return {
        "kind": "wheel",
        "created": "2026-11-27T08:00:00Z",
        "plan_hash": "0123456789abcdef",
        "plan": {"torch": {"value": "2.6.0"}, "fixes": [FIX], **(plan_extra or {})},
        "env": {"SOURCE_DATE_EPOCH": "1737936000"},
        "source": {
            "kind": "git",
            "version": "2.6.0",
            "identity": "1eba9b3aa3c43f86f4a2c807ac8e12c4a7767340",
            "details": {
                "url": "https://github.com/pytorch/pytorch.git",
                "ref": "v2.6.0",
                "commit": "1eba9b3aa3c43f86f4a2c807ac8e12c4a7767340",
                "submodule:third_party/fmt": "0c9fce2ffefecfdce794e1859584e25877b7b592",
            },
        },
        "fixes": [{"id": "numpy-below-2", "status": "ran pip install numpy<2", "title": "t"}],
        "toolchain": {"cc": "gcc (Debian 12.2.0-14) 12.2.0\nCopyright", "cmake": "cmake 3.31.6"},
        "cmake_cache": {"CUDA_VERSION": "12.4", "CUDNN_VERSION": "9.1.0", "USE_NCCL": "1"},
        "toolkit": {"cuda": "12.4", "provider": "pypi", "packages": []},
        "artifacts": [],
    }


def subject(wheel: Path, data: dict[str, Any]) -> Subject:
    return Subject(
        wheel=wheel,
        name="torch",
        version="2.6.0",
        source=data["source"],
        fixes=applied_fixes(data),
        toolchain=data["toolchain"],
        toolkit=data["toolkit"],
        packages=[PythonPackage("numpy", "1.26.4", "ab" * 32, "archive")],
        library_versions={"CUDA_VERSION": "12.4", "CUDNN_VERSION": "9.1.0"},
    )


def key_pair(where: Path) -> tuple[Path, Path]:
    """An Ed25519 key (mode 600) and its public half, as PEM files."""
    key = Ed25519PrivateKey.generate()
    private, public = where / "sign.pem", where / "sign.pub"
    private.write_bytes(key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()))
    private.chmod(0o600)
    public.write_bytes(
        key.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
    )
    return private, public
