"""The one executor interface every backend implements.

Steps talk to an :class:`Executor` only: run a command, copy files in and out, read the base
environment, ask for free disk. They never branch on which backend they run on. An executor is a
context manager that always cleans up what it started, however the build ends.
"""

from __future__ import annotations

import subprocess
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType

from torchsmith.proc import Completed, LineCallback


class Executor(ABC):
    """Where a build's commands run (this machine, a container, ...). An executor is a
    :class:`torchsmith.proc.Runner`: the providers the steps call run their commands
    through it."""

    name: str = "abstract"

    def __enter__(self) -> Executor:
        self.open()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def open(self) -> None:  # noqa: B027 - optional hook
        """Start whatever the backend needs (a container, a mount); the default does nothing."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Undo :meth:`open`; called on every exit, also after errors and Ctrl-C."""

    @abstractmethod
    def environment(self) -> dict[str, str]:
        """The base environment commands start from (before the plan's variables)."""

    @abstractmethod
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
    ) -> Completed:
        """Run ``argv`` with exactly ``env``, teeing its output to ``log_path``."""

    @abstractmethod
    def capture(
        self,
        argv: Sequence[str | Path],
        *,
        env: Mapping[str, str],
        cwd: Path | None = None,
        timeout: float = 30,
        pass_fds: Sequence[int] = (),
    ) -> subprocess.CompletedProcess[str]:
        """Run a short query command where the build runs; its output, whatever its status."""

    @abstractmethod
    def copy_in(self, src: Path, dest: Path) -> None:
        """Copy a file or tree from this machine to ``dest`` where the build runs (atomic)."""

    @abstractmethod
    def copy_out(self, src: Path, dest: Path) -> None:
        """Copy a file or tree from where the build runs to ``dest`` on this machine."""

    @abstractmethod
    def which(self, program: str, env: Mapping[str, str]) -> str | None:
        """The full path of ``program`` on the build's PATH, or None."""

    @abstractmethod
    def disk_free_gib(self, path: Path) -> float:
        """Free space where ``path`` (or its nearest existing parent) lives."""
