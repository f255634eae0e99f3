"""`torchsmith source`: text taken from a tree or bundle reaches the terminal without escape
sequences (a planted OSC title or clipboard write is printed as plain text)."""

from __future__ import annotations

import argparse

import pytest
from rich.console import Console

from torchsmith.commands import source


def test_progress_lines_lose_terminal_escapes(monkeypatch: pytest.MonkeyPatch) -> None:
    console = Console(record=True, force_terminal=False, width=200)
    monkeypatch.setattr(source, "out", console)
    say = source._progress(argparse.Namespace(quiet=False, json=False))
    assert say is not None
    say("extracting \x1b]0;OWNED\x07source/\x1b]52;c;ZWNobyBoaQ==\x1b\\setup.py")
    text = console.export_text()
    assert "\x1b" not in text and "\x07" not in text
    assert "extracting source/setup.py" in text
