"""The local backend: commands run on this machine through :mod:`torchsmith.proc`."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from torchsmith import atomic, proc
from torchsmith.backends.base import Executor
from torchsmith.proc import Completed, LineCallback


def _nearest_existing(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path("/")


def atomic_copy(src: Path, dest: Path) -> None:
    """Copy ``src`` (file or tree, times kept) to ``dest`` via a new temporary sibling
    (:mod:`torchsmith.atomic`, unique to this call) + rename, so ``dest`` is either absent or
    complete, even after SIGKILL. Temporaries of dead runs are removed; a live run's stay."""
    if not src.is_dir():
        atomic.copy_file(src, dest)
        shutil.copystat(src, dest)
        return
    for stale in atomic.stale_partials(dest):
        if stale.is_dir() and not stale.is_symlink():
            shutil.rmtree(stale)
    tmp = atomic.temp_dir(dest)
    try:
        shutil.copytree(src, tmp, symlinks=True, dirs_exist_ok=True)
        tmp.replace(dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


class LocalExecutor(Executor):
    """Runs every command directly on this machine."""

    name = "local"

    def __init__(self, base_env: Mapping[str, str]) -> None:
        self._base_env = dict(base_env)

    def environment(self) -> dict[str, str]:
        return dict(self._base_env)

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
        return proc.HOST.run(
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
        return proc.HOST.capture(argv, env=env, cwd=cwd, timeout=timeout, pass_fds=pass_fds)

    def copy_in(self, src: Path, dest: Path) -> None:
        atomic_copy(src, dest)

    def copy_out(self, src: Path, dest: Path) -> None:
        atomic_copy(src, dest)

    def which(self, program: str, env: Mapping[str, str]) -> str | None:
        return shutil.which(program, path=env.get("PATH", ""))

    def disk_free_gib(self, path: Path) -> float:
        return shutil.disk_usage(_nearest_existing(path)).free / 2**30
