"""The smoke test's set-up problems are named as such, not blamed on the wheel (round-3 trial
V07: --workdir /proc/x was exit 70; V09: --smoke-python /bin/false said 'rebuild')."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from torchsmith import proc
from torchsmith.cli import main
from torchsmith.errors import HostError, ToolError, UsageError
from torchsmith.verify.smoke import SmokeOptions, _prepare, check_workdir, run_smoke


def test_an_unwritable_workdir_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--workdir /proc/x: cannot write there"):
        check_workdir(Path("/proc/x"))
    a_file = tmp_path / "f"
    a_file.write_text("")
    with pytest.raises(UsageError, match="cannot write there"):
        check_workdir(a_file / "sub")
    assert check_workdir(tmp_path / "new") == tmp_path / "new"


def test_verify_refuses_the_workdir_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wheel = tmp_path / "torch-2.6.0-cp311-cp311-linux_x86_64.whl"
    wheel.write_bytes(b"")
    plan = Path(__file__).resolve().parents[2] / "fixtures/inspect/plans/plan-2.14.1-cu130.json"
    assert main(["verify", str(wheel), "--plan", str(plan), "--workdir", "/proc/x"]) == 2
    assert "--workdir /proc/x" in capsys.readouterr().err


def test_a_base_python_that_cannot_make_a_venv_is_not_the_wheels_fault(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fails(argv: list[str], **kw: Any) -> None:
        raise ToolError("false exited with status 1", excerpt=())

    monkeypatch.setattr(proc, "run", fails)
    opts = SmokeOptions(python="/bin/false", workdir=tmp_path, runner=proc.HOST)
    with pytest.raises(HostError, match="base interpreter /bin/false could not make a venv") as e:
        run_smoke(tmp_path / "torch.whl", opts, {})
    assert "--smoke-python" in e.value.hint and "the wheel was not tried" in e.value.message


def test_pip_steps_are_passed_on_as_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # round-3 trial §5: piped, verify was silent for 290 s while pip downloaded 2.7 GB
    heard: list[str] = []

    def fake_run(argv: list[str], **kw: Any) -> None:
        if "pip" in [str(a) for a in argv]:
            for line in ("Collecting nvidia-cudnn-cu12", "  detail", "Successfully installed x"):
                kw["on_line"](line)

    monkeypatch.setattr(proc, "run", fake_run)
    opts = SmokeOptions(python="/usr/bin/python3", workdir=tmp_path, runner=proc.HOST)

    _prepare(tmp_path / "torch.whl", opts, {}, heard.append)
    assert any("pip: Collecting nvidia-cudnn-cu12" in h for h in heard)
    assert any("pip: Successfully installed" in h for h in heard)
    assert not any("detail" in h for h in heard)


def test_a_relative_interpreter_is_run_from_the_smoke_workdir_by_its_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # --install-python .venv/bin/python (and verify --python): the tests run in the workdir
    monkeypatch.chdir(tmp_path)
    opts = SmokeOptions(
        python=".venv/bin/python", workdir=tmp_path / "w", runner=proc.HOST, mode="interpreter"
    )
    assert _prepare(None, opts, {}, lambda _line: None) == str(tmp_path / ".venv/bin/python")
