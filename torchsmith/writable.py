"""One up-front check for every output or cache directory the user names (``--output-dir``,
``--cache-dir``, ``-o``, a ``conda-channel:`` target, the cache root): made when missing, a file
written in it and removed, before any work starts — not a traceback (exit 70) at the step that
first writes there (trial C11, E14, I21, I22, P28, P29, S20)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from torchsmith.errors import HostError, TorchsmithError, UsageError


def writable_dir(
    path: Path,
    what: str,
    fix: str,
    *,
    mode: int = 0o777,
    error: type[TorchsmithError] = UsageError,
    keep: bool = True,
) -> Path:
    """``path`` as a directory this user can write, or ``error`` naming ``what`` (the flag or
    key that gave it), why it cannot be used, and ``fix``. With ``keep=False`` the directories
    the check had to make are removed again: a build that fails later leaves no empty output
    directory behind (it is made when there is something to publish)."""
    made = missing_dirs(path)
    try:
        path.mkdir(mode=mode, parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise error(f"{what} {path}: {why_not_writable(path, exc)}", fix) from None
    finally:
        if not keep:
            remove_made(made)
    return path


def missing_dirs(path: Path) -> list[Path]:
    """``path`` and its parents that do not exist yet, deepest first."""
    return [p for p in (path, *path.parents) if not p.exists() and not p.is_symlink()]


def remove_made(made: list[Path]) -> None:
    """Remove the (still empty) directories a check made, deepest first."""
    for directory in made:
        try:
            directory.rmdir()
        except OSError:
            return


def why_not_writable(path: Path, exc: OSError) -> str:
    """The reason in words: a file where a directory is wanted, or the system's own."""
    for part in (path, *path.parents):
        if part.exists() and not part.is_dir():
            return f"{part} is a file, not a directory"
        if part.exists():
            break
    reason = exc.strerror or str(exc)
    return f"cannot make or write a directory there ({reason})"


def check_build_paths(output_dir: str, cache_dir: str | None, cache_root: Path) -> None:
    """Every directory the build writes that the user named, checked once before any work
    (``--output-dir /proc/nope`` passed preflight and failed at publish, trial S20;
    ``--cache-dir /proc/nope`` was an internal error after the fetch, C11)."""
    writable_dir(
        cache_root,
        "the cache root (--cache-root or TORCHSMITH_CACHE_ROOT)",
        "pass --cache-root DIR: a directory you can write, on a disk with room",
        mode=0o700,
        error=HostError,  # as preflight and `source fetch` say it (exit 7)
    )
    writable_dir(
        Path(output_dir).expanduser().resolve(),
        "the output directory (--output-dir / output_dir)",
        "give --output-dir a directory you can write (default: dist)",
        keep=False,
    )
    if cache_dir is not None:
        writable_dir(
            Path(cache_dir).expanduser().resolve(),
            "the compiler cache directory (--cache-dir / cache.dir)",
            "give --cache-dir a directory you can write, or leave it out (under the cache root)",
            keep=False,
        )
