"""Reliability trial 6c (issue 16): a manifest that does not match its wheel. ``verify WHEEL
--plan MANIFEST`` and the publish step over an existing pair compare the manifest's artifacts
record (size, sha256) with the wheel's bytes and name both sides."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from torchsmith.cli import main
from torchsmith.errors import HostError, VerifyError
from torchsmith.steps.publish import publish_file
from torchsmith.verify.manifest_match import check_wheel_manifest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
WHEEL = "torch-2.13.0+cpu-cp311-cp311-linux_x86_64.whl"
MANIFEST = WHEEL.removesuffix(".whl") + ".manifest.json"


def _record(data: bytes) -> dict[str, object]:
    return {"name": WHEEL, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def _pair(out: Path, wheel: bytes, recorded: bytes, plan: dict[str, object]) -> Path:
    out.mkdir(exist_ok=True)
    (out / WHEEL).write_bytes(wheel)
    manifest = {**plan, "artifacts": [_record(recorded)]}
    (out / MANIFEST).write_text(json.dumps(manifest))
    return out / WHEEL


def _manifest_of_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    """A manifest's plan part, from the real ``plan --json`` output."""
    host = FIXTURES / "plan" / "host-ci.json"
    assert main(["plan", "--torch", "2.13.0", "--cpu", "--json", "--host-facts", str(host)]) == 0
    data = json.loads(capsys.readouterr().out)
    plan_hash = data.pop("plan_hash")
    return {"plan_hash": plan_hash, "plan": data}


def test_verify_names_a_swapped_wheel_and_its_manifest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = _manifest_of_plan(tmp_path, capsys)
    wheel = _pair(tmp_path / "dist", b"PK swapped wheel!", b"PK the built wheel", plan)
    argv = ["verify", str(wheel), "--plan", str(wheel.with_name(MANIFEST)), "--no-smoke"]
    assert main(argv) == VerifyError.exit_code
    err = capsys.readouterr().err
    flat = " ".join(err.split())
    assert f"{wheel} does not match the manifest {wheel.with_name(MANIFEST)}" in flat
    assert "17 bytes, the manifest records 18 bytes" in flat
    assert "→" in err and "rebuild with the same command" in flat


def test_a_same_size_edit_is_caught_by_sha256(tmp_path: Path) -> None:
    wheel = _pair(tmp_path, b"PK wheel A", b"PK wheel B", {})
    with pytest.raises(VerifyError) as caught:
        check_wheel_manifest(wheel, wheel.with_name(MANIFEST))
    said = str(caught.value)
    assert f"sha256 {hashlib.sha256(b'PK wheel A').hexdigest()}" in said
    assert f"the manifest records sha256 {hashlib.sha256(b'PK wheel B').hexdigest()}" in said


def test_a_matching_pair_and_a_plain_plan_pass(tmp_path: Path) -> None:
    wheel = _pair(tmp_path, b"PK same", b"PK same", {})
    check_wheel_manifest(wheel, wheel.with_name(MANIFEST))
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"torch": {"value": "2.5.1"}}))  # no artifacts: nothing to match
    check_wheel_manifest(wheel, plan)


def test_publish_refuses_to_replace_a_wheel_its_manifest_does_not_describe(
    tmp_path: Path,
) -> None:
    out = tmp_path / "dist"
    old = _pair(out, b"PK tampered", b"PK published", {"plan_hash": "a" * 16})
    src = tmp_path / WHEEL
    src.write_bytes(b"PK rebuilt by plan a")
    with pytest.raises(HostError) as caught:
        publish_file(src, out, plan_hash="a" * 16)
    said = str(caught.value)
    assert f"{old} does not match its manifest {out / MANIFEST}" in said
    assert "11 bytes, the manifest records 12 bytes" in said
    assert "--output-dir" in caught.value.hint
    assert old.read_bytes() == b"PK tampered"


def test_publish_replaces_a_consistent_pair_of_the_same_plan(tmp_path: Path) -> None:
    out = tmp_path / "dist"
    _pair(out, b"PK published", b"PK published", {"plan_hash": "a" * 16})
    src = tmp_path / WHEEL
    src.write_bytes(b"PK rebuilt by plan a")
    assert publish_file(src, out, plan_hash="a" * 16).read_bytes() == b"PK rebuilt by plan a"
