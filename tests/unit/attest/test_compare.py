"""A rebuilt wheel against the recorded one: identical, or the differing members from the
recorded wheel or its SBOM, and diffoscope's first lines when it is there."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from torchsmith.attest.compare import SAME_MEMBERS, DiffTool, compare
from torchsmith.attest.write import attest
from torchsmith.hashing import sha256_file

from .helpers import FILES, make_wheel, manifest, subject


def _recorded(where: Path, files: dict[str, bytes] = FILES) -> dict[str, Any]:
    where.mkdir(parents=True, exist_ok=True)
    wheel = make_wheel(where, files)
    return {"artifacts": [{"name": wheel.name, "sha256": sha256_file(wheel)}]}


def test_the_same_bytes_are_identical(tmp_path: Path) -> None:
    record = _recorded(tmp_path / "old")
    [result] = compare(record, tmp_path / "old", [make_wheel(tmp_path)], None)
    assert result.identical and result.differing == []


def test_differing_members_come_from_the_recorded_wheel(tmp_path: Path) -> None:
    record = _recorded(tmp_path / "old")
    new = make_wheel(tmp_path, {**FILES, "torch/__init__.py": b"changed"})
    [result] = compare(record, tmp_path / "old", [new], None)
    assert not result.identical
    assert result.differing == ["torch/__init__.py (content differs)"]
    assert "recorded wheel" in result.basis


def test_without_the_recorded_wheel_its_sbom_names_the_members(tmp_path: Path) -> None:
    old = tmp_path / "old"
    record = _recorded(old)
    wheel = old / record["artifacts"][0]["name"]
    attest(subject(wheel, manifest()), manifest(), None)
    wheel.unlink()
    new = make_wheel(tmp_path, {**FILES, "torch/extra.py": b""})
    [result] = compare(record, old, [new], None)
    assert result.differing == ["torch/extra.py (only in the new wheel)"]
    assert "SBOM" in result.basis


def test_the_same_members_in_another_archive_say_so(tmp_path: Path) -> None:
    record = _recorded(tmp_path / "old")
    reordered = dict(reversed(list(FILES.items())))
    [result] = compare(record, tmp_path / "old", [make_wheel(tmp_path, reordered)], None)
    assert not result.identical and result.differing == [SAME_MEMBERS]


def test_nothing_to_compare_members_with_is_said(tmp_path: Path) -> None:
    record = _recorded(tmp_path / "old")
    (tmp_path / "old" / record["artifacts"][0]["name"]).unlink()
    new = make_wheel(tmp_path, {"x": b""})
    [result] = compare(record, tmp_path / "old", [new], None)
    assert result.differing == [] and result.basis.startswith("nothing")


class FakeRunner:
    def __init__(self) -> None:
        self.argv: list[str] = []

    def capture(
        self, argv: Sequence[str | Path], *, env: Mapping[str, str], **kw: Any
    ) -> subprocess.CompletedProcess[str]:
        self.argv = [str(a) for a in argv]
        return subprocess.CompletedProcess(argv, 1, "--- old\n+++ new\n│ torch/__init__.py\n", "")


def test_diffoscope_reports_the_first_differences(tmp_path: Path) -> None:
    record = _recorded(tmp_path / "old")
    new = make_wheel(tmp_path, {**FILES, "torch/__init__.py": b"changed"})
    runner = FakeRunner()
    tool = DiffTool("/usr/bin/diffoscope", runner, {})  # type: ignore[arg-type]
    [result] = compare(record, tmp_path / "old", [new], tool)
    assert result.diffoscope[0] == "--- old" and runner.argv[:3] == [
        "/usr/bin/diffoscope",
        "--text",
        "-",
    ]
