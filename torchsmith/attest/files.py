"""Where a wheel's attestations live (beside it, named after it) and the wheel's own file list
with hashes, as the SBOM records it and ``verify`` recomputes it."""

from __future__ import annotations

import zipfile
from pathlib import Path

from torchsmith.errors import VerifyError
from torchsmith.hashing import sha256_stream

SBOM_SUFFIX = ".cdx.json"
PROVENANCE_SUFFIX = ".provenance.json"
ENVELOPE_SUFFIX = ".provenance.dsse.json"
SUFFIXES = (SBOM_SUFFIX, PROVENANCE_SUFFIX, ENVELOPE_SUFFIX)


def sbom_path(wheel: Path) -> Path:
    return wheel.with_name(wheel.name + SBOM_SUFFIX)


def provenance_path(wheel: Path) -> Path:
    return wheel.with_name(wheel.name + PROVENANCE_SUFFIX)


def envelope_path(wheel: Path) -> Path:
    return wheel.with_name(wheel.name + ENVELOPE_SUFFIX)


def attestations_of(wheel: Path) -> list[Path]:
    """The attestation files present beside ``wheel``."""
    return [
        p for p in (sbom_path(wheel), provenance_path(wheel), envelope_path(wheel)) if p.is_file()
    ]


def _member_sha256(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> str:
    with archive.open(info) as fh:
        return sha256_stream(fh)


def member_hashes(wheel: Path) -> dict[str, str]:
    """Every file of the wheel (zip member) and the sha256 of its content, by name."""
    try:
        with zipfile.ZipFile(wheel) as archive:
            return {
                info.filename: _member_sha256(archive, info)
                for info in sorted(archive.infolist(), key=lambda i: i.filename)
                if not info.is_dir()
            }
    except (OSError, zipfile.BadZipFile) as exc:
        raise VerifyError(f"{wheel}: not a readable wheel ({exc})", "give the built .whl") from exc


def member_differences(ours: dict[str, str], theirs: dict[str, str]) -> list[str]:
    """The members that differ between two file lists: changed, only in ours, only in theirs."""
    changed = [
        f"{n} (content differs)"
        for n in sorted(ours.keys() & theirs.keys())
        if ours[n] != theirs[n]
    ]
    added = [f"{n} (only in the new wheel)" for n in sorted(ours.keys() - theirs.keys())]
    gone = [f"{n} (only in the recorded wheel)" for n in sorted(theirs.keys() - ours.keys())]
    return changed + added + gone
