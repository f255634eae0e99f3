"""A fixture for tests whose compiler cache makes a private directory (cache/private.py): it
goes into a short directory of the test's own, removed afterwards, not into /tmp."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(name="private_base")
def private_base_fixture(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    base = Path(tempfile.mkdtemp(prefix="ts-t-", dir="/tmp"))
    monkeypatch.setattr("torchsmith.cache.private.BASE", base)
    yield base
    shutil.rmtree(base, ignore_errors=True)
