"""A rebuilt wheel against the one a manifest records: ``identical`` (the same sha256), or the
members that differ — from the recorded wheel itself when it still lies beside the manifest,
else from the SBOM written beside it (every member's sha256) — and, with ``diffoscope`` on
PATH and the recorded wheel at hand, the first lines of its report."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from torchsmith.attest.files import member_differences, member_hashes, sbom_path
from torchsmith.attest.sbom import wheel_files
from torchsmith.hashing import sha256_file
from torchsmith.runner import Runner

DIFFOSCOPE_LINES = 80
DIFFOSCOPE_TIMEOUT_S = 900.0
SAME_MEMBERS = (
    "every member's content is the same: the zip archive itself differs (member order, "
    "timestamps, modes or compression)"
)


@dataclass(frozen=True)
class WheelComparison:
    """One recorded wheel against its rebuild."""

    name: str
    recorded_sha256: str
    new_sha256: str | None
    new: str | None
    differing: list[str] = field(default_factory=list)
    basis: str = ""
    """What the members were compared with: the recorded wheel, its SBOM, or nothing."""
    diffoscope: list[str] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return self.new_sha256 == self.recorded_sha256


def recorded_wheels(manifest: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [a for a in manifest.get("artifacts", []) if str(a.get("name", "")).endswith(".whl")]


def _distribution(name: str) -> str:
    return name.split("-", maxsplit=1)[0].lower()


def _pair(name: str, new: Sequence[Path]) -> Path | None:
    same = [w for w in new if w.name == name]
    kin = [w for w in new if _distribution(w.name) == _distribution(name)]
    found = same or kin
    return found[0] if found else None


def _recorded_members(beside: Path, name: str, sha: str) -> tuple[dict[str, str] | None, str]:
    wheel, sbom = beside / name, sbom_path(beside / name)
    if wheel.is_file() and sha256_file(wheel) == sha:
        return member_hashes(wheel), f"the recorded wheel {wheel}"
    if sbom.is_file():
        return wheel_files(json.loads(sbom.read_text(encoding="utf-8"))), f"the SBOM {sbom}"
    return None, "nothing: neither the recorded wheel nor its SBOM lies beside the manifest"


def compare_one(
    record: Mapping[str, Any], new: Path | None, beside: Path, diff: DiffTool | None
) -> WheelComparison:
    name, sha = str(record["name"]), str(record.get("sha256", ""))
    if new is None:
        return WheelComparison(name, sha, None, None, ["no rebuilt wheel of this name"], "")
    new_sha = sha256_file(new)
    if new_sha == sha:
        return WheelComparison(name, sha, new_sha, str(new), basis="sha256")
    members, basis = _recorded_members(beside, name, sha)
    differing = member_differences(member_hashes(new), members) if members is not None else []
    if members is not None and not differing:
        differing = [SAME_MEMBERS]
    report = diff.report(beside / name, new) if diff and (beside / name).is_file() else []
    return WheelComparison(name, sha, new_sha, str(new), differing, basis, report)


@dataclass(frozen=True)
class DiffTool:
    """diffoscope, run through the runner."""

    program: str
    runner: Runner
    env: Mapping[str, str]

    def report(self, recorded: Path, new: Path) -> list[str]:
        argv = [self.program, "--text", "-", "--no-progress", str(recorded), str(new)]
        done = self.runner.capture(argv, env=self.env, timeout=DIFFOSCOPE_TIMEOUT_S)
        return (done.stdout or done.stderr or "").splitlines()[:DIFFOSCOPE_LINES]


def diffoscope(runner: Runner, env: Mapping[str, str]) -> DiffTool | None:
    found = shutil.which("diffoscope", path=env.get("PATH", ""))
    return DiffTool(found, runner, env) if found else None


def compare(
    manifest: Mapping[str, Any], beside: Path, new: Sequence[Path], diff: DiffTool | None
) -> list[WheelComparison]:
    """Every wheel the manifest records against the rebuilt ones."""
    return [
        compare_one(r, _pair(str(r["name"]), new), beside, diff) for r in recorded_wheels(manifest)
    ]
