"""Security review f1b4bec N15: `plan --against python:PATH` runs PATH to read its torch. With
--host-facts (a plan for another machine) it is refused before anything runs; otherwise the run
is said on stderr first."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchsmith.cli import main
from torchsmith.errors import UsageError

HOST = Path(__file__).resolve().parents[2] / "fixtures" / "plan" / "host-ci.json"


def _evil(tmp_path: Path) -> tuple[Path, Path]:
    """A shell script posing as an interpreter: it records that it ran and fails."""
    marker = tmp_path / "EXECUTED"
    script = tmp_path / "evilpy"
    script.write_text(f'#!/bin/sh\necho "ran with: $*" > {marker}\nexit 1\n')
    script.chmod(0o755)
    return script, marker


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_a_recorded_host_never_runs_the_against_interpreter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], json_flag: list[str]
) -> None:
    script, marker = _evil(tmp_path)
    args = ["plan", "--cpu", "--with", "torchvision", "--against", f"python:{script}"]
    assert main([*args, "--host-facts", str(HOST), *json_flag]) == 2
    assert not marker.exists()
    assert "--host-facts" in capsys.readouterr().err


def test_the_spec_files_against_is_refused_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script, marker = _evil(tmp_path)
    spec = tmp_path / "spec.toml"
    spec.write_text(f'against = "python:{script}"\n')
    args = ["plan", "--cpu", "--with", "torchvision", "--spec", str(spec)]
    assert main([*args, "--host-facts", str(HOST)]) == 2
    assert not marker.exists()
    assert "would run that interpreter on this machine" in capsys.readouterr().err


def test_without_a_recorded_host_the_run_is_said_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    script, _marker = _evil(tmp_path)
    said: list[str] = []

    def reading(*_args: object) -> None:  # unit tests start no process: record what was said
        said.append(capsys.readouterr().err)
        raise UsageError("stop here")

    monkeypatch.setattr("torchsmith.companions.facts.against_of", reading)
    code = main(["plan", "--cpu", "--with", "torchvision", "--against", f"python:{script}"])
    assert code == 2 and len(said) == 1
    assert f"running {script} to read its torch" in said[0]
