"""The smoke run's progress comes from the real process as it prints (proc.run's on_line): one
line per phase, one per smoke test (here in the test interpreter, with or without torch)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from torchsmith.proc import HOST
from torchsmith.verify.smoke import SmokeOptions, run_smoke


def test_smoke_phases_and_results_are_said(tmp_path: Path) -> None:
    said: list[str] = []
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    opts = SmokeOptions(python=sys.executable, workdir=tmp_path, runner=HOST, mode="interpreter")
    checks = run_smoke(None, opts, env, said.append)
    assert said[0] == f"running the smoke tests in {sys.executable}"
    assert len(said) == 1 + len(checks) and checks[0].name == "import"
    assert said[1].startswith("  import: ok (" if checks[0].ok else "  import: FAILED (")
