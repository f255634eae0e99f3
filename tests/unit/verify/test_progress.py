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


def test_a_silent_pip_gets_a_line_every_beat(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 28 item 9: a piped verify was silent for 290 s while pip installed 2.7 GB of
    nvidia-* wheels; pip's step lines are passed on, and a line comes every BEAT seconds in
    which nothing was said."""
    import time

    from torchsmith.verify import smoke

    monkeypatch.setattr(smoke, "BEAT", 0.04)
    said: list[str] = []
    with smoke._pip_beat(said.append) as on_line:
        on_line("Collecting nvidia-cudnn-cu12==9.1.0.70\n")
        on_line("  some line pip prints that is not a step\n")
        deadline = time.monotonic() + 10  # a loaded machine may starve the thread for a while
        while len(said) < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
    count = len(said)
    time.sleep(0.1)
    assert len(said) == count  # nothing after the block
    assert said[0] == "  pip: Collecting nvidia-cudnn-cu12==9.1.0.70"
    assert len(said) >= 3 and all(s.startswith("  pip: still installing (") for s in said[1:])
