"""Output helpers shared by the commands: rich for people, stable JSON for machines."""

from __future__ import annotations

import io
import json
import os
import sys
from typing import Any

from rich.console import Console


class _Console(Console):
    def on_broken_pipe(self) -> None:
        """rich exits with status 1 here; let ``cli.main`` decide (a reader that stops early,
        like ``| head -1``, is not an error)."""
        self.quiet = True
        raise BrokenPipeError


def reader_gone() -> int:
    """stdout's reader has gone: point stdout at /dev/null so the final flush stays quiet, and
    exit 0 (documented in README's exit codes)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, io.UnsupportedOperation):
        pass
    return 0


out = _Console(highlight=False, soft_wrap=True)
err = _Console(stderr=True, highlight=False, soft_wrap=True)


def print_json(data: Any) -> None:
    """Write ``data`` as indented, key-sorted JSON to stdout (the stable machine format)."""
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")
