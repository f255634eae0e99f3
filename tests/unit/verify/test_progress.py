"""verify says what it is doing during the 20-50 s smoke test (new-user trial §8 #9): each
phase, and each smoke test's result as the script prints it; on stderr, so --json stays clean."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from torchsmith.cli import main
from torchsmith.verify.smoke import MARK, _each_result

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "inspect"


def test_each_smoke_result_is_said_as_it_comes() -> None:
    """The recorded smoke log of torch 2.11.0+cu130 on the H100, line by line."""
    lines = (FIXTURES / "smoke-2.11.0-cu130.log").read_text().splitlines(keepends=True)
    said: list[str] = []
    on_line = _each_result(said.append)
    for line in lines:
        on_line(line)
    assert len(said) == sum(line.startswith(MARK) for line in lines) == 7
    assert said[0].startswith("  import: ok (")


def test_verify_command_reports_stages_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wheel = tmp_path / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_17_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("torch/version.py", "__version__ = '2.13.0+cpu'\n")
    plan = FIXTURES / "plans" / "plan-2.13.0-cpu.json"
    main(["verify", str(wheel), "--plan", str(plan), "--no-smoke", "--json"])
    captured = capsys.readouterr()
    assert "==> inspect: " in captured.err and "<== inspect done in" in captured.err
    assert "checks" in json.loads(captured.out)
