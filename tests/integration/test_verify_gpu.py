"""verify of the torch installed for this interpreter, with GPU smoke tests (device machine).

Recorded result of the same check on the H100 machine:
tests/fixtures/inspect/verify-2.11.0-cu130.json."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.resources import require, require_module
from torchsmith.proc import HOST
from torchsmith.verify import SmokeOptions, load_plan, verify_artifact

PLANS = Path(__file__).resolve().parents[1] / "fixtures" / "inspect" / "plans"


@pytest.mark.gpu
@pytest.mark.slow
def test_installed_torch_passes_gpu_smoke(tmp_path: Path) -> None:
    torch = require_module("torch", "pip install a CUDA torch into this interpreter")
    require(torch.cuda.is_available(), "a visible CUDA GPU", "run with -m gpu on the GPU machine")
    plan = load_plan(PLANS / "plan-2.11.0-cu130.json")
    smoke = SmokeOptions(
        python=sys.executable, workdir=tmp_path, runner=HOST, mode="venv-system", gpu="yes"
    )
    verdict = verify_artifact(
        None, plan, dict(os.environ), runner=HOST, python=sys.executable, smoke=smoke
    )
    names = {c.name for c in verdict.smoke if c.ok}
    assert {"cuda matmul", "cudnn conv", "nccl init", "cpp_extension jit"} <= names
    assert [c.name for c in verdict.smoke if c.ok is False] == []
