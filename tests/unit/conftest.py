"""Unit tier: no subprocess may run. Anything that tries fails the test loudly. A command that
probes the host does not read or write the user's version cache (``host-versions.json``)."""

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


@pytest.fixture(autouse=True)
def _no_user_version_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """A live probe in a unit test answers from nothing the user's machine left behind."""
    monkeypatch.setattr("torchsmith.host.load.versions_file", lambda env: None)
