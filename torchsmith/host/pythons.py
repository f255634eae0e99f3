"""Python interpreters: python3 / python3.X on PATH, pyenv's versions, /usr/bin and
/usr/local/bin; pyenv's shims folder is skipped (they fail for versions not selected), and any
other interpreter that is a script (a shim elsewhere on PATH) is recorded as the executable it
runs, asked of itself. A venv's interpreter is kept apart from the base one it links to: it is
a different environment."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from packaging.version import InvalidVersion, Version

from torchsmith.host import parse
from torchsmith.host._run import ProbeError, entry_names, parallel, query
from torchsmith.host.model import PythonInfo
from torchsmith.runner import Runner

SYSTEM_DIRS = (Path("/usr/bin"), Path("/usr/local/bin"))
_NAME = re.compile(r"^python3(\.\d+t?)?$")  # python3.13t: a free-threaded build (PEP 703)


def version_key(text: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        return Version("0")


def _pyenv_root(env: Mapping[str, str]) -> Path | None:
    if env.get("PYENV_ROOT"):
        return Path(env["PYENV_ROOT"])
    return Path(env["HOME"]) / ".pyenv" if env.get("HOME") else None


def _pyenv_pythons(env: Mapping[str, str]) -> list[Path]:
    root = _pyenv_root(env)
    if root is None:
        return []
    return sorted((root / "versions").glob("*/bin/python3"), key=lambda p: version_key(p.parts[-3]))


def _dir_pythons(folders: Iterable[Path]) -> list[Path]:
    found = []
    for folder in folders:
        try:  # names first: a Path for each of /usr/bin's thousand entries costs start-up
            names = sorted(entry_names(folder))
        except OSError:
            continue
        found += [folder / name for name in names if _NAME.match(name)]
    return found


def _identity(path: Path) -> tuple[str, str]:
    """(real interpreter, venv folder or '') — what makes two paths the same Python."""
    venv = path.parent.parent
    return os.path.realpath(path), str(venv) if (venv / "pyvenv.cfg").is_file() else ""


def python_candidates(
    env: Mapping[str, str], system_dirs: Iterable[Path] = SYSTEM_DIRS
) -> list[Path]:
    """Interpreters in every PATH folder (in order), pyenv's versions, then ``system_dirs``."""
    path_dirs = list(dict.fromkeys(Path(d) for d in env.get("PATH", "").split(":") if d))
    others = [d for d in system_dirs if d not in path_dirs]  # a folder on PATH: read once
    paths = [*_dir_pythons(path_dirs), *_pyenv_pythons(env), *_dir_pythons(others)]
    unique: dict[tuple[str, str], Path] = {}
    for path in paths:
        if "shims" in path.parts or not os.access(path, os.X_OK):
            continue
        unique.setdefault(_identity(path), path)
    return list(unique.values())


_EXECUTABLE = "import sys; print(sys.executable)"


def _is_script(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return fh.read(2) == b"#!"
    except OSError:
        return False


def real_executable(path: Path, env: Mapping[str, str], runner: Runner) -> Path:
    """``path`` itself, or for a script (a pyenv shim) the interpreter it runs, as that
    interpreter reports it (``sys.executable``); :class:`ProbeError` when it cannot run."""
    if not _is_script(path):
        return path
    lines = query([path, "-c", _EXECUTABLE], env, runner).strip().splitlines()
    return Path(lines[-1].strip()) if lines and lines[-1].strip().startswith("/") else path


def libpythons(path: Path) -> list[Path]:
    """The shared ``libpython`` of the interpreter's prefix (``PREFIX/lib``), where an
    ``--enable-shared`` build (pyenv's, conda's) has its version compiled in."""
    return sorted((Path(os.path.realpath(path)).parent.parent / "lib").glob("libpython3*.so*"))


def probe_python(path: Path, env: Mapping[str, str], runner: Runner) -> PythonInfo:
    text = query([path, "--version"], env, runner, cacheable=True, also=libpythons(path))
    version = parse.parse_python_version(text)
    if version is None:
        raise ProbeError(f"{path}: cannot read a version from {text.strip()[:80]!r}")
    return PythonInfo(path=str(real_executable(path, env, runner)), version=version)


def _attempt(path: Path, env: Mapping[str, str], runner: Runner) -> PythonInfo | str:
    try:
        return probe_python(path, env, runner)
    except ProbeError as exc:
        return exc.message


def probe_pythons(
    env: Mapping[str, str], runner: Runner, system_dirs: Iterable[Path] = SYSTEM_DIRS
) -> tuple[list[PythonInfo], list[str]]:
    found_here = python_candidates(env, system_dirs)
    results = parallel(lambda p: _attempt(p, env, runner), found_here)
    found: dict[tuple[str, str], PythonInfo] = {}
    for info in (r for r in results if isinstance(r, PythonInfo)):
        found.setdefault(_identity(Path(info.path)), info)  # a shim and what it runs: one
    return list(found.values()), [r for r in results if isinstance(r, str)]
