"""What one wheel's attestations describe, gathered from the build's manifest (the one record of
the build: source, fixes, toolchain, toolkit, repair) and the build environment it was made in.
Companion wheels take their own source, repair and environment from their manifest record."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from email.parser import HeaderParser
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class PythonPackage:
    """One distribution installed in the build environment."""

    name: str
    version: str
    sha256: str | None
    hash_of: str
    """What ``sha256`` is the hash of: the archive pip installed (direct_url.json), or the
    installed files' list (the dist-info RECORD, which holds each file's hash)."""


@dataclass(frozen=True)
class Subject:
    """One wheel to attest and what went into it."""

    wheel: Path
    name: str
    version: str
    source: Mapping[str, Any]
    fixes: Sequence[Mapping[str, Any]] = ()
    toolchain: Mapping[str, str] = field(default_factory=dict)
    toolkit: Mapping[str, Any] | None = None
    repair: Mapping[str, Any] | None = None
    packages: Sequence[PythonPackage] = ()
    library_versions: Mapping[str, str] = field(default_factory=dict)
    """CUDA, cuDNN, NCCL versions as CMake's cache recorded them (``CUDA_VERSION``…)."""


_VERSIONED = ("CUDA", "CUDNN", "NCCL")


def library_versions(cmake_cache: Mapping[str, Any]) -> dict[str, str]:
    """The CMake cache's version entries of CUDA, cuDNN and NCCL."""
    return {
        key: str(value)
        for key, value in sorted(cmake_cache.items())
        if key.upper().endswith("VERSION") and key.upper().startswith(_VERSIONED)
    }


def fix_digest(fix: Mapping[str, Any]) -> str:
    """sha256 of a planned fix as the plan holds it (canonical JSON: its edits, commands and
    variables), so a changed fix has another hash."""
    return hashlib.sha256(json.dumps(fix, sort_keys=True).encode()).hexdigest()


def applied_fixes(manifest: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The fixes the build applied (manifest ``fixes``), each with its planned form's hash."""
    planned = {f.get("id"): f for f in manifest.get("plan", {}).get("fixes", [])}
    return [
        {**fix, "sha256": fix_digest(planned.get(fix.get("id"), fix))}
        for fix in manifest.get("fixes", [])
        if isinstance(fix, dict)
    ]


def _site_packages(python: Path) -> list[Path]:
    venv = python.parent.parent
    return sorted((venv / "lib").glob("python*/site-packages"))


def _archive_hash(dist_info: Path) -> str | None:
    try:
        data = json.loads((dist_info / "direct_url.json").read_text(encoding="utf-8"))
        hashes = data.get("archive_info", {}).get("hashes", {})
    except (OSError, ValueError, AttributeError):
        return None
    value = hashes.get("sha256") if isinstance(hashes, dict) else None
    return value if isinstance(value, str) else None


def _package(dist_info: Path) -> PythonPackage | None:
    try:
        meta = HeaderParser().parsestr((dist_info / "METADATA").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None
    if not meta.get("Name"):
        return None
    archive = _archive_hash(dist_info)
    if archive is not None:
        return PythonPackage(meta["Name"], meta.get("Version", ""), archive, "archive")
    record = dist_info / "RECORD"
    digest = hashlib.sha256(record.read_bytes()).hexdigest() if record.is_file() else None
    return PythonPackage(meta["Name"], meta.get("Version", ""), digest, "RECORD")


def python_packages(python: Path) -> list[PythonPackage]:
    """The distributions of the venv ``python`` belongs to (read from its dist-info
    directories; nothing is run), sorted by name."""
    found = [
        pkg
        for site in _site_packages(python)
        for info in sorted(site.glob("*.dist-info"))
        if (pkg := _package(info)) is not None
    ]
    return sorted(found, key=lambda p: (p.name.lower(), p.version))
