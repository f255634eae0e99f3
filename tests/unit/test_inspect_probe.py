"""The interpreter probe of ``inspect --python``: how it is started (no real subprocess here)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from torchsmith import proc
from torchsmith.inspect import installed as installed_mod


def test_probe_runs_outside_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a torch source checkout in the working directory must not shadow the installed torch
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("__version__ = 'fake'\n")
    monkeypatch.chdir(tmp_path)
    calls: list[dict[str, Any]] = []

    def fake_capture(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        cwd = kwargs.get("cwd")
        calls.append(
            {"argv": argv, "cwd": cwd, "empty": cwd is not None and not any(Path(cwd).iterdir())}
        )
        line = installed_mod.MARK + json.dumps({"file": "/site/torch/__init__.py"})
        return subprocess.CompletedProcess(argv, 0, line + "\n", "")

    monkeypatch.setattr(proc, "capture", fake_capture)
    assert installed_mod.probe("python3", {})["file"] == "/site/torch/__init__.py"
    [call] = calls
    assert call["argv"][:2] == ["python3", "-c"]
    assert call["cwd"] is not None and Path(call["cwd"]).resolve() != tmp_path.resolve()
    assert call["empty"] and not Path(call["cwd"]).exists()  # an empty temp dir, removed after
