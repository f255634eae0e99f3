"""A relative ``--python`` / ``python:`` path is taken against the working directory in every
command (round-3 trial N10, V10, D14, B18: ``.venv/bin/python`` was looked up on PATH)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from torchsmith import proc
from torchsmith.companions import facts as facts_mod
from torchsmith.doctor import envprobe
from torchsmith.errors import InspectError
from torchsmith.inspect import installed as installed_mod
from torchsmith.interpreter import invocable
from torchsmith.proc import HOST


@pytest.fixture
def venv_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.symlink_to(sys.executable)
    monkeypatch.chdir(tmp_path)
    return python


def test_a_relative_path_becomes_absolute_and_a_name_stays_a_name(venv_python: Path) -> None:
    assert invocable(".venv/bin/python") == str(venv_python)  # the link itself, not its target
    assert invocable("./.venv/bin/python").endswith(".venv/bin/python")
    assert Path(invocable("./.venv/bin/python")).is_absolute()
    assert invocable("python3") == "python3"  # PATH lookup
    assert invocable("/usr/bin/python3") == "/usr/bin/python3"


def _recording(calls: list[list[str]], stdout: str) -> Any:
    def fake(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        calls.append([str(a) for a in argv])
        return subprocess.CompletedProcess(argv, 0, stdout, "")

    return fake


def test_inspect_and_against_run_the_relative_interpreter(
    venv_python: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[list[str]] = []
    line = installed_mod.MARK + json.dumps({"file": "/site/torch/__init__.py"}) + "\n"
    monkeypatch.setattr(proc, "capture", _recording(calls, line))
    installed_mod.probe(".venv/bin/python", {}, proc.HOST)
    assert calls[0][0] == str(venv_python)
    seen: list[str] = []

    def record(**kw: Any) -> None:
        seen.append(kw["python"])
        raise ZeroDivisionError  # enough: the interpreter it was given is known

    monkeypatch.setattr(facts_mod, "inspect_artifact", record)
    with pytest.raises(ZeroDivisionError):
        facts_mod.read_against("python:.venv/bin/python", {}, proc.HOST)
    assert seen == [str(venv_python)]


def test_doctor_env_runs_the_relative_interpreter(
    venv_python: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[list[str]] = []
    monkeypatch.setattr(proc, "capture", _recording(calls, "{}\n"))
    envprobe.probe_python(".venv/bin/python", {}, runner=HOST)
    assert calls[0][0] == str(venv_python)


def test_a_program_that_is_not_python_is_named_as_such(monkeypatch: pytest.MonkeyPatch) -> None:
    # round-3 trial B03: --against python:/bin/false said "could not import torch: no output"
    monkeypatch.setattr(
        proc, "capture", lambda argv, **kw: subprocess.CompletedProcess(argv, 1, "", "")
    )
    with pytest.raises(InspectError, match="exited with status 1 and said nothing") as err:
        installed_mod.probe("/bin/false", {}, proc.HOST)
    assert "--python" in err.value.hint
