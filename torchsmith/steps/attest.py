"""Step ``attest``: each wheel this run published (torch's, each companion's) gets its CycloneDX
SBOM and in-toto SLSA provenance beside it, signed with ``sign_key`` when the plan names one
(:mod:`torchsmith.attest`). What they describe comes from the build's manifest (the one record of
the build) and the build environments' installed packages."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from torchsmith.attest.subject import (
    PythonPackage,
    Subject,
    applied_fixes,
    library_versions,
    python_packages,
)
from torchsmith.attest.write import attest
from torchsmith.errors import InternalError
from torchsmith.keyfile import load_key
from torchsmith.steps.context import BuildContext
from torchsmith.steps.state import BuildState

STAGE = "attest"


def _wheel(ctx: BuildContext, state: BuildState, name: str) -> Path:
    found = [p for p in state.published if p.name == name]
    if not found:
        raise InternalError(
            f"the attest step found no published wheel {name}",
            "the plan's steps are out of order; report this as a torchsmith bug",
        )
    return found[0]


def torch_subject(ctx: BuildContext, state: BuildState) -> Subject | None:
    """torch's wheel, when this run built it."""
    manifest = state.manifest
    records = [a for a in manifest.get("artifacts", []) if a.get("companion") is None]
    if manifest.get("kind") != "wheel" or not records:
        return None
    return Subject(
        wheel=_wheel(ctx, state, records[0]["name"]),
        name="torch",
        version=str(manifest.get("source", {}).get("version", ctx.plan.torch.value)),
        source=manifest.get("source", {}),
        fixes=applied_fixes(manifest),
        toolchain=manifest.get("toolchain", {}),
        toolkit=manifest.get("toolkit"),
        repair=manifest.get("repair"),
        packages=_packages(state.benv.python if state.benv else None),
        library_versions=library_versions(manifest.get("cmake_cache", {})),
    )


def _packages(python: Path | None) -> list[PythonPackage]:
    return python_packages(python) if python is not None else []


def companion_subjects(ctx: BuildContext, state: BuildState) -> list[Subject]:
    """Each companion wheel this run built, from its manifest record."""
    python = state.companions.env.python if state.companions else None
    toolkit = state.companions.env.toolkit if state.companions else None
    return [
        _companion(ctx, state, record, python, toolkit)
        for record in state.manifest.get("companions", [])
    ]


def _companion(
    ctx: BuildContext,
    state: BuildState,
    record: Mapping[str, Any],
    python: Path | None,
    toolkit: Mapping[str, Any] | None,
) -> Subject:
    return Subject(
        wheel=_wheel(ctx, state, record["artifact"]["name"]),
        name=str(record["name"]),
        version=str(record["version"]),
        source=record.get("source") or {},
        toolchain=state.manifest.get("toolchain", state.tools.versions),
        toolkit=toolkit or state.manifest.get("toolkit"),
        repair=record.get("repair"),
        packages=_packages(python),
    )


def run(ctx: BuildContext, state: BuildState) -> None:
    """Step ``attest``."""
    subjects = [s for s in [torch_subject(ctx, state)] if s] + companion_subjects(ctx, state)
    key = load_key(ctx.plan.sign_key) if ctx.plan.sign_key else None
    names = ", ".join(s.wheel.name for s in subjects)
    with ctx.stage(STAGE, f"SBOM + provenance of {names}"):
        written = [path for s in subjects for path in attest(s, state.manifest, key)]
    state.attestations = written
    ctx.reporter.message(f"attest: {len(written)} files beside the wheels")
