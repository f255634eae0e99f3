"""The thin layer between host probes and the runner they are given: run a short query command,
turn every way it can fail into :class:`ProbeError` (which probes turn into warnings), and run
many queries at once."""

from __future__ import annotations

import os
import shlex
import subprocess
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any, Generic, TypeVar, cast

from torchsmith.errors import HostError
from torchsmith.host.version_cache import CachingRunner
from torchsmith.runner import Runner

T = TypeVar("T")
R = TypeVar("R")

DEFAULT_TIMEOUT = 10.0


class ProbeError(HostError):
    """A probe command could not run, timed out or failed; the message becomes a warning."""


def query(
    argv: Sequence[str | Path],
    env: Mapping[str, str],
    runner: Runner,
    timeout: float = DEFAULT_TIMEOUT,
    *,
    cacheable: bool = False,
    also: Sequence[Path] = (),
) -> str:
    """stdout followed by stderr of ``argv``; :class:`ProbeError` unless it exits with 0.
    ``cacheable``: the answer comes from the executable (and the files ``also``) alone — a
    version it prints —, so a :class:`CachingRunner` may give it from its cache."""
    args = [str(a) for a in argv]
    if cacheable and isinstance(runner, CachingRunner):
        exe = Path(args[0]) if "/" in args[0] else which(args[0], env)
        if exe is not None:
            ask = partial(_query, args, env, runner.inner, timeout)
            return runner.cache.answer(args, exe, also, env, ask)
    return _query(args, env, runner, timeout)


def _query(args: list[str], env: Mapping[str, str], runner: Runner, timeout: float) -> str:
    try:
        done = runner.capture(args, env=env, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise ProbeError(f"`{shlex.join(args)}` gave no answer within {timeout:g} s") from exc
    except OSError as exc:
        raise ProbeError(f"cannot run {args[0]}: {exc.strerror or exc}") from exc
    text = done.stdout + done.stderr
    if done.returncode != 0:
        first = next((line.strip() for line in text.splitlines() if line.strip()), "no output")
        raise ProbeError(f"`{shlex.join(args)}` exited with status {done.returncode}: {first}")
    return text


class Task(Generic[R]):
    """``func(*args)`` in a thread of its own (``now``: here, before returning); :meth:`result`
    waits for it and raises what it raised. Plain threads: ``concurrent.futures`` (and the
    ``logging`` it imports) cost every probing command ~3 ms of start-up."""

    def __init__(self, func: Callable[..., R], *args: Any, now: bool = False) -> None:
        self._value: R | None = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        if now:
            self._run(func, args)
            return
        self._thread = threading.Thread(target=self._run, args=(func, args), daemon=True)
        self._thread.start()

    def _run(self, func: Callable[..., R], args: tuple[Any, ...]) -> None:
        try:
            self._value = func(*args)
        except BaseException as exc:  # handed to the caller of result(), as a future does
            self._error = exc

    def result(self) -> R:
        if self._thread is not None:
            self._thread.join()
        if self._error is not None:
            raise self._error
        return cast(R, self._value)


def parallel(func: Callable[[T], R], items: Iterable[T], workers: int = 16) -> list[R]:
    """``[func(x) for x in items]``, run in up to ``workers`` threads (probes mostly wait on
    child processes); the first item's exception (in order) is raised once all are done."""
    todo = list(items)
    if len(todo) <= 1:
        return [func(x) for x in todo]
    left = iter(range(len(todo)))
    lock = threading.Lock()
    done: list[Task[R] | None] = [None] * len(todo)

    def work() -> None:
        while True:
            with lock:
                index = next(left, None)
            if index is None:
                return
            done[index] = Task(func, todo[index], now=True)

    for worker in [Task(work) for _ in range(min(workers, len(todo)))]:
        worker.result()
    return [cast(Task[R], task).result() for task in done]


def entry_names(folder: Path) -> list[str]:
    """The names in ``folder`` (no Path per entry: /usr/bin holds a thousand); OSError as is."""
    with os.scandir(folder) as entries:
        return [entry.name for entry in entries]


def which(name: str, env: Mapping[str, str]) -> Path | None:
    """Like ``shutil.which`` but on ``env['PATH']``, never the process environment. (Strings
    until found: the compiler probe asks for 29 names in every PATH folder.)"""
    for folder in env.get("PATH", "").split(":"):
        if not folder:
            continue
        candidate = os.path.join(folder, name)  # noqa: PTH118
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):  # noqa: PTH113
            return Path(candidate)
    return None
