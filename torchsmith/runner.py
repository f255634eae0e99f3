"""What a command runner is, without running anything: :class:`Runner` (this machine is
:data:`torchsmith.proc.HOST`; a build backend's executor is one too), the :class:`Completed`
record of a finished command and the line callback. Planning code may import this module."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from subprocess import CompletedProcess

LineCallback = Callable[[str], None]


@dataclass(frozen=True)
class Completed:
    """What a finished command left behind."""

    argv: tuple[str, ...]
    returncode: int
    seconds: float
    log_path: Path | None
    tail: tuple[str, ...]


class Runner(Protocol):
    """Where commands run: this machine (:data:`HOST`), or a build backend's executor
    (:class:`torchsmith.backends.base.Executor` satisfies it). Providers that run commands
    (sources, toolchains, verify, inspect, host probes) take one instead of calling
    :func:`run` themselves, so the same code runs on any backend."""

    def run(
        self,
        argv: Sequence[str | Path],
        *,
        env: Mapping[str, str],
        cwd: Path | None = None,
        log_path: Path | None = None,
        on_line: LineCallback | None = None,
        check: bool = True,
        stdin_text: str | None = None,
    ) -> Completed: ...

    def capture(
        self,
        argv: Sequence[str | Path],
        *,
        env: Mapping[str, str],
        cwd: Path | None = None,
        timeout: float = 30,
        pass_fds: Sequence[int] = (),
    ) -> CompletedProcess[str]:
        """A short query command's output, whatever its status. ``pass_fds``: descriptors it
        inherits (a secret as ``/dev/fd/N``, never on its argv or on disk)."""
        ...
