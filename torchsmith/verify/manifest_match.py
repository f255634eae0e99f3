"""A wheel against the manifest published beside it: the manifest's ``artifacts`` record (name,
size, sha256, written by the publish step) must describe the very bytes of the wheel. A wheel
swapped, truncated or rebuilt after its manifest was written is named, with both sides."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from torchsmith.errors import VerifyError
from torchsmith.hashing import sha256_file


def wheel_records(data: Any) -> list[Mapping[str, Any]]:
    """The manifest's artifact records of wheels (none for a plan file or a partial build)."""
    records = data.get("artifacts") if isinstance(data, dict) else None
    if not isinstance(records, list):
        return []
    return [r for r in records if isinstance(r, dict) and str(r.get("name", "")).endswith(".whl")]


def record_for(wheel: Path, records: list[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The record named like ``wheel``, else the only wheel record, else None."""
    named = [r for r in records if r.get("name") == wheel.name]
    if named:
        return named[0]
    return records[0] if len(records) == 1 else None


def mismatch(wheel: Path, record: Mapping[str, Any]) -> str | None:
    """What differs between ``wheel`` on disk and ``record`` (None: the same bytes)."""
    size = wheel.stat().st_size
    if record.get("size") not in (None, size):
        return f"{size} bytes, the manifest records {record.get('size')} bytes"
    digest = sha256_file(wheel)
    if record.get("sha256") not in (None, digest):
        return f"sha256 {digest}, the manifest records sha256 {record.get('sha256')}"
    return None


def pair_mismatch(wheel: Path, data: Any) -> str | None:
    """How ``wheel`` differs from the wheel the parsed manifest ``data`` records (None: the
    same bytes, or nothing recorded to compare with)."""
    record = record_for(wheel, wheel_records(data))
    if record is None or not wheel.is_file():
        return None
    differs = mismatch(wheel, record)
    return None if differs is None else f"the wheel has {differs} (record {record.get('name')!r})"


def read_manifest(manifest: Path) -> Any:
    """The parsed manifest, or None when it cannot be read (loading a plan from it, or the
    publish step's own checks, report that)."""
    try:
        return json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None


def check_wheel_manifest(wheel: Path, manifest: Path) -> None:
    """Raise :class:`VerifyError` when ``manifest`` records a wheel other than ``wheel``; a
    plan file or a manifest without wheel records is not checked."""
    differs = pair_mismatch(wheel, read_manifest(manifest))
    if differs is None:
        return
    raise VerifyError(
        f"{wheel} does not match the manifest {manifest}: {differs}",
        "the wheel was replaced, truncated or rebuilt after the manifest was written: verify "
        "the manifest published with this wheel, or rebuild with the same command",
    )
