"""Python for a build: an interpreter of the requested version found on the host, or one
provisioned by uv (``uv python install``; uv itself comes from its PyPI wheel) into
torchsmith's cache — and the per-release pins the build environment needs on top of the
source tree's own build requirements.

The build environment itself (one venv per build, the tree's requirements) is made by
:mod:`torchsmith.steps.environment`; it can call :func:`select_build_python` /
:func:`provision_python` for the interpreter and :func:`apply_pins` on its requirement list."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from packaging.version import Version

from torchsmith import proc
from torchsmith.errors import HostError
from torchsmith.host.model import HostFacts
from torchsmith.host.selection import select_python

_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
NUMPY2_FIRST_TORCH = Version("2.3")
# Oldest NumPy with wheels for (and support of) each Python.
NUMPY_FLOOR = {
    "3.11": ("1.23.2", "https://github.com/numpy/numpy/releases/tag/v1.23.2 (wheels for 3.11)"),
    "3.12": ("1.26", "https://numpy.org/doc/stable/release/1.26.0-notes.html (adds 3.12)"),
    "3.13": ("2.1", "https://numpy.org/doc/stable/release/2.1.0-notes.html (supports 3.13)"),
    "3.14": ("2.3.2", "https://github.com/numpy/numpy/releases/tag/v2.3.2 (wheels for 3.14)"),
}
NUMPY2_SOURCE = (
    "https://github.com/pytorch/pytorch/issues/107302 (NumPy 2.0 support; 2.3.0 is the first "
    "release built for it) — same as KB fix numpy-below-2"
)


@dataclass(frozen=True)
class Pin:
    """A requirement the build environment gets on top of the tree's own, and why."""

    requirement: str
    reason: str
    source: str


@dataclass(frozen=True)
class PythonChoice:
    version: str
    how: Literal["found", "uv"]
    path: str | None
    reason: str


def _minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def numpy_pins(torch: str, python: str) -> list[Pin]:
    """numpy<2 for torch < 2.3, and the oldest NumPy that supports this Python."""
    parts: list[str] = []
    why: list[str] = []
    sources: list[str] = []
    floor = NUMPY_FLOOR.get(_minor(python))
    if floor is not None:
        parts.append(f">={floor[0]}")
        why.append(f"Python {_minor(python)} needs NumPy ≥ {floor[0]}")
        sources.append(floor[1])
    if torch != "main" and Version(torch) < NUMPY2_FIRST_TORCH:
        parts.append("<2")
        why.append(f"torch {torch} predates NumPy 2 support (first: 2.3)")
        sources.append(NUMPY2_SOURCE)
    if not parts:
        return []
    return [Pin("numpy" + ",".join(parts), "; ".join(why), "; ".join(sources))]


def requirement_name(req: str) -> str:
    match = _NAME.match(req)
    return match.group(1).lower().replace("_", "-") if match else req


def apply_pins(requirements: Sequence[str], pins: Sequence[Pin]) -> list[str]:
    """The tree's requirements with each pinned name replaced by its pin (others kept)."""
    pinned = {requirement_name(p.requirement): p.requirement for p in pins}
    kept = [r for r in requirements if requirement_name(r) not in pinned]
    return [*kept, *pinned.values()]


def select_build_python(host: HostFacts, version: str) -> PythonChoice:
    """Pure: the host's interpreter of ``version`` ('3.11'), else one uv will provision."""
    found = select_python(host, version)
    if found is not None:
        return PythonChoice(
            found.version, "found", found.path, f"Python {found.version} found at {found.path}"
        )
    have = ", ".join(p.version for p in host.pythons) or "none"
    return PythonChoice(
        version,
        "uv",
        None,
        f"no Python {version} here (found: {have}): `uv python install "
        f"{version}` into torchsmith's cache (no root needed)",
    )


def uv_argv(uv: Path, version: str, install_dir: Path) -> list[str | Path]:
    return [uv, "python", "install", "--install-dir", install_dir, version]


def uv_find_argv(uv: Path, version: str) -> list[str | Path]:
    return [uv, "python", "find", "--python-preference", "only-managed", version]


def provision_python(
    version: str,
    cache_root: Path,
    env: Mapping[str, str],
    pip_python: str,
    log_path: Path | None = None,
) -> Path:
    """Install uv from PyPI into the cache (once), then Python ``version`` with it; return the
    interpreter. uv downloads python-build-standalone builds (GitHub, or the mirror named by
    UV_PYTHON_INSTALL_MIRROR in ``env``)."""
    tools = cache_root / "python" / "uv"
    uv = tools / "bin" / "uv"
    if not uv.is_file():
        proc.run(
            [
                pip_python,
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                "--target",
                tools,
                "uv",
            ],
            env=env,
            log_path=log_path,
        )
    installs = cache_root / "python" / "installs"
    uv_env = {**env, "UV_PYTHON_INSTALL_DIR": str(installs)}
    proc.run(uv_argv(uv, version, installs), env=uv_env, log_path=log_path)
    done = proc.capture(uv_find_argv(uv, version), env=uv_env)
    path = Path(done.stdout.strip().splitlines()[-1]) if done.stdout.strip() else None
    if done.returncode != 0 or path is None or not path.is_file():
        raise HostError(
            f"uv installed Python {version} but cannot find it",
            f"run {uv} python find {version} to see why",
        )
    return path
