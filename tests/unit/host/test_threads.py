"""The probe's threads (host/_run.py ``Task`` and ``parallel``, plain threads instead of
``concurrent.futures``): results in order, a failure handed to whoever asks for the result,
at most ``workers`` threads at once."""

from __future__ import annotations

import threading
import time

import pytest

from torchsmith.host._run import Task, parallel


def test_parallel_keeps_the_order_and_bounds_the_threads() -> None:
    running, most = 0, 0
    lock = threading.Lock()

    def square(n: int) -> int:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(0.01)
        with lock:
            running -= 1
        return n * n

    assert parallel(square, range(12), workers=3) == [n * n for n in range(12)]
    assert 1 < most <= 3
    assert parallel(square, [7]) == [49] and parallel(square, []) == []


def test_parallel_raises_the_first_failure_in_order_once_all_ran() -> None:
    ran: list[int] = []

    def check(n: int) -> int:
        ran.append(n)
        if n in (2, 5):
            raise ValueError(f"item {n}")
        return n

    with pytest.raises(ValueError, match="item 2"):
        parallel(check, range(8), workers=4)
    assert sorted(ran) == list(range(8))


def test_a_task_hands_over_its_result_or_its_exception() -> None:
    assert Task(sum, [1, 2, 3]).result() == 6
    here: list[str] = []
    Task(lambda: here.append(threading.current_thread().name), now=True)
    assert here == [threading.current_thread().name]  # now=True: run in the caller
    failed = Task(int, "not a number")
    with pytest.raises(ValueError, match="invalid literal"):
        failed.result()
