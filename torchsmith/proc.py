"""The one subprocess wrapper.

Every external command torchsmith runs goes through :func:`run`: the command is echoed to the
log, its output streamed line by line to a per-step log file (and to an optional callback, for
progress displays), and on failure a :class:`ToolError` carries the *relevant* lines rather than
the last ones. The environment is always passed in explicitly.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import time
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TextIO

from torchsmith.errors import HostError, ToolError
from torchsmith.runner import Completed, LineCallback, Runner

_ERROR_LINE = re.compile(
    r"((?<![-=])\b[Ee]rror\b|fatal error|undefined reference|No such file|CMake Error|"
    r"cannot find|Killed signal|Traceback)",
)
_NOISE = re.compile(r"ninja: build stopped|subcommand failed|CalledProcessError|make: \*\*\*")


def relevant_lines(lines: Sequence[str], limit: int = 12) -> list[str]:
    """The first real error lines of a failed command's output, not its last words."""
    hits = [
        i for i, line in enumerate(lines) if _ERROR_LINE.search(line) and not _NOISE.search(line)
    ]
    if not hits:
        return [line for line in lines if not _NOISE.search(line)][-limit:]
    start = max(0, hits[0] - 2)
    return list(lines[start : start + limit])


def _open_log(log_path: Path | None, argv: Sequence[str], cwd: Path | None) -> TextIO | None:
    if log_path is None:
        return None
    log_path.parent.mkdir(parents=True, exist_ok=True)
    fh = log_path.open("a", encoding="utf-8", errors="replace")
    fh.write(f"$ cd {cwd or '.'} && {shlex.join(argv)}\n")
    fh.flush()
    return fh


def _spawn(
    args: list[str], env: Mapping[str, str], cwd: Path | None, stdin_text: str | None
) -> subprocess.Popen[str]:
    try:
        return subprocess.Popen(
            args,
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            bufsize=1,
        )
    except FileNotFoundError as exc:
        raise HostError(
            f"cannot run {args[0]!r}: not found on PATH",
            f"install {Path(args[0]).name} or put it on PATH",
        ) from exc


def _stream(
    proc: subprocess.Popen[str],
    tail: deque[str],
    fh: TextIO | None,
    on_line: LineCallback | None,
    stdin_text: str | None,
) -> int:
    """Feed ``stdin_text``, stream the output line by line; the exit status. On any error
    (an interrupt too) the command is killed; the pipe and the log are always closed."""
    try:
        if stdin_text is not None and proc.stdin is not None:
            proc.stdin.write(stdin_text)
            proc.stdin.close()
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = raw.rstrip("\n")
            tail.append(line)
            if fh is not None:
                fh.write(raw)
            if on_line is not None:
                on_line(line)
        return proc.wait()
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    finally:
        if proc.stdout is not None:
            proc.stdout.close()
        if fh is not None:
            fh.close()


def run(
    argv: Sequence[str | Path],
    *,
    env: Mapping[str, str],
    cwd: Path | None = None,
    log_path: Path | None = None,
    on_line: LineCallback | None = None,
    check: bool = True,
    keep: int = 4000,
    stdin_text: str | None = None,
) -> Completed:
    """Run ``argv`` with exactly ``env``; stream output to ``log_path`` and ``on_line``."""
    args = [str(a) for a in argv]
    tail: deque[str] = deque(maxlen=keep)
    fh = _open_log(log_path, args, cwd)
    start = time.monotonic()
    try:
        proc = _spawn(args, env, cwd, stdin_text)
    except BaseException:
        if fh is not None:
            fh.close()
        raise
    returncode = _stream(proc, tail, fh, on_line, stdin_text)
    done = Completed(tuple(args), returncode, time.monotonic() - start, log_path, tuple(tail))
    if check and returncode != 0:
        raise ToolError(
            f"{Path(args[0]).name} exited with status {returncode}",
            excerpt=relevant_lines(list(tail)),
            log_path=str(log_path) if log_path else None,
            returncode=returncode,
        )
    return done


def capture(
    argv: Sequence[str | Path],
    *,
    env: Mapping[str, str],
    cwd: Path | None = None,
    timeout: float = 30,
    pass_fds: Sequence[int] = (),
) -> subprocess.CompletedProcess[str]:
    """Run a short query command and return its output (used by host probes). Never raises on
    a non-zero exit; raises ``FileNotFoundError``/``subprocess.TimeoutExpired`` as Python does.
    ``pass_fds``: descriptors the command inherits (a secret as ``/dev/fd/N``, never on disk).
    """
    return subprocess.run(
        [str(a) for a in argv],
        env=dict(env),
        cwd=cwd,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=timeout,
        check=False,
        pass_fds=tuple(pass_fds),
    )


class _HostRunner:
    """Commands on this machine, through :func:`run` and :func:`capture`."""

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
        return run(
            argv,
            env=env,
            cwd=cwd,
            log_path=log_path,
            on_line=on_line,
            check=check,
            stdin_text=stdin_text,
        )

    def capture(
        self,
        argv: Sequence[str | Path],
        *,
        env: Mapping[str, str],
        cwd: Path | None = None,
        timeout: float = 30,
        pass_fds: Sequence[int] = (),
    ) -> subprocess.CompletedProcess[str]:
        return capture(argv, env=env, cwd=cwd, timeout=timeout, pass_fds=pass_fds)


__all__ = ["HOST", "Completed", "LineCallback", "Runner", "capture", "relevant_lines", "run"]

HOST: Runner = _HostRunner()
"""This machine."""
