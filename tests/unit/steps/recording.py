"""An executor that runs nothing: it records every command a step asks for, and plays the one
side effect later steps read (the frontend leaves a wheel in the directory it was given)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from torchsmith.backends.base import Executor
from torchsmith.proc import Completed, LineCallback

EMPTY_ZIP = b"PK\x05\x06" + bytes(18)
"""A valid zip with no members (the repair step reads the wheel it is given)."""
PROGRAMS = {"gcc-12", "g++-12", "cmake", "ninja", "ccache", "python3.11", "python3"}


class RecordingExecutor(Executor):
    name = "recording"

    def __init__(self) -> None:
        self.ran: list[list[str]] = []
        self.queried: list[list[str]] = []

    def environment(self) -> dict[str, str]:
        return {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}

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
        args = [str(a) for a in argv]
        self.ran.append(args)
        for flag in ("--dist-dir", "-w"):  # the package step's frontends
            if flag in args and "wheel" in " ".join(args):
                out = Path(args[args.index(flag) + 1])
                out.mkdir(parents=True, exist_ok=True)
                (out / "torch-2.5.1+cpu-cp311-cp311-linux_x86_64.whl").write_bytes(EMPTY_ZIP)
        return Completed(tuple(args), 0, 0.0, log_path, (f"{Path(args[0]).name} version 1.0",))

    def capture(
        self,
        argv: Sequence[str | Path],
        *,
        env: Mapping[str, str],
        cwd: Path | None = None,
        timeout: float = 30,
    ) -> subprocess.CompletedProcess[str]:
        args = [str(a) for a in argv]
        self.queried.append(args)
        if "sys.executable" in " ".join(args):  # preflight asks the interpreter what it is
            return subprocess.CompletedProcess(args, 0, f"{args[0]}\n3.11\n", "")
        return subprocess.CompletedProcess(args, 0, f"{Path(args[0]).name} version 1.0\n", "")

    def copy_in(self, src: Path, dest: Path) -> None:
        shutil.copytree(src, dest, symlinks=True)

    def copy_out(self, src: Path, dest: Path) -> None:
        shutil.copytree(src, dest, symlinks=True)

    def which(self, program: str, env: Mapping[str, str]) -> str | None:
        return f"/usr/bin/{program}" if program in PROGRAMS else None

    def disk_free_gib(self, path: Path) -> float:
        return 500.0

    def programs_run(self) -> list[str]:
        """The first word of each command (``--version`` probes left out)."""
        return [Path(a[0]).name for a in self.ran if "--version" not in a]
