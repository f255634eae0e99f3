"""The local backend: commands run on this machine through :mod:`torchsmith.proc`."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from torchsmith import proc
from torchsmith.backends.base import Executor
from torchsmith.proc import Completed, LineCallback


def _nearest_existing(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path("/")


def atomic_copy(src: Path, dest: Path) -> None:
    """Copy ``src`` (file or tree, times kept) to ``dest`` via a temporary sibling + rename, so
    ``dest`` is either absent or complete, even after SIGKILL."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.partial-{os.getpid()}")
    if tmp.is_dir():
        shutil.rmtree(tmp)
    if src.is_dir():
        shutil.copytree(src, tmp, symlinks=True)
    else:
        shutil.copy2(src, tmp)
    tmp.replace(dest)


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
    ) -> Completed:
        return proc.run(argv, env=env, cwd=cwd, log_path=log_path, on_line=on_line, check=check)

    def copy_in(self, src: Path, dest: Path) -> None:
        atomic_copy(src, dest)

    def copy_out(self, src: Path, dest: Path) -> None:
        atomic_copy(src, dest)

    def which(self, program: str, env: Mapping[str, str]) -> str | None:
        return shutil.which(program, path=env.get("PATH", ""))

    def disk_free_gib(self, path: Path) -> float:
        return shutil.disk_usage(_nearest_existing(path)).free / 2**30
