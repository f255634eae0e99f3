"""A cuobjdump that cannot run or fails is an error, not "lists 0" (round-3 trial N06, N07)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from torchsmith import proc
from torchsmith.errors import InspectError
from torchsmith.inspect.crosscheck import run_cuobjdump


def test_a_missing_cuobjdump_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(argv: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        raise FileNotFoundError(2, "No such file or directory")

    monkeypatch.setattr(proc, "capture", missing)
    with pytest.raises(InspectError, match="cannot be run: No such file") as err:
        run_cuobjdump("/nonexistent/cuobjdump", Path("lib.so"), {}, runner=proc.HOST)
    assert "--cuobjdump none" in err.value.hint


def test_a_failing_cuobjdump_is_not_an_empty_listing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        proc, "capture", lambda argv, **kw: subprocess.CompletedProcess(argv, 1, "", "")
    )
    with pytest.raises(InspectError, match=r"failed on torch/lib/x.so \(exit status 1\)"):
        run_cuobjdump("/bin/false", Path("lib.so"), {}, "torch/lib/x.so", runner=proc.HOST)
