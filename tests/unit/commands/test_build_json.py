"""Issue 28 item 9: under ``build --json`` the progress goes to stderr, so stdout is the one
JSON document."""

from __future__ import annotations

import argparse

from torchsmith.commands.build import progress_console
from torchsmith.console import err, out


def test_progress_goes_to_stderr_under_json() -> None:
    assert progress_console(argparse.Namespace(json=True)) is err
    assert err.stderr


def test_progress_stays_on_stdout_without_json() -> None:
    assert progress_console(argparse.Namespace(json=False)) is out
