"""SIGTERM unwinds like Ctrl-C (security review f1b4bec N11: a CI cancel or ``timeout`` left
a credential file behind, because no ``finally`` ran): the command's cleanup runs, the exit is
130 with "stopped by SIGTERM", and the previous handler is back afterwards."""

from __future__ import annotations

import argparse
import os
import signal

import pytest

from torchsmith import cli


def test_sigterm_runs_the_commands_cleanup(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cleaned: list[str] = []

    def handler(args: argparse.Namespace) -> int:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            return 0
        finally:
            cleaned.append("private files removed")

    def parser(only: str | None = None) -> argparse.ArgumentParser:
        made = argparse.ArgumentParser()
        made.add_argument("--debug", action="store_true")
        made.set_defaults(handler=handler)
        return made

    before = signal.getsignal(signal.SIGTERM)
    monkeypatch.setattr(cli, "build_parser", parser)
    assert cli.main([]) == 130
    assert cleaned == ["private files removed"]
    assert "stopped by SIGTERM" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGTERM) == before
