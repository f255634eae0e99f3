"""The interpreter probe of ``inspect --python``: how it is started (no real subprocess here)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from torchsmith import proc
from torchsmith.cli import main
from torchsmith.errors import InspectError
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
    assert installed_mod.probe("python3", {}, proc.HOST)["file"] == "/site/torch/__init__.py"
    [call] = calls
    assert call["argv"][:2] == ["python3", "-c"]
    assert call["cwd"] is not None and Path(call["cwd"]).resolve() != tmp_path.resolve()
    assert call["empty"] and not Path(call["cwd"]).exists()  # an empty temp dir, removed after


def test_a_missing_interpreter_is_named_with_a_hint(tmp_path: Path) -> None:
    with pytest.raises(InspectError, match=r"--python /nonexistent/python: no such file") as err:
        installed_mod.probe("/nonexistent/python", {}, proc.HOST)
    assert "--python" in err.value.hint


@pytest.mark.parametrize(
    ("raised", "message"),
    [
        (FileNotFoundError(2, "No such file or directory"), "no such interpreter on PATH"),
        (PermissionError(13, "Permission denied"), "cannot be run: Permission denied"),
    ],
)
def test_an_interpreter_that_cannot_start_is_named_with_a_hint(
    monkeypatch: pytest.MonkeyPatch, raised: OSError, message: str
) -> None:
    def fail(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        raise raised

    monkeypatch.setattr(proc, "capture", fail)
    with pytest.raises(InspectError, match=message) as err:
        installed_mod.probe("pythonX", {}, proc.HOST)
    assert err.value.hint


def test_inspect_cli_messages_for_things_that_are_not_wheels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = tmp_path / "passwd"
    text.write_text("root:x:0:0:root:/root:/bin/bash\n")
    cases = {
        str(text): "is not a wheel: it is not a zip archive",
        str(tmp_path): "is a directory, not a wheel file",
        str(tmp_path / "missing.whl"): "missing.whl: no such file",
    }
    for arg, message in cases.items():
        assert main(["inspect", arg]) == InspectError.exit_code
        err = capsys.readouterr().err
        assert message in err and "→ give a torch wheel file" in err and "--python" in err
    assert main(["inspect", "--python", "/nonexistent"]) == InspectError.exit_code
    assert "no such file\n→ give the interpreter" in capsys.readouterr().err
