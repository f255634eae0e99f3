"""A relative interpreter path (the README's `--python .venv/bin/python`) runs that interpreter,
with real processes (round-3 trial N10, V10, D14): a fresh venv without torch is found and
asked, so the answer is "could not import torch", never "no such interpreter on PATH"."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from torchsmith.cli import main


def test_relative_python_paths_reach_the_interpreter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", tmp_path / "v"], check=True)
    monkeypatch.chdir(tmp_path)
    assert main(["inspect", "--python", "v/bin/python"]) == 12
    err = capsys.readouterr().err
    assert "could not import torch" in err and "No module named 'torch'" in err
    assert "on PATH" not in err
    assert main(["doctor", "--env", "--python", "./v/bin/python", "--json"]) in (0, 20, 22)
    assert "cannot be run as a Python interpreter" not in capsys.readouterr().err
