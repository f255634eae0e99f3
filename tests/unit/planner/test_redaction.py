"""M3: `torchsmith plan` (text and --json) shows no URL credentials; the printed plan still
verifies against its own plan_hash, which credentials do not change."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torchsmith.cli import main
from torchsmith.verify.expect import load_plan

HOST = Path(__file__).resolve().parents[2] / "fixtures" / "plan" / "host-ci.json"
TARBALL = "https://alice:CANARY-pw@h.example/pytorch-v2.5.1.tar.gz?X-Amz-Signature=CANARY-sig"
MIRROR = "https://bob:ghp_CANARY@mirror.example/"


def _plan(capsys: pytest.CaptureFixture[str], *flags: str) -> str:
    args = ["plan", "--torch", "2.5.1", "--cpu", "--host-facts", str(HOST), *flags]
    assert main(args) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize(
    "flags", [("--source", f"tarball:{TARBALL}"), ("--source", "git", "--git-mirror", MIRROR)]
)
def test_plan_output_has_no_credentials(
    flags: tuple[str, ...], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert "CANARY" not in _plan(capsys, *flags)
    printed = _plan(capsys, *flags, "--json")
    assert "CANARY" not in printed
    assert "***@" in printed
    path = tmp_path / "plan.json"
    path.write_text(printed)
    assert load_plan(path).plan_hash() == json.loads(printed)["plan_hash"]


def test_rotating_the_token_keeps_the_plan_hash(capsys: pytest.CaptureFixture[str]) -> None:
    first = json.loads(_plan(capsys, "--source", f"tarball:{TARBALL}", "--json"))
    rotated = TARBALL.replace("CANARY-pw", "new-pw").replace("CANARY-sig", "new-sig")
    second = json.loads(_plan(capsys, "--source", f"tarball:{rotated}", "--json"))
    assert first["plan_hash"] == second["plan_hash"]


@pytest.mark.parametrize(
    "flags",
    [
        ("--source", "tarball:http://alice:CANARY-pw@h.example/t.tar.gz"),
        ("--source", "tarball:ftp://bob:CANARY@m.example/t.tgz?token=CANARY"),
    ],
)
def test_spec_errors_show_no_credentials(
    flags: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["plan", "--torch", "2.5.1", "--cpu", "--host-facts", str(HOST), *flags]
    assert main(args) != 0
    said = capsys.readouterr()
    assert "CANARY" not in said.out + said.err


def test_an_unpinned_tarball_is_warned_about(capsys: pytest.CaptureFixture[str]) -> None:
    plan = json.loads(_plan(capsys, "--source", f"tarball:{TARBALL}", "--json"))
    assert any("is not pinned" in w and "#sha256=" in w for w in plan["warnings"])
    pinned = json.loads(_plan(capsys, "--source", f"tarball:{TARBALL}#sha256={'a' * 64}", "--json"))
    assert not any("is not pinned" in w for w in pinned["warnings"])
