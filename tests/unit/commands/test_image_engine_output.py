"""`torchsmith image` prints the engine's output lines (security review f1b4bec N17, related):
they were printed with Rich markup on and terminal escapes unfiltered — an image's build step
could set the terminal title or write the clipboard (OSC 0, OSC 52) or hide text in markup."""

from __future__ import annotations

import pytest

from torchsmith.commands.image import _engine_line


def test_an_engine_line_is_printed_without_escapes_or_markup(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _engine_line("STEP 2/9: RUN x\x1b]0;OWNED-TITLE\x07\x1b]52;c;ZWNobyBwd25lZA==\x1b\\ [bold]y[/]")
    printed = capsys.readouterr().out
    assert "\x1b" not in printed and "\x07" not in printed
    assert "STEP 2/9: RUN x" in printed and "[bold]y[/]" in printed  # markup shown as text
