"""Unit tier: no subprocess may run. Anything that tries fails the test loudly."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest


class SubprocessInUnitTestError(AssertionError):
    pass


def _forbidden(*args: Any, **kwargs: Any) -> Any:
    raise SubprocessInUnitTestError(f"unit tests must not start processes: {args[:1]!r}")


@pytest.fixture(autouse=True)
def _no_subprocess(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(subprocess, "Popen", _forbidden)
    monkeypatch.setattr(subprocess, "run", _forbidden)
    monkeypatch.setattr(subprocess, "check_output", _forbidden)
    monkeypatch.setattr(subprocess, "call", _forbidden)
    monkeypatch.setattr("os.system", _forbidden)
