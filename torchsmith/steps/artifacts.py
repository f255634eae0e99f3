"""What a partial (``--target``) build produced: the libraries of the named CMake targets, or
the named files themselves (ninja also accepts object paths as targets)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from torchsmith.report.manifest import artifact_record


def target_files(bdir: Path, target: str) -> list[Path]:
    """Files a target built: ``lib/lib<target>.so*`` / ``.a``, or the target as a path."""
    direct = bdir / target
    if direct.is_file():
        return [direct]
    lib = bdir / "lib"
    found = sorted(lib.glob(f"lib{target}.so*")) + sorted(lib.glob(f"lib{target}.a"))
    return [p for p in found if p.is_file() and not p.is_symlink()] or [
        p for p in found if p.is_file()
    ]


def partial_artifacts(bdir: Path, targets: list[str]) -> list[dict[str, Any]]:
    """One record per built file (name relative to the build dir, size, sha256)."""
    records = []
    for target in targets:
        for path in target_files(bdir, target):
            record = artifact_record(path, str(path.relative_to(bdir)))
            record["target"] = target
            records.append(record)
    return records
