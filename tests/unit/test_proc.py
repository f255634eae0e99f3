"""torchsmith/proc.py: the one subprocess wrapper. The unit tier starts no process, so
``subprocess.Popen`` is a stand-in that prints given lines and exits with a given status."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path
from typing import Any, ClassVar

import pytest

from torchsmith.errors import HostError, ToolError
from torchsmith.proc import run


class FakePopen:
    """What ``run`` uses of a Popen: stdin, stdout (text), wait, kill."""

    lines: tuple[str, ...] = ()
    status = 0
    started: ClassVar[list[dict[str, Any]]] = []
    made: ClassVar[list[FakePopen]] = []

    def __init__(self, args: list[str], **kwargs: Any) -> None:
        if args[0] == "missing":
            raise FileNotFoundError(args[0])
        FakePopen.started.append({"args": args, **kwargs})
        piped = kwargs["stdin"] == subprocess.PIPE
        self.stdin = io.StringIO() if piped else None
        self.stdout = io.StringIO("".join(f"{line}\n" for line in self.lines))
        self.killed = False
        FakePopen.made.append(self)

    def wait(self) -> int:
        return self.status

    def kill(self) -> None:
        self.killed = True


@pytest.fixture
def popen(monkeypatch: pytest.MonkeyPatch) -> type[FakePopen]:
    monkeypatch.setattr(subprocess, "Popen", FakePopen)
    FakePopen.lines, FakePopen.status, FakePopen.started, FakePopen.made = (), 0, [], []
    return FakePopen


def test_streams_lines_to_the_log_and_the_callback(popen: type[FakePopen], tmp_path: Path) -> None:
    popen.lines = ("one", "two")
    seen: list[str] = []
    log = tmp_path / "logs" / "step.log"
    done = run(["tool", "--x"], env={"A": "1"}, log_path=log, on_line=seen.append)
    assert (done.returncode, seen, done.tail) == (0, ["one", "two"], ("one", "two"))
    assert log.read_text(encoding="utf-8") == "$ cd . && tool --x\none\ntwo\n"
    started = popen.started[0]
    assert (started["env"], started["stdin"]) == ({"A": "1"}, subprocess.DEVNULL)
    assert started["stderr"] == subprocess.STDOUT


def test_stdin_text_is_piped(popen: type[FakePopen]) -> None:
    run(["cat"], env={}, stdin_text="secret\n")
    assert popen.started[0]["stdin"] == subprocess.PIPE


def test_a_failure_raises_with_the_relevant_lines(popen: type[FakePopen], tmp_path: Path) -> None:
    popen.lines, popen.status = ("ok", "fatal error: x.h: No such file", "last"), 3
    with pytest.raises(ToolError) as caught:
        run(["cc"], env={}, log_path=tmp_path / "l.log")
    assert caught.value.returncode == 3
    assert caught.value.excerpt[:2] == ("ok", "fatal error: x.h: No such file")
    assert caught.value.log_path == str(tmp_path / "l.log")


def test_no_check_returns_the_status(popen: type[FakePopen]) -> None:
    popen.status = 5
    assert run(["tool"], env={}, check=False).returncode == 5


def test_keep_bounds_the_tail(popen: type[FakePopen]) -> None:
    popen.lines = tuple(str(i) for i in range(1, 11))
    assert run(["seq"], env={}, keep=3).tail == ("8", "9", "10")


def test_an_interrupt_kills_the_command(popen: type[FakePopen]) -> None:
    popen.lines = ("one",)

    def stop(line: str) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run(["tool"], env={}, on_line=stop)
    assert popen.made[0].killed and popen.made[0].stdout.closed


def test_a_missing_program_is_a_host_error(popen: type[FakePopen], tmp_path: Path) -> None:
    log = tmp_path / "l.log"
    with pytest.raises(HostError, match="not found on PATH"):
        run(["missing"], env={}, log_path=log)
    assert log.read_text(encoding="utf-8") == "$ cd . && missing\n"
