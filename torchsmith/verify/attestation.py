"""A wheel against the attestations beside it (written by the ``attest`` step): the SBOM's file
list against the wheel's files (a file changed after the SBOM was written is named), the
provenance's subject against the wheel, its plan against the manifest's, and the DSSE signature
when there is one (checked with ``--public-key``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from torchsmith.attest import dsse
from torchsmith.attest.files import (
    envelope_path,
    member_differences,
    member_hashes,
    provenance_path,
    sbom_path,
)
from torchsmith.attest.sbom import wheel_files
from torchsmith.errors import VerifyError
from torchsmith.hashing import sha256_file
from torchsmith.keyfile import load_public_key
from torchsmith.plan_model import hash_plan_data
from torchsmith.verify.model import Check

SHOWN = 8


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise VerifyError(
            f"{path}: not a readable attestation ({exc})",
            "the file was damaged or replaced: rebuild, or remove it and its wheel",
        ) from exc


def _listed(items: list[str]) -> str:
    more = f" and {len(items) - SHOWN} more" if len(items) > SHOWN else ""
    return "; ".join(items[:SHOWN]) + more


def sbom_check(wheel: Path) -> Check:
    """Every file of the wheel has the sha256 the SBOM records, and no file is missing or new."""
    path = sbom_path(wheel)
    if not path.is_file():
        return Check(name="SBOM ↔ wheel", ok=None, detail=f"no SBOM beside it ({path.name})")
    recorded = wheel_files(_read(path))
    differs = member_differences(member_hashes(wheel), recorded)
    return Check(
        name="SBOM ↔ wheel",
        ok=not differs and bool(recorded),
        expected=f"{len(recorded)} files as {path.name} records them",
        actual="the same files" if not differs else f"{len(differs)} differ",
        detail=_listed(differs) if differs else "",
    )


def plan_of(data: Any) -> Mapping[str, Any] | None:
    """The plan a manifest records (or the plan file itself)."""
    if not isinstance(data, dict):
        return None
    plan = data.get("plan", data)
    return plan if isinstance(plan, dict) else None


def _plan_differences(ours: Mapping[str, Any], theirs: Mapping[str, Any]) -> list[str]:
    keys = sorted(set(ours) | set(theirs))
    return [k for k in keys if ours.get(k) != theirs.get(k)]


def provenance_checks(wheel: Path, manifest: Any) -> list[Check]:
    """The provenance's subject is this wheel; its plan is the manifest's."""
    path = provenance_path(wheel)
    if not path.is_file():
        return [Check(name="provenance", ok=None, detail=f"no provenance beside it ({path.name})")]
    statement = _read(path)
    return [_subject_check(wheel, statement), _plan_check(statement, plan_of(manifest))]


def _subject_check(wheel: Path, statement: Any) -> Check:
    subjects = statement.get("subject", []) if isinstance(statement, dict) else []
    digests = [s.get("digest", {}).get("sha256") for s in subjects if isinstance(s, dict)]
    digest = sha256_file(wheel)
    return Check(
        name="provenance ↔ wheel",
        ok=digest in digests,
        expected=f"subject sha256 {digest[:16]}…",
        actual=", ".join(f"{d}"[:16] + "…" for d in digests) or "no subject",
        detail="" if digest in digests else "the provenance was written for another wheel",
    )


def _plan_check(statement: Any, manifest_plan: Mapping[str, Any] | None) -> Check:
    build = (
        statement.get("predicate", {}).get("buildDefinition", {})
        if isinstance(statement, dict)
        else {}
    )
    recorded = build.get("externalParameters", {}).get("plan")
    if manifest_plan is None or not isinstance(recorded, dict):
        return Check(name="provenance ↔ manifest", ok=None, detail="no plan to compare")
    same = hash_plan_data(dict(recorded)) == hash_plan_data(dict(manifest_plan))
    differs = _plan_differences(recorded, manifest_plan)
    return Check(
        name="provenance ↔ manifest",
        ok=same,
        expected=f"plan {hash_plan_data(dict(manifest_plan))}",
        actual=f"plan {hash_plan_data(dict(recorded))}",
        detail="" if same else "the provenance's plan differs in: " + _listed(differs),
    )


def signature_check(wheel: Path, public_key: Path | None) -> Check:
    """The DSSE envelope signs the provenance beside it, with the key given."""
    path, name = envelope_path(wheel), "provenance signature"
    if not path.is_file():
        if public_key is not None:
            return Check(name=name, ok=False, detail=f"--public-key given, but no {path.name}")
        return Check(name=name, ok=None, detail="unsigned")
    envelope, statement = _read(path), provenance_path(wheel)
    if not statement.is_file() or dsse.payload(envelope) != statement.read_bytes():
        return Check(name=name, ok=False, detail=f"{path.name} signs another statement")
    if public_key is None:
        return Check(
            name=name, ok=False, severity="warning",
            detail="signed, not checked: give --public-key KEY.pub",
        )  # fmt: skip
    problem = dsse.check(envelope, load_public_key(public_key))
    return Check(
        name=name,
        ok=problem is None,
        actual="valid" if not problem else "invalid",
        detail=problem or "",
    )


def attestation_checks(wheel: Path, manifest: Any, public_key: Path | None) -> list[Check]:
    """Every check of the wheel's attestations (skipped where a file is absent)."""
    return [
        sbom_check(wheel),
        *provenance_checks(wheel, manifest),
        signature_check(wheel, public_key),
    ]
