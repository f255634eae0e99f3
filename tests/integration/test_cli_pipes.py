"""The CLI at the end of a real pipe: a reader that stops early (`torchsmith plan | head -1`)
is not an error (exit 0, nothing on stderr)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HOST = Path(__file__).resolve().parents[1] / "fixtures" / "plan" / "host-ci.json"


def test_plan_into_a_closed_pipe_exits_0_quietly() -> None:
    argv = [sys.executable, "-m", "torchsmith", "plan", "--torch", "2.5.1", "--cpu"]
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line, as `head -1` is after it
    try:
        done = subprocess.run(
            [*argv, "--host-facts", str(HOST)],
            stdout=write,
            stderr=subprocess.PIPE,
            timeout=60,
            check=False,
        )
    finally:
        os.close(write)
    assert (done.returncode, done.stderr.decode()) == (0, "")
