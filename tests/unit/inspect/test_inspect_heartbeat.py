"""Issue 28 item 9: a piped `inspect` said nothing for 13-17 s while the big libraries of the
official wheel were read; a line comes every BEAT seconds while a library is being read."""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future
from typing import Any

import pytest

from torchsmith.inspect import wheel


def test_a_slow_library_gets_still_reading_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wheel, "BEAT", 0.02)
    job: Future[Any] = Future()
    timer = threading.Timer(0.15, job.set_result, args=("lib",))
    timer.start()
    said: list[str] = []
    result: Any = wheel._result(job, said.append, "of 13 libraries read", [], time.monotonic())
    assert result == "lib"
    timer.join()
    assert len(said) >= 2
    assert all(line.startswith("  still reading: 0 of 13 libraries read, ") for line in said)


def test_without_a_listener_it_just_waits() -> None:
    job: Future[Any] = Future()
    job.set_result("lib")
    result: Any = wheel._result(job, None, "x", [], 0.0)
    assert result == "lib"
